package loop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// fakeModel asks for two parallel calls, then answers.
type fakeModel struct{ calls int }

func (m *fakeModel) Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	m.calls++
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "tool" {
		for _, p := range []string{"a", "b", "c"} {
			h.Text(p)
		}
		return &model.Response{Content: "abc", Usage: model.Usage{PromptTokens: 2, CompletionTokens: 3}}, nil
	}
	return &model.Response{ToolCalls: []transcript.ToolCall{
		{ID: "1", Type: "function", Function: transcript.FunctionCall{Name: "wait", Arguments: "{}"}},
		{ID: "2", Type: "function", Function: transcript.FunctionCall{Name: "wait", Arguments: "{}"}},
	}, Usage: model.Usage{PromptTokens: 1, CompletionTokens: 1}}, nil
}

// waitTool returns only once both calls are running: it proves they run
// concurrently (a sequential loop would deadlock and hit the test timeout).
type waitTool struct {
	wg sync.WaitGroup
}

func (w *waitTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: "wait"}}
}
func (w *waitTool) Scope() string { return "tools:read" }
func (w *waitTool) Run(ctx context.Context, _ *tools.Turn, c tools.Call) (*tools.Result, error) {
	w.wg.Done()
	w.wg.Wait()
	return &tools.Result{Output: "done " + c.ID}, nil
}

type ender struct{ ended []string }

func (e *ender) EndTurn(_ context.Context, id string) error {
	e.ended = append(e.ended, id)
	return nil
}

func TestParallelCallsAndOrder(t *testing.T) {
	wt := &waitTool{}
	wt.wg.Add(2)
	en := &ender{}
	cfg := &Config{Model: &fakeModel{}, Prompt: func() (string, error) { return "p", nil }, Ender: en, CoalesceDelay: time.Hour}
	var evs []Event
	res := Run(context.Background(), cfg, &Input{Turn: &tools.Turn{ID: "t1"}, Text: "q", Tools: []tools.Tool{wt}},
		func(e Event) bool { evs = append(evs, e); return true })
	if res.Status != StatusOK || res.Answer != "abc" || res.Steps != 2 || res.PromptTokens != 3 || res.CompletionTokens != 4 {
		t.Fatalf("%+v", res)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type())
	}
	want := []string{"turn.started", "tool.started", "tool.started", "tool.finished", "tool.finished", "text.delta"}
	if len(types) != len(want) {
		t.Fatalf("events %v", types)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("events %v", types)
		}
	}
	if evs[5]["text"] != "abc" {
		t.Fatalf("coalesced text: %v", evs[5])
	}
	if len(res.Messages) != 5 || res.Messages[2].ToolCallID != "1" || res.Messages[3].ToolCallID != "2" {
		t.Fatalf("messages %+v", res.Messages)
	}
	if len(en.ended) != 1 || en.ended[0] != "t1" {
		t.Fatalf("ended %v", en.ended)
	}
}

type failModel struct{}

func (failModel) Complete(ctx context.Context, _ *model.Request, _ model.Handler) (*model.Response, error) {
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

func TestCancelAndDeadlineStatus(t *testing.T) {
	cfg := &Config{Model: failModel{}, Prompt: func() (string, error) { return "p", nil }}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrCancelled)
	if res := Run(ctx, cfg, &Input{Text: "q"}, func(Event) bool { return true }); res.Status != StatusCancelled {
		t.Fatalf("cancel: %s", res.Status)
	}
	dctx, dcancel := context.WithDeadlineCause(context.Background(), time.Now(), ErrDeadline)
	defer dcancel()
	if res := Run(dctx, cfg, &Input{Text: "q"}, func(Event) bool { return true }); res.Status != StatusDeadline {
		t.Fatalf("deadline: %s", res.Status)
	}
	bad := &Config{Model: failModel{}, Prompt: func() (string, error) { return "", errors.New("gone") }}
	if res := Run(context.Background(), bad, &Input{Text: "q"}, func(Event) bool { return true }); res.Status != StatusModelError {
		t.Fatalf("prompt: %s", res.Status)
	}
}

// fileTool returns files as any tool might, some of which break the rules.
type fileTool struct{}

func (fileTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: "wait"}}
}
func (fileTool) Scope() string { return "tools:files" }
func (fileTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	csv := []byte("a,b\n1,2\n")
	return &tools.Result{Output: "made files", Files: []tools.File{
		{Name: "a.csv", MediaType: "text/csv", Content: csv},
		{Name: "../b.csv", MediaType: "text/csv", Content: csv},
		{Name: "c.pdf", MediaType: "application/pdf", Content: []byte("%PDF-1.7\n%%EOF\n")},
		{Name: "d.csv", MediaType: "text/html", Content: csv},
	}}, nil
}

// The loop checks every tool's files, not only the sandbox's.
func TestLoopChecksFilesOfAnyTool(t *testing.T) {
	var refused []string
	cfg := &Config{Model: &fakeModel{}, Prompt: func() (string, error) { return "p", nil }, CoalesceDelay: time.Hour,
		OutputFiles: []string{"csv"}, FileRefused: func(callID, name, reason string) { refused = append(refused, callID+" "+name) }}
	res := Run(context.Background(), cfg, &Input{Turn: &tools.Turn{ID: "t1"}, Text: "q", Tools: []tools.Tool{fileTool{}}},
		func(Event) bool { return true })
	var got []string
	for _, f := range res.Files {
		got = append(got, f.CallID+" "+f.Name+" "+f.MediaType)
	}
	want := []string{"1 a.csv text/csv", "1 d.csv text/csv", "2 a.csv text/csv", "2 d.csv text/csv"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	slices.Sort(refused)
	if !slices.Equal(refused, []string{"1 ../b.csv", "1 c.pdf", "2 ../b.csv", "2 c.pdf"}) {
		t.Fatalf("refusals heard: %q", refused)
	}
	out := string(res.Messages[2].Content)
	for _, note := range []string{"made files", "file attached: a.csv (text/csv, 8 bytes)", `file refused: \"../b.csv\": the name must`,
		`file refused: c.pdf: files of type \"pdf\" are not allowed`} {
		if !strings.Contains(out, note) {
			t.Errorf("tool message %s lacks %s", out, note)
		}
	}
}

// stepsModel answers each call with the next response in its list.
type stepsModel struct{ steps []*model.Response }

func (m *stepsModel) Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	r := m.steps[0]
	if len(m.steps) > 1 {
		m.steps = m.steps[1:]
	}
	return r, nil
}

// TestOutputLimitsPerTurn: the text budget is the turn's, not one call's,
// and a Modeler that ignores Request.Limits is still held to them.
func TestOutputLimitsPerTurn(t *testing.T) {
	call := func(args string) *model.Response {
		return &model.Response{Content: "0123456789", ToolCalls: []transcript.ToolCall{
			{ID: "1", Type: "function", Function: transcript.FunctionCall{Name: "wait", Arguments: args}}}}
	}
	for _, tc := range []struct {
		name    string
		steps   []*model.Response
		status  string
		answer  string
		errWord string
	}{
		{"within", []*model.Response{call("{}"), {Content: "0123456789"}}, StatusOK, "0123456789", ""},
		{"text over the turn", []*model.Response{call("{}"), call("{}"), {Content: "0123456789"}}, StatusOutputLimit, "", "max_answer_bytes"},
		{"arguments", []*model.Response{call(`{"x":"` + string(make([]byte, 20)) + `"}`)}, StatusOutputLimit, "0123456789", "max_tool_arguments_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Model: &stepsModel{steps: tc.steps}, Prompt: func() (string, error) { return "p", nil },
				MaxAnswerBytes: 25, MaxArgumentsBytes: 20}
			res := Run(context.Background(), cfg, &Input{Text: "q", Tools: []tools.Tool{oneShot{}}}, func(Event) bool { return true })
			if res.Status != tc.status || res.Answer != tc.answer || (tc.errWord != "" && !strings.Contains(res.Error, tc.errWord)) {
				t.Fatalf("status %q answer %q error %q", res.Status, res.Answer, res.Error)
			}
			if fe := res.FinishedEvent(); tc.status == StatusOutputLimit && fe["error"] != res.Error {
				t.Fatalf("turn.finished %v", fe)
			}
			// The transcript never ends in an empty assistant message: the
			// next turn would send it back and providers refuse one.
			for i, m := range res.Messages {
				if m.Role == "assistant" && len(m.ToolCalls) == 0 && transcript.TextOf(m.Content) == "" {
					t.Fatalf("message %d is an empty assistant message: %+v", i, res.Messages)
				}
			}
		})
	}
}

// oneShot is a tool named "wait" that returns at once.
type oneShot struct{}

func (oneShot) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: "wait"}}
}
func (oneShot) Scope() string { return "tools:read" }
func (oneShot) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	return &tools.Result{Output: "ok"}, nil
}

func TestArgumentsLimitPerTurn(t *testing.T) {
	// Each call within 20 bytes, but 16 × 20 = 320 bytes for the turn.
	call := &model.Response{ToolCalls: []transcript.ToolCall{
		{ID: "1", Type: "function", Function: transcript.FunctionCall{Name: "wait", Arguments: `{"a":"0123456"}`}}}}
	cfg := &Config{Model: &stepsModel{steps: []*model.Response{call}}, Prompt: func() (string, error) { return "p", nil },
		MaxSteps: 100, MaxAnswerBytes: 25, MaxArgumentsBytes: 20}
	res := Run(context.Background(), cfg, &Input{Text: "q", Tools: []tools.Tool{oneShot{}}}, func(Event) bool { return true })
	if res.Status != StatusOutputLimit || !strings.Contains(res.Error, "320 bytes together") || res.Steps != 17 {
		t.Fatalf("status %q steps %d error %q", res.Status, res.Steps, res.Error)
	}
}

// thinker streams reasoning on every call, then asks for a tool again.
type thinker struct{}

func (thinker) Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	h.Reasoning("0123456789")
	return &model.Response{ToolCalls: []transcript.ToolCall{
		{ID: "1", Type: "function", Function: transcript.FunctionCall{Name: "wait", Arguments: "{}"}}}}, nil
}

func TestReasoningLimitPerTurn(t *testing.T) {
	cfg := &Config{Model: thinker{}, Prompt: func() (string, error) { return "p", nil }, MaxSteps: 100, MaxAnswerBytes: 25}
	res := Run(context.Background(), cfg, &Input{Text: "q", Tools: []tools.Tool{oneShot{}}}, func(Event) bool { return true })
	if res.Status != StatusOutputLimit || !strings.Contains(res.Error, "reasoning") || res.Steps != 3 {
		t.Fatalf("status %q steps %d error %q", res.Status, res.Steps, res.Error)
	}
}

// recordModel asks for a tool on every call it is offered tools, and keeps
// the requests.
type recordModel struct{ reqs []*model.Request }

func (m *recordModel) Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	m.reqs = append(m.reqs, req)
	if len(req.Tools) == 0 {
		return &model.Response{Content: "done"}, nil
	}
	return &model.Response{ToolCalls: []transcript.ToolCall{
		{ID: "1", Type: "function", Function: transcript.FunctionCall{Name: "wait", Arguments: "{}"}}}}, nil
}

// TestStepLimitOneSystemMessage: the call after max_steps has no tools and
// one system message, the first, which carries the prompt and the note.
func TestStepLimitOneSystemMessage(t *testing.T) {
	m := &recordModel{}
	cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil }, MaxSteps: 2}
	res := Run(context.Background(), cfg, &Input{Text: "q", Tools: []tools.Tool{oneShot{}}}, func(Event) bool { return true })
	if res.Status != StatusStepLimit || res.Answer != "done" || len(m.reqs) != 3 {
		t.Fatalf("status %q answer %q calls %d", res.Status, res.Answer, len(m.reqs))
	}
	final := m.reqs[2]
	var system []int
	for i, msg := range final.Messages {
		if msg.Role == "system" {
			system = append(system, i)
		}
	}
	if len(system) != 1 || system[0] != 0 || final.Tools != nil {
		t.Fatalf("system messages at %v, tools %v", system, final.Tools)
	}
	if got := transcript.TextOf(final.Messages[0].Content); !strings.HasPrefix(got, "p") || !strings.HasSuffix(got, StepLimitNote) {
		t.Fatalf("system message %q", got)
	}
	if got := transcript.TextOf(m.reqs[0].Messages[0].Content); got != "p" {
		t.Fatalf("the note changed the earlier calls' prompt: %q", got)
	}
}
