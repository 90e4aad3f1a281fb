package modelproxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/astraldeep/astralvessel-go/runtime/budgets"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// budgetUpstream is a real loopback model: ?tokens=N answers a plain JSON
// completion reporting N tokens (N-1 prompt, 1 completion); ?stream=N
// streams N chunks, each repeating the running usage total (10 tokens per
// chunk), flushed one by one. It records every X-Vessel-* header it gets.
type budgetUpstream struct {
	*httptest.Server
	hits   atomic.Int64
	mu     sync.Mutex
	leaked []string
}

func newBudgetUpstream(t *testing.T) *budgetUpstream {
	u := &budgetUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-vessel") {
				u.mu.Lock()
				u.leaked = append(u.leaked, k)
				u.mu.Unlock()
			}
		}
		q := r.URL.Query()
		if n := q.Get("stream"); n != "" {
			var chunks int
			fmt.Sscan(n, &chunks)
			w.Header().Set("Content-Type", "text/event-stream")
			for i := 1; i <= chunks; i++ {
				fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"c%d\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":%d}}\n\n", i, i*10-5)
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		var n int
		fmt.Sscan(q.Get("tokens"), &n)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":%d,"completion_tokens":1}}`, n-1)
	}))
	t.Cleanup(u.Close)
	return u
}

type budgetProxy struct {
	url string
	met *Metrics
	now *time.Time
}

func newBudgetProxy(t *testing.T, up string, b budgets.Budgets) *budgetProxy {
	t.Helper()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	p := &budgetProxy{met: NewMetrics(prometheus.NewRegistry()), now: &now}
	h, err := New(Config{Upstream: up + "/v1", Key: testKey, Token: testToken, AllowHTTP: true, Metrics: p.met,
		Budgets: b, Now: func() time.Time { return *p.now }})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	p.url = s.URL
	return p
}

// send asks for a completion as (turn, owner, agent), with query q.
func (p *budgetProxy) send(t *testing.T, token, turn, owner, agent, q string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/chat/completions?"+q, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(telemetry.TaskIDHeader, turn)
	req.Header.Set(telemetry.OwnerHeader, owner)
	req.Header.Set(telemetry.AgentHeader, agent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func errorCode(t *testing.T, body string) (code, msg string) {
	t.Helper()
	var v struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(body), "data:"))), &v); err != nil {
		t.Fatalf("not an error body: %q", body)
	}
	return v.Error.Code, v.Error.Message
}

// TestBudgetCeilings: each ceiling at its boundary, with a real loopback
// upstream. Reaching a ceiling exactly is allowed (the answer was within
// budget); the next request of that scope is refused with 429 and
// budget_exceeded before it reaches the upstream; one token short of the
// ceiling the next request goes; other turns, owners and agents are not
// touched.
func TestBudgetCeilings(t *testing.T) {
	for _, tc := range []struct {
		scope string
		b     budgets.Budgets
		// other is a (turn, owner, agent) in another window of this scope.
		other [3]string
	}{
		{ScopeTurn, budgets.Budgets{TurnTokens: 100}, [3]string{"t2", "o1", "a1"}},
		{ScopeOwner, budgets.Budgets{OwnerDailyTokens: 100}, [3]string{"t2", "o2", "a1"}},
		{ScopeAgent, budgets.Budgets{AgentDailyTokens: 100}, [3]string{"t2", "o2", "a2"}},
		{ScopeAgent, budgets.Budgets{AgentDailyTokens: 5, Agents: map[string]int64{"a1": 100}}, [3]string{"t2", "o2", "a3"}},
	} {
		t.Run(fmt.Sprintf("%s-%v", tc.scope, tc.b.Agents != nil), func(t *testing.T) {
			up := newBudgetUpstream(t)
			p := newBudgetProxy(t, up.URL, tc.b)
			// 99 tokens: below the ceiling, the next request goes.
			if code, body, _ := p.send(t, testToken, "t1", "o1", "a1", "tokens=99"); code != 200 {
				t.Fatalf("first request: %d %s", code, body)
			}
			// 1 more: exactly at the ceiling, still answered.
			if code, body, _ := p.send(t, testToken, "t1", "o1", "a1", "tokens=1"); code != 200 {
				t.Fatalf("request reaching the ceiling: %d %s", code, body)
			}
			hits := up.hits.Load()
			code, body, hdr := p.send(t, testToken, "t1", "o1", "a1", "tokens=1")
			if code != http.StatusTooManyRequests || hdr.Get("X-Egress-Error") != BudgetCode {
				t.Fatalf("request over the ceiling: %d %s", code, body)
			}
			if c, msg := errorCode(t, body); c != BudgetCode || !strings.Contains(msg, "the "+tc.scope+" has used 100 of its 100 tokens") {
				t.Errorf("refusal: code %q, message %q", c, msg)
			}
			if up.hits.Load() != hits {
				t.Error("a refused request reached the upstream")
			}
			if got := testutil.ToFloat64(p.met.refusals.WithLabelValues(tc.scope)); got != 1 {
				t.Errorf("egress_budget_refusals_total{scope=%s} = %v", tc.scope, got)
			}
			o := tc.other
			if code, body, _ := p.send(t, testToken, o[0], o[1], o[2], "tokens=1"); code != 200 {
				t.Errorf("another %s's request: %d %s", tc.scope, code, body)
			}
		})
	}
}

// TestBudgetDayWindow: the daily counts start again at 00:00 UTC; a turn
// running over midnight keeps its count.
func TestBudgetDayWindow(t *testing.T) {
	up := newBudgetUpstream(t)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{OwnerDailyTokens: 50, TurnTokens: 80})
	if code, _, _ := p.send(t, testToken, "t1", "o1", "a1", "tokens=50"); code != 200 {
		t.Fatal(code)
	}
	if code, _, _ := p.send(t, testToken, "t2", "o1", "a1", "tokens=1"); code != 429 {
		t.Fatalf("owner over its day: %d", code)
	}
	*p.now = time.Date(2026, 12, 3, 0, 0, 1, 0, time.UTC)
	if code, body, _ := p.send(t, testToken, "t1", "o1", "a1", "tokens=30"); code != 200 {
		t.Fatalf("next UTC day: %d %s", code, body)
	}
	code, body, _ := p.send(t, testToken, "t1", "o1", "a1", "tokens=1")
	if _, msg := errorCode(t, body); code != 429 || !strings.Contains(msg, "the turn has used 80 of its 80") {
		t.Errorf("turn over midnight: %d %s", code, body)
	}
}

// TestBudgetCutsStream: a stream whose running usage goes past the turn's
// ceiling is cut right after the chunk that crossed it, with an SSE error
// event in the OpenAI shape; the chunks after it and [DONE] never reach
// the caller, and the turn's next request is refused.
func TestBudgetCutsStream(t *testing.T) {
	up := newBudgetUpstream(t)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{TurnTokens: 25})
	code, body, _ := p.send(t, testToken, "t1", "o1", "a1", "stream=6")
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
	for _, want := range []string{`"c1"`, `"c2"`, `"c3"`} {
		if !strings.Contains(body, want) {
			t.Errorf("chunk %s before the cut missing: %q", want, body)
		}
	}
	for _, never := range []string{`"c4"`, "[DONE]"} {
		if strings.Contains(body, never) {
			t.Errorf("%s passed after the cut: %q", never, body)
		}
	}
	if !strings.Contains(body, "}\n\ndata: {\"error\"") {
		t.Errorf("the cut event is not an event of its own: %q", body)
	}
	last := body[strings.LastIndex(strings.TrimSpace(body), "\n\n")+2:]
	if c, msg := errorCode(t, last); c != BudgetCode || !strings.Contains(msg, "30 of its 25") || !strings.Contains(msg, "cut") {
		t.Errorf("cut event: %q %q", c, msg)
	}
	if got := testutil.ToFloat64(p.met.cuts.WithLabelValues(ScopeTurn)); got != 1 {
		t.Errorf("egress_budget_cuts_total{scope=turn} = %v", got)
	}
	if code, _, _ := p.send(t, testToken, "t1", "o1", "a1", "tokens=1"); code != 429 {
		t.Errorf("after the cut the turn was served: %d", code)
	}
	// A plain answer going past the ceiling is delivered whole (it cannot
	// be cut) and counted: not a cut, but the turn is spent.
	if code, body, _ := p.send(t, testToken, "t5", "o1", "a1", "tokens=30"); code != 200 || !strings.Contains(body, `"usage"`) {
		t.Errorf("plain answer over the ceiling: %d %q", code, body)
	}
	if got := testutil.ToFloat64(p.met.cuts.WithLabelValues(ScopeTurn)); got != 1 {
		t.Errorf("a plain answer counted as a cut: %v", got)
	}
	if code, _, _ := p.send(t, testToken, "t5", "o1", "a1", "tokens=1"); code != 429 {
		t.Errorf("after a plain answer past the ceiling the turn was served: %d", code)
	}
	// Within budget, the same stream passes whole.
	if code, body, _ := p.send(t, testToken, "t9", "o1", "a1", "stream=2"); code != 200 || !strings.Contains(body, "[DONE]") {
		t.Errorf("stream within budget: %d %q", code, body)
	}
}

// TestBudgetHeadersNeverUpstream: turn, owner and agent reach the egress
// and never the model provider.
func TestBudgetHeadersNeverUpstream(t *testing.T) {
	up := newBudgetUpstream(t)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{TurnTokens: 1000})
	p.send(t, testToken, "t1", "o1", "a1", "tokens=3")
	p.send(t, testToken, "t1", "o1", "a1", "stream=2")
	if up.hits.Load() != 2 || len(up.leaked) != 0 {
		t.Errorf("hits %d, headers sent upstream: %v", up.hits.Load(), up.leaked)
	}
}

// TestBudgetUnauthenticated: a caller without the egress token cannot
// spend anyone's budget (its requests naming a victim's turn, owner and
// agent are refused before any count) nor see it; the victim then spends
// its whole budget.
func TestBudgetUnauthenticated(t *testing.T) {
	up := newBudgetUpstream(t)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{TurnTokens: 100, OwnerDailyTokens: 100, AgentDailyTokens: 100})
	for _, tok := range []string{"", "wrong", testToken + "x"} {
		for range 3 {
			code, body, _ := p.send(t, tok, "t1", "victim", "a1", "tokens=100")
			if code != http.StatusUnauthorized || strings.Contains(body, "budget") {
				t.Fatalf("token %q: %d %s", tok, code, body)
			}
		}
	}
	if up.hits.Load() != 0 {
		t.Fatal("an unauthenticated request reached the upstream")
	}
	if code, body, _ := p.send(t, testToken, "t1", "victim", "a1", "tokens=100"); code != 200 {
		t.Errorf("victim's own request: %d %s", code, body)
	}
}

// TestBudgetUnnamedTurn: requests naming no turn share no turn budget
// (each is held by its owner's and agent's), while an unnamed owner is
// still held to the owner ceiling.
func TestBudgetUnnamedTurn(t *testing.T) {
	up := newBudgetUpstream(t)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{TurnTokens: 10, OwnerDailyTokens: 30})
	for i := range 3 {
		if code, body, _ := p.send(t, testToken, "", "", "a1", "tokens=10"); code != 200 {
			t.Fatalf("unnamed turn %d: %d %s", i, code, body)
		}
	}
	code, body, _ := p.send(t, testToken, "", "", "a1", "tokens=1")
	if _, msg := errorCode(t, body); code != 429 || !strings.Contains(msg, "the owner has used 30 of its 30") {
		t.Errorf("unnamed owner over its day: %d %s", code, body)
	}
}

// TestBudgetOwnerHeaderBounded: an owner name over MaxOwnerHeader bytes is
// refused rather than kept.
func TestBudgetOwnerHeaderBounded(t *testing.T) {
	up := newBudgetUpstream(t)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{OwnerDailyTokens: 10})
	code, body, _ := p.send(t, testToken, "t1", strings.Repeat("o", MaxOwnerHeader+1), "a1", "tokens=1")
	if c, _ := errorCode(t, body); code != 400 || c != "bad_owner" || up.hits.Load() != 0 {
		t.Errorf("long owner: %d %s", code, body)
	}
}

// BenchmarkBudgetLedger is the budgets' own cost per model request: one
// admission and one charge (docs/performance.md).
func BenchmarkBudgetLedger(b *testing.B) {
	l := newLedger(budgets.Budgets{TurnTokens: 1 << 40, OwnerDailyTokens: 1 << 40, AgentDailyTokens: 1 << 40}, nil)
	ws := make([]who, 1024)
	for i := range ws {
		ws[i] = who{turn: fmt.Sprintf("task-%d", i), owner: fmt.Sprintf("app/user-%d", i%97), agent: fmt.Sprintf("agent-%d", i%7)}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		w := ws[i%len(ws)]
		if l.admit(w) != nil || l.charge(w, 100) != nil {
			b.Fatal("over budget")
		}
		i++
	}
}

// BenchmarkPassthroughBudgets is one whole model request through the
// passthrough to a real loopback upstream (a plain JSON answer with its
// usage), without and with all three ceilings: the difference is what the
// budgets add per request (docs/performance.md).
func BenchmarkPassthroughBudgets(b *testing.B) {
	for _, tc := range []struct {
		name string
		b    budgets.Budgets
	}{{"off", budgets.Budgets{}}, {"on", budgets.Budgets{TurnTokens: 1 << 40, OwnerDailyTokens: 1 << 40, AgentDailyTokens: 1 << 40}}} {
		b.Run(tc.name, func(b *testing.B) {
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":100,"completion_tokens":5}}`)
			}))
			defer up.Close()
			h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true, Budgets: tc.b})
			if err != nil {
				b.Fatal(err)
			}
			s := httptest.NewServer(h)
			defer s.Close()
			c := s.Client()
			i := 0
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/chat/completions", strings.NewReader(`{}`))
				req.Header.Set("Authorization", "Bearer "+testToken)
				req.Header.Set(telemetry.TaskIDHeader, fmt.Sprintf("task-%d", i%512))
				req.Header.Set(telemetry.OwnerHeader, "app/user")
				req.Header.Set(telemetry.AgentHeader, "alpha")
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.StatusCode)
				}
				i++
			}
		})
	}
}

// FuzzUsageReaderCut: whatever a stream sends, in whatever pieces, with a
// ceiling, what the caller reads is either the stream unchanged or a
// prefix of it ending at a line's end followed by the cut event, once,
// and only after a usage over the ceiling was reported.
func FuzzUsageReaderCut(f *testing.F) {
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":30}}\n\ndata: {\"choices\":[]}\n\ndata: [DONE]\n\n"), uint8(7), uint16(20))
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\r\n\r\ndata: [DONE]"), uint8(1), uint16(1))
	f.Add([]byte("data: {\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":9}}"), uint8(3), uint16(2))
	ev := budgetEvent("cut")
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8, limit uint16) {
		over := false
		u := newUsageReader(io.NopCloser(&pieces{b: body, n: int(chunk)%17 + 1}), "text/event-stream", func(int64, int64) {})
		u.report = func(in, out int64, canCut bool) []byte {
			if in+out > int64(limit) && canCut {
				over = true
				return ev
			}
			return nil
		}
		got, err := io.ReadAll(u)
		if err != nil {
			t.Fatal(err)
		}
		_ = u.Close()
		if bytes.Equal(got, body) {
			return
		}
		k := len(got) - len(ev)
		if !over || k < 0 || !bytes.Equal(got[k:], ev) || !bytes.Equal(got[:k], body[:k]) || k == 0 || body[k-1] != '\n' {
			t.Fatalf("cut wrong (over %v): %q from %q", over, got, body)
		}
	})
}

// TestBudgetGzipUpstream: a provider that compresses when asked (the
// vessel's HTTP client asks for gzip by itself) is still charged: the
// caller's Accept-Encoding never reaches the provider, so the egress's
// transport asks for gzip and reads plain bytes, and the key it scrubs from
// an error answer is found.
func TestBudgetGzipUpstream(t *testing.T) {
	var sawEncoding atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawEncoding.Store(r.Header.Get("Accept-Encoding"))
		body := `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":999,"completion_tokens":1}}`
		status := http.StatusOK
		if r.URL.Query().Get("fail") != "" {
			body, status = `{"error":{"message":"bad key `+testKey+`"}}`, http.StatusUnauthorized
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(status)
			zw := gzip.NewWriter(w)
			io.WriteString(zw, body)
			zw.Close()
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(up.Close)
	p := newBudgetProxy(t, up.URL, budgets.Budgets{TurnTokens: 100})
	send := func(q string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, p.url+"/v1/chat/completions?"+q, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set(telemetry.TaskIDHeader, "turn-gz")
		req.Header.Set(telemetry.OwnerHeader, "app/alice")
		req.Header.Set(telemetry.AgentHeader, "guide")
		req.Header.Set("Accept-Encoding", "gzip") // as Go's client does on its own
		tr := &http.Transport{DisableCompression: true}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(zr)
		}
		return resp.StatusCode, string(b)
	}
	if st, body := send("tokens=1000"); st != http.StatusOK {
		t.Fatalf("first answer: %d %s", st, body)
	}
	if e, _ := sawEncoding.Load().(string); e != "gzip" {
		t.Errorf("the provider was asked for %q, want the transport's own gzip", e)
	}
	if st, body := send("tokens=1000"); st != http.StatusTooManyRequests || !strings.Contains(body, "budget_exceeded") {
		t.Fatalf("a compressed answer of 1000 tokens was not charged: %d %s", st, body)
	}
	p = newBudgetProxy(t, up.URL, budgets.Budgets{})
	if st, body := send("fail=1"); st != http.StatusUnauthorized || strings.Contains(body, testKey) {
		t.Fatalf("error answer %d still holds the key: %s", st, body)
	}
}
