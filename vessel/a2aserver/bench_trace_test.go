package a2aserver_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// TestBenchTurnTracing measures the same turn as TestBenchTurn (one tool
// call, streamed, transcript requested) through the vessel with tracing
// off, then on (exporting over OTLP/HTTP to a receiver on loopback in this
// process), then off again, and logs the median wall-clock time and the
// process CPU time per turn of each block (figures for docs/performance.md).
// `make bench-turn` runs it.
func TestBenchTurnTracing(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_TURN") == "" {
		t.Skip("set VESSEL_BENCH_TURN=1 (make bench-turn)")
	}
	const n = 300
	text := "Which birds hunt fish? #script:tool"
	body := `{"jsonrpc":"2.0","id":"b","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
		text + `"}]},"configuration":{"acceptedOutputModes":["text/markdown","` + transcript.MediaType + `"]}}}`
	turn := func(h *harness) {
		req, _ := http.NewRequest(http.MethodPost, h.url+"/agents/field-guide", strings.NewReader(body))
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
		if err != nil || resp.StatusCode != 200 || !bytes.Contains(b, []byte("TASK_STATE_COMPLETED")) {
			t.Fatalf("turn: %d %v", resp.StatusCode, err)
		}
	}
	block := func(h *harness) (wall, cpu time.Duration) {
		for range 20 {
			turn(h)
		}
		var ds []time.Duration
		c0 := benchenv.CPUTime()
		for range n {
			t0 := time.Now()
			turn(h)
			ds = append(ds, time.Since(t0))
		}
		c1 := benchenv.CPUTime()
		slices.Sort(ds)
		return ds[len(ds)/2], (c1 - c0) / n
	}
	off := newHarness(t)
	w1, c1 := block(off)
	rcv := tracetest.Start(t, "vessel")
	on := newHarness(t) // its sandbox client carries the trace (otelgrpc)
	w2, c2 := block(on)
	// Wait for the turn spans themselves: the other spans (HTTP, gRPC, model
	// calls) arrive beside them, so a count of all spans is reached early.
	countTurns := func(s []otlpsink.Span) int {
		turns := 0
		for _, sp := range s {
			if sp.Name == "turn" {
				turns++
			}
		}
		return turns
	}
	spans := rcv.Wait(t, func(s []otlpsink.Span) bool { return countTurns(s) >= n })
	turns := countTurns(spans)
	if turns < n {
		t.Fatalf("only %d turn spans exported", turns)
	}
	// Off again: the receiver's cleanup turns tracing off only at the end,
	// so the third block uses a harness made before tracing was on and
	// checks the machine did not drift.
	rcv.Stop(t)
	w3, c3 := block(off)
	load := benchenv.LoadAvg()
	t.Logf("\n| tracing | median per turn | process CPU per turn |\n|---|---|---|\n| off | %s | %s |\n| on | %s | %s |\n| off again | %s | %s |\n"+
		"CPU difference on - mean(off): %s per turn; %d spans exported, %d turns; %s/%s, %d CPUs, Go %s, load %s, %s",
		ms(w1), ms(c1), ms(w2), ms(c2), ms(w3), ms(c3), us(c2-(c1+c3)/2), len(spans), turns,
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
}
