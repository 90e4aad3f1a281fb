package a2aserver_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// endTurnRun runs one turn on a sandbox whose first failEnds EndTurn calls
// fail, and returns the task id once the metrics show the vessel is done
// with EndTurn (settled), with the metrics.
func endTurnRun(t *testing.T, failEnds int, settled string) (h *harness, taskID, metrics string) {
	t.Helper()
	h, reg := metricsHarness(t)
	h.sandbox.mu.Lock()
	h.sandbox.failEnds = failEnds
	h.sandbox.mu.Unlock()
	res, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish? #script:tool")})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("want a task, got %T", res)
	}
	// EndTurn runs after the turn's last event: wait for its attempts.
	settled = strings.ReplaceAll(settled, "AGENT", h.agentID)
	for deadline := time.Now().Add(20 * time.Second); ; {
		metrics = scrape(t, reg)
		if strings.Contains(metrics, settled) {
			return h, string(task.ID), metrics
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s:\n%s", settled, grepLines(metrics, "vessel_turn_end"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 22 (5): a sandbox that fails EndTurn the first times (busy under
// contention) still gets the turn's workspace ended; each retry is counted.
func TestEndTurnRetriedUntilTheSandboxEndsIt(t *testing.T) {
	h, id, metrics := endTurnRun(t, 2, `vessel_turn_end_retries_total{agent="AGENT"} 2`)
	// The retries metric moves before the third attempt: wait for it.
	for deadline := time.Now().Add(10 * time.Second); h.logs.FilterMessage("ended the turn's workspace after retries").Len() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no log line for the workspace ended after retries")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ended, _, _ := h.sandbox.stats()
	if !slices.Contains(ended, id) {
		t.Fatalf("the turn %s was not ended on the sandbox (ended %v)", id, ended)
	}
	if !strings.Contains(metrics, `vessel_turn_end_retries_total{agent="`+h.agentID+`"} 2`) {
		t.Fatalf("want 2 retries counted:\n%s", grepLines(metrics, "vessel_turn_end"))
	}
	if strings.Contains(metrics, `vessel_turn_end_failures_total{agent="`+h.agentID+`"} 1`) {
		t.Fatalf("a turn ended after retries counted as a failure:\n%s", grepLines(metrics, "vessel_turn_end"))
	}
}

// A sandbox that keeps failing: the vessel gives up after its attempts,
// counts the failure and logs the turn whose workspace is left.
func TestEndTurnGivenUpIsCountedAndLogged(t *testing.T) {
	h, id, metrics := endTurnRun(t, 100, `vessel_turn_end_failures_total{agent="AGENT"} 1`)
	if ended, _, _ := h.sandbox.stats(); slices.Contains(ended, id) {
		t.Fatal("a failing sandbox ended the turn")
	}
	if !strings.Contains(metrics, `vessel_turn_end_failures_total{agent="`+h.agentID+`"} 1`) ||
		!strings.Contains(metrics, `vessel_turn_end_retries_total{agent="`+h.agentID+`"} 4`) {
		t.Fatalf("want 4 retries and 1 failure:\n%s", grepLines(metrics, "vessel_turn_end"))
	}
	lines := h.logs.FilterMessageSnippet("could not end the turn's workspace").All()
	if len(lines) != 1 || lines[0].ContextMap()["task"] != id {
		t.Fatalf("want one warning naming task %s, got %v", id, lines)
	}
	h.sandbox.mu.Lock()
	calls := h.sandbox.endCalls
	h.sandbox.mu.Unlock()
	if calls != 5 {
		t.Fatalf("%d EndTurn attempts, want 5", calls)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.Lines(s) {
		if strings.Contains(l, sub) {
			out = append(out, strings.TrimRight(l, "\n"))
		}
	}
	return strings.Join(out, "\n")
}
