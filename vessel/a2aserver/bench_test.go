package a2aserver_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
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
	text := benchText

	direct := benchDirect(t, h)
	frames := 0
	body := `{"jsonrpc":"2.0","id":"b","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
		text + `"}]},"configuration":{"acceptedOutputModes":["text/markdown","` + transcript.MediaType + `"]}}}`
	// The vessel is driven with raw HTTP, reading the stream to its end (the
	// server closes it after the final frame), so the figure is the server's
	// and not an A2A client's JSON parsing.
	viaVessel := func() {
		b := benchPost(t, h, []byte(body))
		frames = bytes.Count(b, []byte("\ndata: ")) + 1
		last := b[bytes.LastIndex(b, []byte("data: ")):]
		if !bytes.Contains(last, []byte("TASK_STATE_COMPLETED")) {
			t.Fatalf("turn did not complete: %s", last)
		}
	}
	load := benchenv.LoadAvg()
	for i := range 20 { // warm up connections and caches
		direct(i)
		viaVessel()
	}
	var d, v []time.Duration
	var cpuD, cpuV time.Duration
	for i := range n { // interleaved so both see the same machine load
		c0 := benchenv.CPUTime()
		t0 := time.Now()
		direct(1000 + i)
		d = append(d, time.Since(t0))
		c1 := benchenv.CPUTime()
		t1 := time.Now()
		viaVessel()
		v = append(v, time.Since(t1))
		c2 := benchenv.CPUTime()
		cpuD += c1 - c0
		cpuV += c2 - c1
	}
	slices.Sort(d)
	slices.Sort(v)
	copyCost := gobCopyCost(t)
	pooledCost := sdkCopyCost(t)
	sdkCopies := 2*(frames-1) + 1 // two per status or artifact event, one for the task
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
transcript requested (raw HTTP, reading the event stream to its end), and the same two model
calls and the same tool call made directly with the vessel's model and sandbox clients, interleaved. The sandbox is an in-process fake RunService, so the
figures measure the harness, not confinement.

| path | median | p90 |
|---|---|---|
| direct (model + tool + end turn) | %s | %s |
| through the vessel | %s | %s |
| **overhead per turn** | **%s** | |

CPU time of the benchmark process per turn (all goroutines: the scripted model and the fake sandbox
serve both paths in this process, so the difference is the vessel's own work; it too grows on a busy
machine, through cache and scheduler contention): direct %s, through the vessel %s, **difference %s**.

Target: at most 3 ms per turn; this run %s it. Measured %s on %s/%s, %d CPUs, Go %s,
SQLite task store, load average %s at the start (the machine was shared; both paths ran
interleaved under the same load).
Where the time goes: a2a-go deep-copies the task about twice per event; this turn has
%d frames, so about %d copies. With the vendored patches (third_party/a2a-go/PATCHES.md) a copy is
made by hand, field by field, with the result a gob round trip gives: %s per copy in a warm loop
(through the in-memory store's Get), against %s with the fresh gob encoder and decoder per copy of
a2a-go as released and about 12 µs with the pooled gob pair of the first patch (see "SDK task
copies" below; a CPU profile of 300 turns on 2026-11-30, before the patches, put about 40 %% of
the vessel's CPU in a2a-go's per-event processing, mostly these copies). The SSE framing, the HTTP
handling, the two SQLite writes of a task (created, finished) and the loop itself share the rest. The
vessel keeps the copied task small (history trimmed to the user's text, finished transcript and file
artifacts dropped from the SDK's working copy, working updates kept in memory), and merging events is
ruled out by the one-event-per-frame contract. The overhead grows with the machine's load: on 2026-11-30 this benchmark
measured about 3 ms at a load average of 10 and 6 to 9 ms at load averages of 15 to 40 on this shared
2-CPU machine.

`, n, ms(med(d)), ms(p90(d)), ms(med(v)), ms(p90(v)), ms(over),
		ms(cpuD/n), ms(cpuV/n), ms((cpuV-cpuD)/n), verdict,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load,
		frames, sdkCopies, us(pooledCost), us(copyCost))
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "## Turn", section); err != nil {
		t.Fatal(err)
	}
}

// benchDirect returns the direct path of TestBenchTurn: the same two model
// calls and the tool call, no vessel.
func benchDirect(t *testing.T, h *harness) func(i int) {
	// Direct: the same two model calls and the tool call, no vessel.
	mc := &model.Client{BaseURL: h.deploy.Agents[0].Manifest.Model.BaseURL, HTTP: h.httpc}
	sb, err := tools.DialSandbox(h.sbURL, tokens.DeriveToken("master-secret", "sandbox/"+h.agentID))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
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
	return func(i int) {
		msgs := []transcript.Message{{Role: "system", Content: transcript.Text("p")}, {Role: "user", Content: transcript.Text(benchText)}}
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
}

// benchPost posts a JSON-RPC body to field-guide as app1/bench, asking
// for a stream, and returns the answer read to its end (HTTP 200 or the
// test fails).
func benchPost(t *testing.T, h *harness, body []byte) []byte {
	req, _ := http.NewRequest(http.MethodPost, h.url+"/agents/field-guide", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+h.keyApp1)
	req.Header.Set("X-Vessel-User", "bench")
	resp, err := h.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %d %v", resp.StatusCode, err)
	}
	return b
}

// benchText asks the scripted model for one species call, then a six-piece
// answer.
const benchText = "Which birds hunt fish? #script:tool"

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1000) }

// copyTask is shaped like a working task of this turn.
func copyTask() *a2a.Task {
	ec := a2a.TaskInfo{TaskID: "t", ContextID: "c"}
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewDataPart(map[string]any{
		"type": "tool.finished", "call_id": "c1", "name": "species", "ok": true, "preview": "[...]", "elapsed_ms": int64(1)}))
	return &a2a.Task{ID: "t", ContextID: "c", History: []*a2a.Message{a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("q"))},
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg}, Metadata: map[string]any{"vessel.event": "tool.finished"}}
}

// gobCopyCost times a deep copy as a2a-go v2.4.0 as released makes it (a
// fresh gob encoder and decoder) of a task shaped like a working task of
// this turn.
func gobCopyCost(t *testing.T) time.Duration {
	st := taskstore.StoredTask{Task: copyTask(), Version: 3}
	var ds []time.Duration
	for range 200 { // the fresh pair per copy: no warm-up to be had
		t0 := time.Now()
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(st); err != nil {
			t.Fatal(err)
		}
		var out taskstore.StoredTask
		if err := gob.NewDecoder(&buf).Decode(&out); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// sdkCopyCost times a deep copy of the same task as the SDK makes it now
// (the patched utils.DeepCopy: by hand), through the in-memory task store's
// Get, which is one such copy.
func sdkCopyCost(t *testing.T) time.Duration {
	ctx := context.Background()
	mem := taskstore.NewInMemory(nil)
	task := copyTask()
	if _, err := mem.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	var ds []time.Duration
	for range 200 {
		t0 := time.Now()
		if _, err := mem.Get(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// writeSection replaces the section starting with heading (up to the next
// heading) in a Markdown file, or appends it. With VESSEL_BENCH_NO_WRITE
// set it writes nothing: every bench-turn test then only logs its section
// (a run to look at, or one on a loaded machine, leaves the doc as it is).
func writeSection(path, heading, section string) error {
	if os.Getenv("VESSEL_BENCH_NO_WRITE") != "" {
		return nil
	}
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
		// Up to the next heading of any level: the subsections after the
		// measured text (### Approvals, ...) are not the benchmark's.
		end := strings.Index(s[start+len(heading):], "\n#")
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
