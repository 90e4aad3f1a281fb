package a2aserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/runtime/metricdoc"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

// scrape reads the registry through the real Prometheus handler.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	hs := httptest.NewServer(telemetry.Handler(reg))
	defer hs.Close()
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// metricsHarness is a harness whose server reports into a registry of the
// test's own.
func metricsHarness(t *testing.T) (*harness, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	met := a2aserver.NewMetrics(reg)
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.Metrics = met })
	return h, reg
}

// TestTurnLogLinesCarryTaskContextAgentOwner: every vessel log line about
// a turn names its task, context, agent and owner.
func TestTurnLogLinesCarryTaskContextAgentOwner(t *testing.T) {
	h, _ := metricsHarness(t)
	msg := textMsg("Which birds hunt fish? #script:tool")
	msg.ContextID = "conv-logs"
	evs, err := h.stream(as(h.keyApp1, "alice"), h.agentID, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := evs[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first frame %T", evs[0])
	}
	turnLines := 0
	for _, e := range h.logs.All() {
		m := e.ContextMap()
		if _, about := m["task"]; !about {
			continue
		}
		turnLines++
		if m["task"] != string(task.ID) || m["context"] != "conv-logs" || m["agent"] != h.agentID || m["owner"] != "app1/alice" {
			t.Errorf("line %q: task/context/agent/owner = %v/%v/%v/%v", e.Message, m["task"], m["context"], m["agent"], m["owner"])
		}
	}
	if h.logs.FilterMessage("turn").Len() != 1 || turnLines == 0 {
		t.Fatalf("want the turn's summary line; saw %d turn lines", turnLines)
	}
	if got := h.sandbox.taskIDs(); len(got) == 0 || got[0] != string(task.ID) {
		t.Errorf("sandbox received task ids %v in metadata, want %s", got, task.ID)
	}
}

// TestAuthFailureLoggedOnceWithReason: a refused key is logged with its
// reason and counted; the caller sees only the generic words.
func TestAuthFailureLoggedOnceWithReason(t *testing.T) {
	h, reg := metricsHarness(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`
	code, _, resp := h.rawPost("/agents/"+h.agentID, body, map[string]string{"Authorization": "Bearer wrong-key", "X-Vessel-User": "alice"})
	if code != http.StatusUnauthorized {
		t.Fatalf("status %d", code)
	}
	if strings.Contains(string(resp), "unknown_credentials") {
		t.Errorf("the caller was told the log's reason: %s", resp)
	}
	lines := h.logs.FilterMessage("authentication failed").All()
	if len(lines) != 1 || lines[0].ContextMap()["reason"] != a2aserver.AuthUnknown {
		t.Fatalf("want one line with reason %s, got %v", a2aserver.AuthUnknown, lines)
	}
	h.rawPost("/agents/"+h.agentID, body, nil)
	out := scrape(t, reg)
	for _, want := range []string{
		`vessel_auth_failures_total{reason="unknown_credentials"} 1`,
		`vessel_auth_failures_total{reason="missing_credentials"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
}

// TestTurnMetricsMoveWithBoundedLabels: after a turn with a tool call the
// turn, tool, token, model and store series moved with the agent's, tool's
// and model's labels, and no series anywhere names the task, the context
// or the owner.
func TestTurnMetricsMoveWithBoundedLabels(t *testing.T) {
	h, reg := metricsHarness(t)
	msg := textMsg("Which birds hunt fish? #script:tool")
	msg.ContextID = "conv-metrics-7f3a"
	evs, err := h.stream(as(h.keyApp1, "owner-zq81"), h.agentID, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task := evs[0].(*a2a.Task)
	out := scrape(t, reg)
	for _, want := range []string{
		`vessel_turns_started_total{agent="field-guide"} 1`,
		`vessel_turns_finished_total{agent="field-guide",status="ok"} 1`,
		`vessel_turn_duration_seconds_count{agent="field-guide",status="ok"} 1`,
		`vessel_turn_first_token_seconds_count{agent="field-guide"} 1`,
		`vessel_turn_steps_total{agent="field-guide"} 2`,
		`vessel_tool_calls_total{agent="field-guide",outcome="ok",tool="species"} 1`,
		`vessel_tool_call_duration_seconds_count{agent="field-guide",tool="species"} 1`,
		`vessel_model_call_duration_seconds_count{agent="field-guide",model="scripted"} 2`,
		`vessel_active_turns{agent="field-guide"} 0`,
		`vessel_active_streams{agent="field-guide"} 0`,
		`vessel_store_operation_duration_seconds_count{op="create",outcome="ok"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	for _, dir := range []string{"in", "out"} {
		prefix := `vessel_model_tokens_total{agent="field-guide",direction="` + dir + `",model="scripted"} `
		i := strings.Index(out, prefix)
		if i < 0 || strings.HasPrefix(out[i+len(prefix):], "0\n") {
			t.Errorf("tokens %s did not move", dir)
		}
	}
	for _, secret := range []string{string(task.ID), "conv-metrics-7f3a", "owner-zq81"} {
		if strings.Contains(out, secret) {
			t.Errorf("a series carries %q", secret)
		}
	}
}

// TestRejectedTurnCounted: a turn refused at its start counts as started
// and finished with status rejected, and leaves no active turn.
func TestRejectedTurnCounted(t *testing.T) {
	h, reg := metricsHarness(t)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"not": "a transcript"}))
	if _, err := h.stream(as(h.keyApp1, "alice"), h.agentID, &a2a.SendMessageRequest{Message: msg}); err != nil {
		t.Fatal(err)
	}
	out := scrape(t, reg)
	for _, want := range []string{
		`vessel_turns_finished_total{agent="field-guide",status="rejected"} 1`,
		`vessel_active_turns{agent="field-guide"} 0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s\n", want)
		}
	}
}

// TestActiveStreamsWhileStreaming: an open event stream shows in
// vessel_active_streams while it runs and leaves it when it ends.
func TestActiveStreamsWhileStreaming(t *testing.T) {
	h, reg := metricsHarness(t)
	msg := textMsg("slow please #script:slowtext")
	seen := false
	for ev, err := range h.client(h.agentID).SendStreamingMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && !seen {
			seen = true
			if out := scrape(t, reg); !strings.Contains(out, `vessel_active_streams{agent="field-guide"} 1`) ||
				!strings.Contains(out, `vessel_active_turns{agent="field-guide"} 1`) {
				t.Errorf("mid-stream scrape lacks one open stream and one active turn")
			}
		}
	}
	if !seen {
		t.Fatal("no status update")
	}
	if out := scrape(t, reg); !strings.Contains(out, `vessel_active_streams{agent="field-guide"} 0`) {
		t.Errorf("the stream is still counted after its end")
	}
}

// TestEveryMetricDocumented: docs/operations.md lists exactly the vessel_
// series NewMetrics registers.
func TestEveryMetricDocumented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rec metricdoc.Recorder
	a2aserver.NewMetrics(&rec)
	for _, m := range metricdoc.Mismatches(rec.Names, metricdoc.Documented(md), "vessel_") {
		t.Error(m)
	}
}
