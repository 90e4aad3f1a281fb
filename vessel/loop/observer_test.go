package loop

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

type heard struct {
	mu     sync.Mutex
	models []error
	calls  []string // tool/outcome
}

func (h *heard) ModelCall(_ time.Duration, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.models = append(h.models, err)
}

func (h *heard) ToolCall(tool, outcome string, _ time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, tool+"/"+outcome)
}

// fourCalls asks for an ok call, a failing one, a broken one and one of a
// tool that does not exist, then answers.
type fourCalls struct{}

func (fourCalls) Complete(_ context.Context, req *model.Request, _ model.Handler) (*model.Response, error) {
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		return &model.Response{Content: "done"}, nil
	}
	call := func(id, name string) transcript.ToolCall {
		return transcript.ToolCall{ID: id, Type: "function", Function: transcript.FunctionCall{Name: name, Arguments: "{}"}}
	}
	return &model.Response{ToolCalls: []transcript.ToolCall{call("1", "good"), call("2", "bad"), call("3", "broken"), call("4", "made-up-name")}}, nil
}

type outcomeTool struct{ name string }

func (o outcomeTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: o.name}}
}
func (o outcomeTool) Scope() string { return "tools:read" }
func (o outcomeTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	switch o.name {
	case "bad":
		return &tools.Result{Output: "exit code 1", IsError: true}, nil
	case "broken":
		return nil, errors.New("sandbox unreachable")
	}
	return &tools.Result{Output: "ok"}, nil
}

// TestObserverHearsOutcomes: the observer hears each model call and each
// tool call with its outcome, and a tool the model made up is reported as
// "unknown", never by the model's name for it.
func TestObserverHearsOutcomes(t *testing.T) {
	h := &heard{}
	cfg := &Config{Model: fourCalls{}, Prompt: func() (string, error) { return "p", nil }, Observer: h}
	in := &Input{Turn: &tools.Turn{ID: "t"}, Text: "q", Tools: []tools.Tool{outcomeTool{"good"}, outcomeTool{"bad"}, outcomeTool{"broken"}}}
	res := Run(context.Background(), cfg, in, func(Event) bool { return true })
	if res.Status != StatusOK {
		t.Fatalf("%+v", res)
	}
	slices.Sort(h.calls)
	want := []string{"bad/" + OutcomeError, "broken/" + OutcomeFailed, "good/" + OutcomeOK, "unknown/" + OutcomeUnknownTool}
	if !slices.Equal(h.calls, want) {
		t.Errorf("tool calls heard %v, want %v", h.calls, want)
	}
	if len(h.models) != 2 || h.models[0] != nil || h.models[1] != nil {
		t.Errorf("model calls heard %v", h.models)
	}
}
