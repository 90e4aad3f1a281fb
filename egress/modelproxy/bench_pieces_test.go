package modelproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/benchenv"
)

// TestBenchPiecesSpaced measures the egress's CPU per streamed piece when
// the model sends its pieces 1 ms apart, as a real model does: streams of
// 100 and 1,000 chat-completion chunks read through the model proxy, less
// the same streams read directly from the upstream (both in this process);
// the difference between the two sizes ÷ 900 is the proxy's cost of one
// piece (a read of the upstream, the usage scan, a write and a flush to
// the caller). EGRESS_BENCH_PIECES=1 runs it (docs/performance.md,
// "Streamed pieces"); EGRESS_BENCH_PIECES_TURNS sets the streams per size
// (20).
func TestBenchPiecesSpaced(t *testing.T) {
	if os.Getenv("EGRESS_BENCH_PIECES") == "" {
		t.Skip("set EGRESS_BENCH_PIECES=1")
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv("EGRESS_BENCH_PIECES_TURNS")); err == nil && v > 0 {
		n = v
	}
	up := httptest.NewServer(http.HandlerFunc(spacedStream))
	defer up.Close()
	h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(h)
	defer px.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	read := func(base string, pieces int) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions?pieces="+strconv.Itoa(pieces),
			strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
			t.Fatalf("%s: %d %v %.200s", base, resp.StatusCode, err, b)
		}
	}
	for range min(n, 5) {
		for _, p := range []int{100, 1000} {
			read(px.URL, p)
			read(up.URL, p)
		}
	}
	load := benchenv.LoadAvg()
	cpu := map[string]time.Duration{}
	for range n {
		for _, p := range []int{100, 1000} {
			c0 := benchenv.CPUTime()
			read(px.URL, p)
			c1 := benchenv.CPUTime()
			read(up.URL, p)
			c2 := benchenv.CPUTime()
			cpu[fmt.Sprint("via", p)] += c1 - c0
			cpu[fmt.Sprint("direct", p)] += c2 - c1
		}
	}
	d := time.Duration(n)
	v100, v1000 := (cpu["via100"]-cpu["direct100"])/d, (cpu["via1000"]-cpu["direct1000"])/d
	t.Logf("egress CPU per stream: %.2f ms at 100 spaced pieces, %.2f ms at 1,000; %.2f µs per spaced piece (%d streams each, load average %s at the start, %s at the end)",
		float64(v100.Microseconds())/1000, float64(v1000.Microseconds())/1000, float64(((v1000-v100)/900).Nanoseconds())/1000, n, load, benchenv.LoadAvg())
}

// spacedStream is a model answering with ?pieces= chunks of text, 1 ms
// apart, each written and flushed on its own, then its usage and [DONE].
func spacedStream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n, _ := strconv.Atoi(r.URL.Query().Get("pieces"))
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	chunk := []byte(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"word of the answer "},"finish_reason":null}]}` + "\n\n")
	tk := time.NewTicker(time.Millisecond)
	defer tk.Stop()
	for range n {
		<-tk.C
		if _, err := w.Write(chunk); err != nil {
			return
		}
		fl.Flush()
	}
	_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":`+
		strconv.Itoa(n)+`,"total_tokens":`+strconv.Itoa(n+5)+`}}`+"\n\ndata: [DONE]\n\n")
}
