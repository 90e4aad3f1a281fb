package a2aserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
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
	h := newHarness(t)
	const n = 100
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
	for range 10 {
		via("pieces100")
		via("pieces1000")
		direct("pieces100")
		direct("pieces1000")
	}
	load := loadAvg()
	cpu := map[string]time.Duration{}
	for range n {
		for _, name := range []string{"pieces100", "pieces1000"} {
			c0 := cpuTime()
			via(name)
			c1 := cpuTime()
			direct(name)
			c2 := cpuTime()
			cpu["via "+name] += c1 - c0
			cpu["direct "+name] += c2 - c1
		}
	}
	v100, v1000 := (cpu["via pieces100"]-cpu["direct pieces100"])/n, (cpu["via pieces1000"]-cpu["direct pieces1000"])/n
	per := (v1000 - v100) / 900
	section := fmt.Sprintf(`### Per streamed piece (measured)

`+"`make bench-turn`"+` runs turns whose scripted answer streams 100 and 1,000 pieces (%d each, interleaved),
through the vessel over A2A streaming, less the same model streams read directly as bytes. Vessel CPU per
turn: %s at 100 pieces (%d SSE frames to the caller), %s at 1,000 (%d frames: text is merged up to 1 KiB a
frame); **%.2f µs per streamed piece** (the difference ÷ 900). Measured %s
on %s/%s, %d CPUs, Go %s, load average %s at the start, %s at the end.

`, n, ms(v100), frames["pieces100"], ms(v1000), frames["pieces1000"], float64(per.Nanoseconds())/1000,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load, loadAvg())
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "### Per streamed piece (measured)", section); err != nil {
		t.Fatal(err)
	}
}
