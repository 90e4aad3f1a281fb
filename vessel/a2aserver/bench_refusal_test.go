package a2aserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// oversizeBody is a JSON-RPC send whose history holds n messages, as
// vessel/client sends a history (a raw part, base64).
func oversizeBody(t testing.TB, method string, n int) []byte {
	t.Helper()
	msgs := make([]transcript.Message, n)
	for i := range msgs {
		role, text := "user", "Which birds hunt fish?"
		if i%2 == 1 {
			role, text = "assistant", "Ospreys, kingfishers and herons."
		}
		msgs[i] = transcript.Message{Role: role, Content: transcript.Text(text)}
	}
	env, err := json.Marshal(transcript.Envelope{Version: 1, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"jsonrpc":"2.0","id":"r","method":"` + method + `","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"and now?"},{"raw":"` +
		base64.StdEncoding.EncodeToString(env) + `","mediaType":"` + transcript.MediaType + `"}]}}}`)
}

// TestBenchRefusal measures what a send refused for its history (10,000
// messages, over the 2,000 cap) costs the vessel, against a normal turn's
// vessel CPU (as TestBenchTurn: the turn through the vessel less the same
// model and tool calls made directly), and writes the figures to
// docs/performance.md. `make bench-turn` runs it.
func TestBenchRefusal(t *testing.T) {
	if os.Getenv("VESSEL_BENCH_TURN") == "" {
		t.Skip("set VESSEL_BENCH_TURN=1 (make bench-turn)")
	}
	h := newHarness(t)
	const n = 300
	direct := benchDirect(t, h)
	text := benchText
	normal := []byte(`{"jsonrpc":"2.0","id":"b","method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` +
		text + `"}]},"configuration":{"acceptedOutputModes":["text/markdown","` + transcript.MediaType + `"]}}}`)
	over := oversizeBody(t, "SendStreamingMessage", 10_000)
	post := func(body []byte) []byte { return benchPost(t, h, body) }
	refusedAs := ""
	refused := func() {
		b := post(over)
		if !bytes.Contains(b, []byte("2,000")) && !bytes.Contains(b, []byte("2000")) {
			t.Fatalf("not refused for its history: %.300s", b)
		}
		refusedAs = string(b)
	}
	normalTurn := func() {
		if b := post(normal); !bytes.Contains(b[bytes.LastIndex(b, []byte("data: ")):], []byte("TASK_STATE_COMPLETED")) {
			t.Fatalf("turn did not complete: %.300s", b)
		}
	}
	// The floor any refusal after reading pays: the same body posted over
	// loopback to a handler that reads it whole and answers 400.
	floorSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer // sized up front, as the vessel's body read is
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
		_, _ = buf.ReadFrom(r.Body)
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	defer floorSrv.Close()
	floor := func() {
		resp, err := h.httpc.Post(floorSrv.URL, "application/json", bytes.NewReader(over))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	load := loadAvg()
	for i := range 10 {
		direct(i)
		normalTurn()
		refused()
		floor()
	}
	var cpuD, cpuV, cpuR, cpuF time.Duration
	var wallR []time.Duration
	for i := range n {
		c0 := cpuTime()
		direct(1000 + i)
		c1 := cpuTime()
		normalTurn()
		c2 := cpuTime()
		t0 := time.Now()
		refused()
		wallR = append(wallR, time.Since(t0))
		c3 := cpuTime()
		floor()
		cpuF += cpuTime() - c3
		cpuD += c1 - c0
		cpuV += c2 - c1
		cpuR += c3 - c2
	}
	slices.Sort(wallR)
	turnCPU := (cpuV - cpuD) / n
	refCPU, floorCPU := cpuR/n, cpuF/n
	ratio := float64(refCPU) / float64(turnCPU)
	own := float64(refCPU-floorCPU) / float64(turnCPU)
	section := fmt.Sprintf(`## Refused oversize history

`+"`make bench-turn`"+` also sends, %d times interleaved with the turn above, a `+"`SendStreamingMessage`"+`
whose history holds 10,000 messages (%d KB of body: a raw transcript part, as vessel/client sends it),
which the 2,000-message cap refuses. CPU time of the benchmark process per request: the refused send
%s (median wall time %s); a normal turn's vessel CPU (through the vessel less the same model and tool
calls made directly) %s; **the refusal costs %.2f× a normal turn** (target: under 0.1×). Of that, %s
is the floor of carrying the body at all: the same bytes posted over loopback (client and server in this
process) to a handler that only reads them and answers 400; the vessel's own work on the refusal
(envelope check, admission, lifting and decoding the raw part, reading the whole history to count it, the rejected task) is the
rest, %s, **%.2f× a normal turn**. Measured %s on %s/%s, %d CPUs, Go %s, load average %s at the start,
%s at the end.

Answer: %s

`, n, len(over)/1000, ms(refCPU), ms(wallR[len(wallR)/2]), ms(turnCPU), ratio, ms(floorCPU), ms(refCPU-floorCPU), own,
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), load, loadAvg(),
		"`"+snippetOf(refusedAs)+"`")
	t.Log("\n" + section)
	if err := writeSection(filepath.Join("..", "..", "docs", "performance.md"), "## Refused oversize history", section); err != nil {
		t.Fatal(err)
	}
}

func loadAvg() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return "unknown"
}

func snippetOf(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
