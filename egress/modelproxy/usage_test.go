package modelproxy

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

const sseAnswer = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" +
	": keep-alive\n\n" +
	"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":7}}\r\n\r\n" +
	"data: [DONE]\n\n"

// TestTokensByAgent: the egress reads the usage a real loopback upstream
// reports (a stream, a running total repeated in each chunk, a plain JSON
// answer), counts it under the agent the vessel named, never sends the
// agent header upstream, and passes the answer through byte for byte.
func TestTokensByAgent(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	answers := map[string]struct{ ctype, body string }{
		"stream":  {"text/event-stream; charset=utf-8", sseAnswer},
		"running": {"text/event-stream", "data: {\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1}}\n\ndata: {\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n"},
		"json":    {"application/json", `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`},
		"none":    {"text/event-stream", "data: {\"choices\":[]}\n\ndata: [DONE]\n\n"},
		"error":   {"application/json", `{"usage":{"prompt_tokens":999,"completion_tokens":999}}`},
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(telemetry.AgentHeader); v != "" {
			mu.Lock()
			leaked = append(leaked, v)
			mu.Unlock()
		}
		a := answers[r.URL.Query().Get("a")]
		w.Header().Set("Content-Type", a.ctype)
		if r.URL.Query().Get("a") == "error" {
			w.WriteHeader(http.StatusTooManyRequests)
		}
		_, _ = io.WriteString(w, a.body)
	}))
	defer up.Close()
	reg := prometheus.NewRegistry()
	met := NewMetrics(reg)
	h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true, Metrics: met})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	send := func(agent, answer string) string {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/chat/completions?a="+answer, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+testToken)
		if agent != "" {
			req.Header.Set(telemetry.AgentHeader, agent)
		}
		resp, err := http.DefaultClient.Do(req)
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
	if got := send("alpha", "stream"); got != sseAnswer {
		t.Fatalf("the stream changed on the way: %q", got)
	}
	send("alpha", "running")
	send("beta", "json")
	send("beta", "none")
	send("beta", "error")
	send("", "json")
	send("Not An Agent!", "json")
	for _, c := range []struct {
		agent, dir string
		want       float64
	}{
		{"alpha", "in", 130}, {"alpha", "out", 9},
		{"beta", "in", 5}, {"beta", "out", 3},
		{"unknown", "in", 5}, {"invalid", "out", 3},
	} {
		if got := testutil.ToFloat64(met.tokens.WithLabelValues(c.agent, c.dir, "default")); got != c.want {
			t.Errorf("egress_model_tokens_total{agent=%q,direction=%q,route=\"default\"} = %v, want %v", c.agent, c.dir, got, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 0 {
		t.Errorf("the upstream received the agent header: %v", leaked)
	}
}

// TestAgentLabelsBounded: past MaxAgentLabels distinct agents, new names
// count as other; names already seen keep their label.
func TestAgentLabelsBounded(t *testing.T) {
	var a agentLabels
	for i := range MaxAgentLabels {
		if got := a.label(fmt.Sprintf("agent-%d", i)); got != fmt.Sprintf("agent-%d", i) {
			t.Fatalf("label %d: %s", i, got)
		}
	}
	if got := a.label("one-more"); got != "other" {
		t.Fatalf("past the bound: %s", got)
	}
	if got := a.label("agent-3"); got != "agent-3" {
		t.Fatalf("a seen agent: %s", got)
	}
	if got := a.label(strings.Repeat("a", 64)); got != "invalid" {
		t.Fatalf("a name too long: %s", got)
	}
}

// TestUsageReaderLongLines: a content line over maxUsageLine is passed
// through unparsed, and the usage line after it is still read.
func TestUsageReaderLongLines(t *testing.T) {
	body := "data: {\"x\":\"" + strings.Repeat("y", maxUsageLine+10) + "\",\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":1000}}\n" +
		"data: {\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":2}}\n"
	var in, out int64
	u := newUsageReader(io.NopCloser(strings.NewReader(body)), "text/event-stream", func(i, o int64) { in, out = i, o })
	got, err := io.ReadAll(u)
	if err != nil || string(got) != body {
		t.Fatalf("passed through %d bytes, err %v", len(got), err)
	}
	_ = u.Close()
	if in != 4 || out != 2 {
		t.Fatalf("usage %d/%d, want 4/2", in, out)
	}
}

// FuzzUsageReader: whatever the upstream sends, in whatever pieces, passes
// through unchanged, and any usage reported is never negative.
func FuzzUsageReader(f *testing.F) {
	f.Add([]byte(sseAnswer), uint8(7), true)
	f.Add([]byte(`{"usage":{"prompt_tokens":-1,"completion_tokens":2}}`), uint8(3), false)
	f.Add([]byte("data: {\"usage\":null}\ndata: {\"usage\""), uint8(1), true)
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8, sse bool) {
		ct := "application/json"
		if sse {
			ct = "text/event-stream"
		}
		u := newUsageReader(io.NopCloser(&pieces{b: body, n: int(chunk)%17 + 1}), ct, func(in, out int64) {
			if in < 0 || out < 0 {
				t.Fatalf("negative usage %d/%d", in, out)
			}
		})
		got, err := io.ReadAll(u)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("changed on the way: %v", err)
		}
		_ = u.Close()
	})
}

// pieces reads b at most n bytes at a time.
type pieces struct {
	b []byte
	n int
}

func (p *pieces) Read(out []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(out), p.n, len(p.b))
	copy(out, p.b[:k])
	p.b = p.b[k:]
	return k, nil
}

// BenchmarkUsageReader is what reading the tokens costs a streamed model
// answer passing through the egress: 200 content chunks and the usage
// chunk, read in 4 KiB pieces (docs/performance.md).
func BenchmarkUsageReader(b *testing.B) {
	var sb strings.Builder
	for range 200 {
		sb.WriteString("data: {\"choices\":[{\"delta\":{\"content\":\"a few words of the answer\"}}]}\n\n")
	}
	sb.WriteString("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":200}}\n\ndata: [DONE]\n\n")
	body := sb.String()
	buf := make([]byte, 4096)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		u := newUsageReader(io.NopCloser(strings.NewReader(body)), "text/event-stream", func(int64, int64) {})
		for {
			if _, err := u.Read(buf); err != nil {
				break
			}
		}
		_ = u.Close()
	}
}
