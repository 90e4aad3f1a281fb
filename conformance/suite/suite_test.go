package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sseServer answers every POST with the given result objects as SSE frames.
func sseServer(t *testing.T, results ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, res := range results {
			fmt.Fprintf(w, "id: x\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":%s}\n\n", res)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

const (
	fTask     = `{"task":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_SUBMITTED"}}}`
	fStarted  = `{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"type":"turn.started"}}]}},"metadata":{"vessel.event":"turn.started"}}}`
	fDelta    = `{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"type":"text.delta","text":"hi"}}]}},"metadata":{"vessel.event":"text.delta"}}}`
	fAnswer   = `{"artifactUpdate":{"taskId":"T","contextId":"C","lastChunk":true,"artifact":{"artifactId":"A","name":"answer","parts":[{"text":"hi","mediaType":"text/markdown"}]}}}`
	fFinished = `{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"type":"turn.finished","status":"ok","prompt_tokens":1,"completion_tokens":1}}]}},"metadata":{"vessel.event":"turn.finished"}}}`
)

func fTranscript(last bool) string {
	env := `{"version":1,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"hi"}]}`
	raw, _ := json.Marshal([]byte(env))
	return fmt.Sprintf(`{"artifactUpdate":{"taskId":"T","contextId":"C","lastChunk":%v,"artifact":{"artifactId":"TR","name":"transcript","parts":[{"raw":%s,"mediaType":"application/vnd.astralvessel.transcript+json"}]}}}`, last, raw)
}

func testEnv(url string) *env {
	return &env{cfg: Config{Agent: "a"}, base: url, hc: http.DefaultClient, run: "t", me: auth{key: "k", user: "u"}}
}

func TestStreamTurnOrder(t *testing.T) {
	cases := map[string]struct {
		frames []string
		bad    string // substring of the order error, "" for none
		where  string // where the error says it was found
	}{
		"good":                        {[]string{fTask, fStarted, fDelta, fTranscript(true), fAnswer, fFinished}, "", ""},
		"status before task":          {[]string{fStarted, fTask, fAnswer, fFinished}, "before the task", "frame 0: "},
		"working after artifact":      {[]string{fTask, fStarted, fTranscript(true), fDelta, fAnswer, fFinished}, "after the turn's artifacts", "frame 3: "},
		"transcript after answer":     {[]string{fTask, fStarted, fAnswer, fTranscript(true), fFinished}, "after the answer", "frame 3: "},
		"no lastChunk":                {[]string{fTask, fStarted, fTranscript(false), fAnswer, fFinished}, "lastChunk", "the stream's end (5 frames): "},
		"no event metadata":           {[]string{fTask, strings.Replace(fStarted, `,"metadata":{"vessel.event":"turn.started"}`, "", 1), fAnswer, fFinished}, "without metadata", "frame 1: "},
		"final without turn.finished": {[]string{fTask, fStarted, fAnswer, strings.Replace(fFinished, `"vessel.event":"turn.finished"`, `"vessel.event":"x"`, 1)}, "final status carries", "frame 3: "},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			srv := sseServer(t, c.frames...)
			e := testEnv(srv.URL)
			tr, err := e.streamTurn(context.Background(), obj{}, e.me, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.bad == "" {
				if tr.orderErr != nil {
					t.Fatalf("unexpected order error: %v", tr.orderErr)
				}
				if tr.finalState != stateCompleted || len(tr.transcript) != 2 || tr.taskID != "T" {
					t.Errorf("turn %+v", tr)
				}
				if md, ok := markdown(tr.answer); !ok || md != "hi" {
					t.Errorf("answer %q", md)
				}
				return
			}
			if tr.orderErr == nil || !strings.Contains(tr.orderErr.Error(), c.bad) {
				t.Errorf("order error %v, want one mentioning %q", tr.orderErr, c.bad)
			} else if !strings.HasPrefix(tr.orderErr.Error(), c.where) {
				// The violation names the frame it was found at, not the
				// frames known before the stream ended (none).
				t.Errorf("order error %q, want it found at %q", tr.orderErr, c.where)
			}
		})
	}
}

func TestStreamTurnErrors(t *testing.T) {
	srv := sseServer(t, fTask, fStarted)
	e := testEnv(srv.URL)
	if _, err := e.streamTurn(context.Background(), obj{}, e.me, nil); err == nil || !strings.Contains(err.Error(), "without a final status") {
		t.Errorf("unfinished stream: %v", err)
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"no"}`))
	}))
	defer plain.Close()
	e = testEnv(plain.URL)
	if _, err := e.streamTurn(context.Background(), obj{}, e.me, nil); err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("401: %v", err)
	}
}

func TestPadReaderLength(t *testing.T) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, newPadReader(1000))
	if err != nil || n != 1000 || !json.Valid(buf.Bytes()) {
		t.Errorf("n %d err %v valid %v", n, err, json.Valid(buf.Bytes()))
	}
}

func TestSummaryLine(t *testing.T) {
	rs := []Result{{Status: "PASS"}, {Status: "FAIL"}, {Status: "PASS"}}
	if got := Summarize(rs).String(); got != "2 passed, 1 failed" {
		t.Errorf("%q", got)
	}
	rs = append(rs, Result{Status: "SKIP"})
	if got := Summarize(rs).String(); got != "2 passed, 1 failed, 1 skipped" {
		t.Errorf("%q", got)
	}
	if got := (Result{Status: "PASS", Name: "card", Detail: "ok"}).String(); got != "PASS card: ok" {
		t.Errorf("%q", got)
	}
}

func TestCompact(t *testing.T) {
	got := fmt.Sprint(compact([]string{"a", "b", "b", "b", "c"}))
	if got != "[a b×3 c]" {
		t.Errorf("%s", got)
	}
}

// TestRunAgainstNothing checks every check reports (and fails) cleanly when
// the server is unreachable, and none panics.
func TestRunAgainstNothing(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rs := Run(context.Background(), Config{URL: url, Key: "k", Agent: "a"}, nil)
	sum := Summarize(rs)
	if sum.Passed != 0 || sum.Failed < 20 {
		t.Errorf("summary %s", sum)
	}
	for _, r := range rs {
		if strings.Contains(r.Detail, "panicked") {
			t.Errorf("%s", r)
		}
	}
}
