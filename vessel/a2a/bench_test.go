package a2aserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

type nopHandler struct{}

func (nopHandler) Text(string)      {}
func (nopHandler) Reasoning(string) {}

// TestBenchTurn measures one turn with one tool call through the vessel
// against the same model script and tool called directly, and writes the
// per-turn overhead to docs/performance.md. `make bench-turn` runs it.
func TestBenchTurn(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_TURN") == "" {
		t.Skip("set VESSEL_BENCH_TURN=1 (make bench-turn)")
	}
	h := newHarness(t)
	const n = 200
	text := "Which birds hunt fish? #script:tool"

	// Direct: the same two model calls and the tool call, no vessel.
	mc := &model.Client{BaseURL: h.deploy.Agents[0].Manifest.Model.BaseURL, HTTP: h.httpc}
	sb, err := tools.DialSandbox(h.sbURL, spec.DeriveToken("master-secret", "sandbox/"+h.agentID))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	tl := tools.SandboxTools(sb, &h.deploy.Agents[0])
	var species tools.Tool
	for _, x := range tl {
		if x.Def().Function.Name == "species" {
			species = x
		}
	}
	defs := []model.ToolDef{}
	for _, x := range tl {
		defs = append(defs, x.Def())
	}
	direct := func(i int) {
		msgs := []transcript.Message{{Role: "system", Content: transcript.Text("p")}, {Role: "user", Content: transcript.Text(text)}}
		r1, err := mc.Complete(context.Background(), &model.Request{Model: "scripted", Messages: msgs, Tools: defs}, nopHandler{})
		if err != nil || len(r1.ToolCalls) != 1 {
			t.Fatalf("direct step 0: %v", err)
		}
		res, err := species.Run(context.Background(), &tools.Turn{ID: fmt.Sprintf("direct-%d", i), Owner: "app1/bench"},
			tools.Call{ID: r1.ToolCalls[0].ID, Name: "species", Arguments: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, transcript.Message{Role: "assistant", ToolCalls: r1.ToolCalls},
			transcript.Message{Role: "tool", ToolCallID: r1.ToolCalls[0].ID, Content: transcript.Text(res.Output)})
		if _, err := mc.Complete(context.Background(), &model.Request{Model: "scripted", Messages: msgs, Tools: defs}, nopHandler{}); err != nil {
			t.Fatal(err)
		}
		if err := sb.EndTurn(context.Background(), fmt.Sprintf("direct-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	viaVessel := func() {
		evs, err := h.stream(as(h.keyApp1, "bench"), "field-guide", &a2a.SendMessageRequest{Message: textMsg(text),
			Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/markdown", transcript.MediaType}}})
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("turn did not complete: %T", evs[len(evs)-1])
		}
	}
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	for i := range 20 { // warm up connections and caches
		direct(i)
		viaVessel()
	}
	var d, v []time.Duration
	for i := range n { // interleaved so both see the same machine load
		t0 := time.Now()
		direct(1000 + i)
		d = append(d, time.Since(t0))
		t1 := time.Now()
		viaVessel()
		v = append(v, time.Since(t1))
	}
	slices.Sort(d)
	slices.Sort(v)
	med := func(x []time.Duration) time.Duration { return x[len(x)/2] }
	p90 := func(x []time.Duration) time.Duration { return x[len(x)*9/10] }
	over := med(v) - med(d)
	verdict := "meets"
	if over > 3*time.Millisecond {
		verdict = "misses"
	}
	section := fmt.Sprintf(`## Turn

`+"`make bench-turn`"+` runs one turn with one tool call (the scripted model asks for the `+"`species`"+`
tool, then streams a six-piece answer) %d times through the vessel, over A2A streaming with the
transcript requested, and the same two model calls and the same tool call made directly with the
vessel's model and sandbox clients, interleaved. The sandbox is an in-process fake RunService, so the
figures measure the harness, not confinement.

| path | median | p90 |
|---|---|---|
| direct (model + tool + end turn) | %s | %s |
| through the vessel | %s | %s |
| **overhead per turn** | **%s** | |

Target: at most 3 ms per turn; this run %s it. Measured %s on %s/%s, %d CPUs, Go %s, SQLite task store,
load average %s at the start (the machine was shared; both paths ran interleaved under the same load).
The vessel path includes the A2A client's own work (it runs in the benchmark's process), the SDK's
per-event processing (two gob deep copies of the task per event) and the SSE framing of about ten frames.

`, n, ms(med(d)), ms(p90(d)), ms(med(v)), ms(p90(v)), ms(over), verdict,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load)
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "## Turn", section); err != nil {
		t.Fatal(err)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// writeSection replaces the section starting with heading (up to the next
// "## " heading) in a Markdown file, or appends it.
func writeSection(path, heading, section string) error {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	s := string(old)
	if s == "" {
		s = "# Performance\n\n"
	}
	start := strings.Index(s, heading+"\n")
	if start < 0 {
		if !strings.HasSuffix(s, "\n\n") {
			s = strings.TrimRight(s, "\n") + "\n\n"
		}
		s += section
	} else {
		end := strings.Index(s[start+len(heading):], "\n## ")
		if end < 0 {
			s = s[:start] + section
		} else {
			s = s[:start] + section + s[start+len(heading)+end+1:]
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create docs: %w", err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
