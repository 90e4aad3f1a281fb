package loop

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// sequence serves one stream per request, in order, and keeps each body.
type sequence struct {
	mu      sync.Mutex
	streams []string
	bodies  []string
}

func (s *sequence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	if i >= len(s.streams) {
		w.WriteHeader(http.StatusTeapot)
		return
	}
	if strings.HasPrefix(s.streams[i], "429") {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, s.streams[i])
}

type countTool struct{ runs int }

func (c *countTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: "get_date"}}
}
func (c *countTool) Scope() string { return "tools:read" }
func (c *countTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	c.runs++
	return &tools.Result{Output: "2026-12-07"}, nil
}

func runAgainst(t *testing.T, seq *sequence, tool *countTool) (*Result, []Event) {
	t.Helper()
	srv := httptest.NewServer(seq)
	t.Cleanup(srv.Close)
	cfg := &Config{Model: &model.Client{BaseURL: srv.URL, Backoff: 1}, ModelName: "m", Prompt: func() (string, error) { return "p", nil }}
	var evs []Event
	res := Run(context.Background(), cfg, &Input{Text: "q", Tools: []tools.Tool{tool}}, func(e Event) bool { evs = append(evs, e); return true })
	return res, evs
}

const toolCutByLength = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_date","arguments":"{\"day\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":5}}

data: [DONE]

`

// TestIncompleteToolCallNotRun: a tool call cut by length mid-arguments
// ends the turn incomplete (reason length); the call never runs and the
// step's tokens are counted.
func TestIncompleteToolCallNotRun(t *testing.T) {
	var tool countTool
	res, _ := runAgainst(t, &sequence{streams: []string{toolCutByLength}}, &tool)
	if res.Status != StatusIncomplete || res.Reason != model.IncompleteLength || tool.runs != 0 {
		t.Fatalf("status %s reason %q runs %d", res.Status, res.Reason, tool.runs)
	}
	if res.PromptTokens != 7 || res.CompletionTokens != 5 || !strings.HasPrefix(res.Error, "incomplete: length") {
		t.Fatalf("%+v", res)
	}
	if ev := res.FinishedEvent(); ev["reason"] != "length" || ev["status"] != "incomplete" {
		t.Fatalf("%v", ev)
	}
	// Nothing was said: the transcript is the question alone, a history the
	// next turn accepts.
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("transcript %+v", res.Messages)
	}
}

const thinkingTool = `data: {"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Need the date."}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"get_date","arguments":"{}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`

const answer = `data: {"choices":[{"index":0,"delta":{"content":"It is Monday."},"finish_reason":"stop"}]}

data: [DONE]

`

// TestReasoningSentBackWithinTurn: DeepSeek's thinking mode with tools,
// after a retried 429: the retry is reported, the second request carries
// reasoning_content on the assistant tool-call message, and the turn's
// transcript keeps it for later turns.
func TestReasoningSentBackWithinTurn(t *testing.T) {
	var tool countTool
	seq := &sequence{streams: []string{"429", thinkingTool, answer}}
	res, evs := runAgainst(t, seq, &tool)
	if res.Status != StatusOK || res.Answer != "It is Monday." || tool.runs != 1 {
		t.Fatalf("%+v", res)
	}
	retried := false
	for _, e := range evs {
		retried = retried || e.Type() == EventModelRetry && e["attempt"] == 2
	}
	if !retried {
		t.Fatalf("no model.retry event in %v", evs)
	}
	want := `"tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_date","arguments":"{}"}}],"reasoning_content":"Need the date."}`
	if len(seq.bodies) != 3 || !strings.Contains(seq.bodies[2], want) {
		t.Fatalf("second request %s", seq.bodies[len(seq.bodies)-1])
	}
	if string(res.Messages[1].Extra) != `{"reasoning_content":"Need the date."}` {
		t.Fatalf("transcript %+v", res.Messages[1])
	}
}
