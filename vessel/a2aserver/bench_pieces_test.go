package a2aserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
)

// TestBenchPieces measures the vessel's CPU per streamed piece: turns whose
// scripted answer streams 100 and 1,000 pieces, through the vessel (A2A
// streaming, raw HTTP, read to the end), less the same model streams read
// directly as raw bytes (the scripted model serves both in this process).
// The per-piece figure is the difference between the two sizes ÷ 900:
// reading the chunk, the loop's text merge, the events and SSE frames.
// `make bench-turn` runs it and writes docs/performance.md's section.
func TestBenchPieces(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_TURN") == "" {
		t.Skip("set VESSEL_BENCH_TURN=1 (make bench-turn)")
	}
	const n = 100
	r := benchPieces(t, "pieces", n)
	section := fmt.Sprintf(`### Per streamed piece (measured)

`+"`make bench-turn`"+` runs turns whose scripted answer streams 100 and 1,000 pieces (%d each, interleaved),
through the vessel over A2A streaming, less the same model streams read directly as bytes. Vessel CPU per
turn: %s at 100 pieces (%d SSE frames to the caller), %s at 1,000 (%d frames: text is merged up to 1 KiB a
frame); **%.2f µs per streamed piece** (the difference ÷ 900). Measured %s
on %s/%s, %d CPUs, Go %s, load average %s at the start, %s at the end.

`, n, ms(r.v100), r.frames100, ms(r.v1000), r.frames1000, r.perPiece(),
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), r.load, benchenv.LoadAvg())
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "### Per streamed piece (measured)", section); err != nil {
		t.Fatal(err)
	}
}

// TestBenchPiecesSpaced is TestBenchPieces with the pieces 1 ms apart, as
// a real model sends them (the scripted model's piece_delay_ms): each
// piece is then a read and a goroutine wake-up of its own in the vessel,
// and text is merged by the 25 ms rule rather than the 1 KiB one. The
// model's own cost (its timers, writes and flushes) is in both halves and
// cancels out. VESSEL_BENCH_SPACED_TURNS sets the turns per size (20).
func TestBenchPiecesSpaced(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_TURN") == "" {
		t.Skip("set VESSEL_BENCH_TURN=1 (make bench-turn)")
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv("VESSEL_BENCH_SPACED_TURNS")); err == nil && v > 0 {
		n = v
	}
	r := benchPieces(t, "spaced", n)
	section := fmt.Sprintf(`### Per spaced piece (measured)

`+"`make bench-turn`"+` (`+"`TestBenchPiecesSpaced`"+`) runs turns whose scripted answer streams 100 and 1,000
pieces 1 ms apart (%d each, interleaved), through the vessel over A2A streaming, less the same model
streams read directly as bytes. Vessel CPU per turn: %s at 100 pieces (%d SSE frames to the caller), %s
at 1,000 (%d frames: text is merged up to 25 ms a frame); **%.2f µs per spaced piece** (the difference
÷ 900). Measured %s on %s/%s, %d CPUs, Go %s, load average %s at the start, %s at the end.

`, n, ms(r.v100), r.frames100, ms(r.v1000), r.frames1000, r.perPiece(),
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), r.load, benchenv.LoadAvg())
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "### Per spaced piece (measured)", section); err != nil {
		t.Fatal(err)
	}
}

// piecesResult is what benchPieces measured: the vessel's CPU per turn at
// 100 and 1,000 pieces and the frames each turn sent.
type piecesResult struct {
	v100, v1000           time.Duration
	frames100, frames1000 int
	load                  string
}

// perPiece is the difference between the two sizes ÷ 900, in µs.
func (r piecesResult) perPiece() float64 {
	return float64(((r.v1000 - r.v100) / 900).Nanoseconds()) / 1000
}

// benchPieces runs n turns each of the rules prefix+"100" and
// prefix+"1000" through the vessel and directly, interleaved, after a
// warm-up of min(n, 10) of each.
func benchPieces(t *testing.T, prefix string, n int) piecesResult {
	h := newHarness(t)
	small, large := prefix+"100", prefix+"1000"
	modelURL := h.deploy.Agents[0].Manifest.Model.BaseURL + "/chat/completions"
	body := func(name string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":"b","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"go #script:` +
			name + `"}]},"configuration":{"acceptedOutputModes":["text/markdown"]}}}`)
	}
	frames := map[string]int{}
	via := func(name string) {
		b := benchPost(t, h, body(name))
		frames[name] = bytes.Count(b, []byte("\ndata: ")) + 1
		if !bytes.Contains(b[bytes.LastIndex(b, []byte("data: ")):], []byte("TASK_STATE_COMPLETED")) {
			t.Fatalf("turn did not complete: %.300s", b)
		}
	}
	// The model's part: the same stream asked for and read as bytes.
	direct := func(name string) {
		req, _ := http.NewRequest(http.MethodPost, modelURL, strings.NewReader(
			`{"model":"scripted","stream":true,"messages":[{"role":"user","content":"go #script:`+name+`"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer egress-token")
		resp, err := h.httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Contains(got, []byte("[DONE]")) {
			t.Fatalf("model: %d %v %.200s", resp.StatusCode, err, got)
		}
	}
	for range min(n, 10) {
		via(small)
		via(large)
		direct(small)
		direct(large)
	}
	r := piecesResult{load: benchenv.LoadAvg()}
	cpu := map[string]time.Duration{}
	for range n {
		for _, name := range []string{small, large} {
			c0 := benchenv.CPUTime()
			via(name)
			c1 := benchenv.CPUTime()
			direct(name)
			c2 := benchenv.CPUTime()
			cpu["via "+name] += c1 - c0
			cpu["direct "+name] += c2 - c1
		}
	}
	d := time.Duration(n)
	r.v100, r.v1000 = (cpu["via "+small]-cpu["direct "+small])/d, (cpu["via "+large]-cpu["direct "+large])/d
	r.frames100, r.frames1000 = frames[small], frames[large]
	return r
}
