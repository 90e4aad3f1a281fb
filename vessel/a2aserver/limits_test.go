package a2aserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/limits"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// limitsOf sets the harness deployment's [limits].
func limitsOf(l settings.Limits) harnessOpt { return func(d *settings.Deployment) { d.Limits = l } }

// sleepSend is a JSON-RPC SendMessage that returns at once and leaves a
// 60 s tool call running: the turn holds its place until cancelled.
func sleepSend(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"#script:sleeptool"}]},"configuration":{"returnImmediately":true}}}`, id, id)
}

type answer struct {
	status int
	retry  string
	body   []byte
	err    error
}

// post sends body to path; safe from any goroutine.
func post(c *http.Client, url, body string, hdr map[string]string) answer {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, retry: resp.Header.Get("Retry-After"), body: b, err: err}
}

// rpcError returns a JSON-RPC answer's error code and message.
func rpcError(t *testing.T, b []byte) (int, string) {
	t.Helper()
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %s", b)
	}
	return m.Error.Code, m.Error.Message
}

func taskIDOf(t *testing.T, b []byte) string {
	t.Helper()
	var m struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Result.Task.ID == "" {
		t.Fatalf("no task in %s", b)
	}
	return m.Result.Task.ID
}

func (h *harness) cancelTask(t *testing.T, key, user, id string) {
	t.Helper()
	a := post(h.httpc, h.url+"/agents/"+h.agentID, `{"jsonrpc":"2.0","id":9,"method":"CancelTask","params":{"id":"`+id+`"}}`, appHdr(key, user))
	if a.err != nil || a.status != 200 || strings.Contains(string(a.body), `"error"`) {
		t.Fatalf("cancel %s: %d %s %v", id, a.status, a.body, a.err)
	}
}

func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A flood of 1,000 concurrent sends from one owner: exactly the owner's
// cap of turns runs, every other send is answered 429 with Retry-After at
// once (none hangs), and what the vessel holds afterwards is the running
// turns, not the flood.
func TestFloodFromOneOwner(t *testing.T) {
	const flood, limit = 1000, 4
	h := newHarness(t, limitsOf(settings.Limits{MaxTurnsPerOwner: limit, MaxRequestsPerOwner: 2 * flood, MaxStreamsPerOwner: flood,
		RequestsPerSecondPerApp: 1e6, RequestBurstPerApp: 1e6}))
	before := heapAfterGC()
	goroutines := runtime.NumGoroutine()
	// Each send on its own connection, closed after: nothing idles after.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	answers := make([]answer, flood)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range flood {
		wg.Go(func() {
			<-start
			answers[i] = post(c, h.url+"/agents/"+h.agentID, sleepSend(i), appHdr(h.keyApp1, "alice"))
		})
	}
	close(start)
	wg.Wait()
	var tasks []string
	refused := 0
	for i, a := range answers {
		switch {
		case a.err != nil:
			t.Fatalf("send %d: %v", i, a.err)
		case a.status == http.StatusOK:
			tasks = append(tasks, taskIDOf(t, a.body))
		case a.status == http.StatusTooManyRequests:
			refused++
			code, msg := rpcError(t, a.body)
			if code != a2aserver.CodeTooManyRequests || !strings.Contains(msg, admission.LimitTurnsPerOwner) || a.retry != strconv.Itoa(limits.DefaultRetryAfterSecs) {
				t.Fatalf("send %d refused as %d %q, Retry-After %q", i, code, msg, a.retry)
			}
		default:
			t.Fatalf("send %d: status %d %s", i, a.status, a.body)
		}
	}
	if len(tasks) != limit || refused != flood-limit {
		t.Fatalf("%d admitted, %d refused; want %d and %d", len(tasks), refused, limit, flood-limit)
	}
	waitFor(t, "the admitted turns to run", func() bool { _, _, running := h.sandbox.stats(); return running == limit })
	if turns, own, streams, reqs := h.srv.Admission().Counts("app1/alice"); turns != limit || own != limit || streams != 0 || reqs != 0 {
		t.Errorf("counts: %d turns, owner %d turns %d streams %d requests", turns, own, streams, reqs)
	}
	if n := h.srv.Admission().Tracked(); n != 1 {
		t.Errorf("%d owners tracked, want 1", n)
	}
	// Bounded: the refused sends left nothing behind. The running turns
	// and the store's caches are a few MB; 1,000 turns would be far more.
	if grown := int64(heapAfterGC()) - int64(before); grown > 32<<20 {
		t.Errorf("heap grew by %d MB over the flood", grown>>20)
	}
	waitFor(t, "the flood's goroutines to end", func() bool { return runtime.NumGoroutine() < goroutines+200 })
	// Another owner of the same app is not held back by alice's cap.
	if a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(5000), appHdr(h.keyApp1, "bob")); a.status != 200 {
		t.Fatalf("bob: %d %s", a.status, a.body)
	} else {
		h.cancelTask(t, h.keyApp1, "bob", taskIDOf(t, a.body))
	}
	// A turn's end gives its place back.
	h.cancelTask(t, h.keyApp1, "alice", tasks[0])
	waitFor(t, "the cancelled turn's place", func() bool { _, own, _, _ := h.srv.Admission().Counts("app1/alice"); return own == limit-1 })
	a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(5001), appHdr(h.keyApp1, "alice"))
	if a.status != 200 {
		t.Fatalf("after a cancel: %d %s", a.status, a.body)
	}
	tasks = append(tasks[1:], taskIDOf(t, a.body))
	for _, id := range tasks {
		h.cancelTask(t, h.keyApp1, "alice", id)
	}
	waitFor(t, "every place back", func() bool { n, _, _, _ := h.srv.Admission().Counts(""); return n == 0 })
}

// Each turn cap at its boundary, on both bindings: the cap's last turn is
// admitted, the next refused with the binding's 429, a request that starts
// no turn still served.
func TestTurnCapsOnBothBindings(t *testing.T) {
	for _, tc := range []struct {
		limit string
		lim   settings.Limits
		// second is the caller of the refused send: the cap counts both.
		key, user string
	}{
		{admission.LimitTurnsPerOwner, settings.Limits{MaxTurnsPerOwner: 2}, "key-one", "alice"},
		{admission.LimitTurnsPerApp, settings.Limits{MaxTurnsPerApp: 2}, "key-one", "bob"},
		{admission.LimitTurnsPerAgent, settings.Limits{MaxTurnsPerAgent: 2}, "key-two", "carol"},
		{admission.LimitTurns, settings.Limits{MaxTurns: 2}, "key-two", "dave"},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			h := newHarness(t, limitsOf(tc.lim))
			var ids []string
			for i := range 2 {
				a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(i), appHdr(h.keyApp1, "alice"))
				if a.status != 200 {
					t.Fatalf("send %d: %d %s", i, a.status, a.body)
				}
				ids = append(ids, taskIDOf(t, a.body))
			}
			a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(3), appHdr(tc.key, tc.user))
			if a.status != http.StatusTooManyRequests || a.retry != "2" {
				t.Fatalf("over the cap: %d Retry-After %q %s", a.status, a.retry, a.body)
			}
			if code, msg := rpcError(t, a.body); code != a2aserver.CodeTooManyRequests || !strings.Contains(msg, tc.limit) {
				t.Errorf("JSON-RPC refusal %d %q", code, msg)
			}
			r := post(h.httpc, h.url+"/agents/"+h.agentID+a2aserver.RESTPath+"/message:send",
				`{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"text":"#script:sleeptool"}]},"configuration":{"returnImmediately":true}}`, appHdr(tc.key, tc.user))
			var rest struct {
				Error struct {
					Code    int    `json:"code"`
					Status  string `json:"status"`
					Message string `json:"message"`
					Details []struct {
						Reason string `json:"reason"`
						Domain string `json:"domain"`
					} `json:"details"`
				} `json:"error"`
			}
			if r.status != http.StatusTooManyRequests || r.retry != "2" || json.Unmarshal(r.body, &rest) != nil {
				t.Fatalf("REST over the cap: %d %q %s", r.status, r.retry, r.body)
			}
			if rest.Error.Code != 429 || rest.Error.Status != "RESOURCE_EXHAUSTED" || !strings.Contains(rest.Error.Message, tc.limit) ||
				len(rest.Error.Details) != 1 || rest.Error.Details[0].Reason != "TOO_MANY_REQUESTS" || rest.Error.Details[0].Domain != a2aserver.ErrorDomain {
				t.Errorf("REST refusal %+v", rest.Error)
			}
			// GetTask starts nothing: served at the cap.
			g := post(h.httpc, h.url+"/agents/"+h.agentID, `{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"`+ids[0]+`"}}`, appHdr(h.keyApp1, "alice"))
			if g.status != 200 || strings.Contains(string(g.body), `"error"`) {
				t.Errorf("GetTask at the cap: %d %s", g.status, g.body)
			}
			h.cancelTask(t, h.keyApp1, "alice", ids[0])
			waitFor(t, "a place", func() bool { n, _, _, _ := h.srv.Admission().Counts(""); return n == 1 })
			a = post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(5), appHdr(tc.key, tc.user))
			if a.status != 200 {
				t.Fatalf("after a cancel: %d %s", a.status, a.body)
			}
			h.cancelTask(t, tc.key, tc.user, taskIDOf(t, a.body))
			h.cancelTask(t, h.keyApp1, "alice", ids[1])
		})
	}
}

// openStream opens an SSE stream (SubscribeToTask or SendStreamingMessage)
// and returns once its first event arrived; close ends it.
func openStream(t *testing.T, h *harness, body string, hdr map[string]string) (status int, b []byte, close func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/agents/"+h.agentID, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.httpc.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return resp.StatusCode, b, func() {}
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data:") {
		line, err = br.ReadString('\n')
	}
	if err != nil {
		resp.Body.Close()
		cancel()
		t.Fatalf("stream: %q %v", line, err)
	}
	return 200, []byte(line), func() { cancel(); resp.Body.Close() }
}

// Streams per owner and requests in flight per owner at their boundary.
func TestStreamsAndRequestsPerOwner(t *testing.T) {
	h := newHarness(t, limitsOf(settings.Limits{MaxStreamsPerOwner: 2, MaxRequestsPerOwner: 3}))
	alice := appHdr(h.keyApp1, "alice")
	a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(1), alice)
	if a.status != 200 {
		t.Fatalf("send: %d %s", a.status, a.body)
	}
	id := taskIDOf(t, a.body)
	defer h.cancelTask(t, h.keyApp1, "alice", id)
	sub := `{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"` + id + `"}}`
	_, _, close1 := openStream(t, h, sub, alice)
	status, _, close2 := openStream(t, h, `{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":{"messageId":"s","role":"ROLE_USER","parts":[{"text":"#script:sleeptool"}]}}}`, alice)
	if status != 200 {
		t.Fatalf("second stream: %d", status)
	}
	status, b, _ := openStream(t, h, sub, alice)
	if status != http.StatusTooManyRequests {
		t.Fatalf("third stream: %d %s", status, b)
	}
	if code, msg := rpcError(t, b); code != a2aserver.CodeTooManyRequests || !strings.Contains(msg, admission.LimitStreamsPerOwner) {
		t.Errorf("third stream refused as %d %q", code, msg)
	}
	// The 0.3 name counts as the same stream.
	status, _, _ = openStream(t, h, `{"jsonrpc":"2.0","id":4,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`, alice)
	if status != http.StatusTooManyRequests {
		t.Errorf("tasks/resubscribe over the cap: %d", status)
	}
	// Another owner has streams of its own.
	if status, b, closeBob := openStream(t, h, `{"jsonrpc":"2.0","id":5,"method":"SendStreamingMessage","params":{"message":{"messageId":"b","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, appHdr(h.keyApp1, "bob")); status != 200 {
		t.Errorf("bob's stream: %d %s", status, b)
	} else {
		closeBob()
	}
	// Two streams are two requests in flight: one more fits, then none.
	g := post(h.httpc, h.url+"/agents/"+h.agentID, `{"jsonrpc":"2.0","id":6,"method":"GetTask","params":{"id":"`+id+`"}}`, alice)
	if g.status != 200 {
		t.Fatalf("GetTask beside two streams: %d %s", g.status, g.body)
	}
	close1()
	waitFor(t, "the closed stream's place", func() bool { _, _, s, _ := h.srv.Admission().Counts("app1/alice"); return s == 1 })
	_, _, close3 := openStream(t, h, sub, alice)
	defer close3()
	// SubscribeToTask answers one frame per event; hold a third request
	// open by a stream of its own and check the fourth.
	close2()
	waitFor(t, "the second stream's place", func() bool { _, _, s, _ := h.srv.Admission().Counts("app1/alice"); return s == 1 })
	_, _, close4 := openStream(t, h, sub, alice)
	defer close4()
	status, b, close5 := openStream(t, h, sub, alice)
	close5()
	if status != http.StatusTooManyRequests {
		t.Fatalf("a third stream: %d %s", status, b)
	}
}

// Requests in flight per owner: a held stream fills the owner's one place.
func TestRequestsInFlightPerOwner(t *testing.T) {
	h := newHarness(t, limitsOf(settings.Limits{MaxRequestsPerOwner: 1}))
	alice := appHdr(h.keyApp1, "alice")
	status, b, closeStream := openStream(t, h, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"s","role":"ROLE_USER","parts":[{"text":"#script:sleeptool"}]}}}`, alice)
	if status != 200 {
		t.Fatalf("stream: %d %s", status, b)
	}
	g := post(h.httpc, h.url+"/agents/"+h.agentID, `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}`, alice)
	if g.status != http.StatusTooManyRequests || g.retry != "2" {
		t.Fatalf("a second request: %d %q %s", g.status, g.retry, g.body)
	}
	if code, msg := rpcError(t, g.body); code != a2aserver.CodeTooManyRequests || !strings.Contains(msg, admission.LimitRequestsOwner) {
		t.Errorf("refused as %d %q", code, msg)
	}
	closeStream()
	waitFor(t, "the stream's place", func() bool { _, _, _, r := h.srv.Admission().Counts("app1/alice"); return r == 0 })
	// The stream's turn goes on after its stream closed; ListTasks fits.
	l := post(h.httpc, h.url+"/agents/"+h.agentID, `{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{}}`, alice)
	if l.status != 200 {
		t.Fatalf("after the stream: %d %s", l.status, l.body)
	}
	var m struct {
		Result struct {
			Tasks []a2a.Task `json:"tasks"`
		} `json:"result"`
	}
	if err := json.Unmarshal(l.body, &m); err != nil || len(m.Result.Tasks) != 1 {
		t.Fatalf("tasks: %s", l.body)
	}
	h.cancelTask(t, h.keyApp1, "alice", string(m.Result.Tasks[0].ID))
}

// The request rate per app: the burst is served, the next request gets 429
// with the wait for the next token, another app is not affected.
func TestRatePerApp(t *testing.T) {
	h := newHarness(t, limitsOf(settings.Limits{RequestsPerSecondPerApp: 0.001, RequestBurstPerApp: 3}))
	list := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
	for i := range 3 {
		if a := post(h.httpc, h.url+"/agents/"+h.agentID, list, appHdr(h.keyApp1, fmt.Sprint("user", i))); a.status != 200 {
			t.Fatalf("request %d: %d %s", i, a.status, a.body)
		}
	}
	a := post(h.httpc, h.url+"/agents/"+h.agentID, list, appHdr(h.keyApp1, "user9"))
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("over the rate: %d %s", a.status, a.body)
	}
	if n, err := strconv.Atoi(a.retry); err != nil || n < 900 {
		t.Errorf("Retry-After %q: want the wait for the next token (1000 s)", a.retry)
	}
	if code, msg := rpcError(t, a.body); code != a2aserver.CodeTooManyRequests || !strings.Contains(msg, admission.LimitRate) {
		t.Errorf("refused as %d %q", code, msg)
	}
	// REST shares the bucket.
	if r := post(h.httpc, h.url+"/agents/"+h.agentID+a2aserver.RESTPath+"/message:send", `{}`, appHdr(h.keyApp1, "user9")); r.status != http.StatusTooManyRequests {
		t.Errorf("REST over the rate: %d %s", r.status, r.body)
	}
	// An unauthenticated caller is refused before it takes a token.
	if u := post(h.httpc, h.url+"/agents/"+h.agentID, list, nil); u.status != http.StatusUnauthorized {
		t.Errorf("no key: %d", u.status)
	}
	if b := post(h.httpc, h.url+"/agents/"+h.agentID, list, appHdr(h.keyApp2, "user1")); b.status != 200 {
		t.Errorf("another app: %d %s", b.status, b.body)
	}
}

// A sequential caller at max_turns_per_owner = 1 sends each turn only once
// it has read the previous one's final status, on both the blocking and
// the streaming method, turns that complete (with tool calls in the
// sandbox), stop at max_steps and are rejected: none meets 429, since
// every turn frees its place before its final status leaves (the other
// outcomes: TestPlaceFreedBeforeTheEnd).
func TestSequentialCallerAtOneTurn(t *testing.T) {
	h := newHarness(t, limitsOf(settings.Limits{MaxTurnsPerOwner: 1}))
	turns := []struct{ parts, state string }{
		{`[{"text":"#script:parallel"}]`, "TASK_STATE_COMPLETED"},
		{`[{"text":"hi"}]`, "TASK_STATE_COMPLETED"},
		{`[{"text":"#script:loop"}]`, `"status":"step_limit"`},
		{`[{"text":"hi"},{"url":"https://example.invalid/x.png","mediaType":"image/png"}]`, "TASK_STATE_REJECTED"},
	}
	for i := range 40 {
		tc := turns[i%len(turns)]
		method := "SendMessage"
		if i%2 == 1 {
			method = "SendStreamingMessage"
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"message":{"messageId":"q%d","role":"ROLE_USER","parts":%s}}}`,
			i, method, i, tc.parts)
		// post reads the whole answer: the stream ends after the final status.
		a := post(h.httpc, h.url+"/agents/"+h.agentID, body, appHdr(h.keyApp1, "alice"))
		if a.err != nil || a.status != http.StatusOK {
			t.Fatalf("turn %d (%s %s): %d %v %s", i, method, tc.parts, a.status, a.err, a.body)
		}
		if !strings.Contains(string(a.body), tc.state) || strings.Contains(string(a.body), `"error":{`) {
			t.Fatalf("turn %d (%s %s) did not end with %s: %s", i, method, tc.parts, tc.state, a.body)
		}
	}
	if n, ot, _, _ := h.srv.Admission().Counts("alice"); n != 0 || ot != 0 {
		t.Fatalf("after the turns: %d turns, %d for the owner", n, ot)
	}
}
