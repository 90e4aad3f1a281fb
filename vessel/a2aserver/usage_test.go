package a2aserver_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/usage"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

// TestUsageRecordPerFinishedTurn: a finished turn appends one usage record
// to a real log file with its owner split into app and user, the agent,
// model, tokens, steps and tool calls the turn reported, and its task id.
func TestUsageRecordPerFinishedTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	rc, err := usage.Open(path, rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.Usage = rc })
	evs, err := h.stream(as(h.keyApp1, "alice"), h.agentID, &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish? #script:tool")})
	if err != nil {
		t.Fatal(err)
	}
	task := evs[0].(*a2a.Task)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []usage.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r usage.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Task != string(task.ID) || r.Owner != "app1/alice" || r.App != "app1" || r.User != "alice" || r.Agent != h.agentID ||
		r.Model != "scripted" || r.Status != "ok" || r.Time.IsZero() {
		t.Fatalf("record %+v", r)
	}
	if r.Steps < 2 || r.ToolCalls < 1 || r.TokensIn <= 0 || r.TokensOut <= 0 {
		t.Fatalf("a tool-calling turn's counts: %+v", r)
	}
}
