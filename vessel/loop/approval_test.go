package loop

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// recTool records the arguments of each call it runs.
type recTool struct {
	name, scope string
	mu          sync.Mutex
	ran         []string
}

func (t *recTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: t.name}}
}
func (t *recTool) Scope() string { return t.scope }
func (t *recTool) Run(_ context.Context, _ *tools.Turn, c tools.Call) (*tools.Result, error) {
	t.mu.Lock()
	t.ran = append(t.ran, c.ID+" "+c.Arguments)
	t.mu.Unlock()
	return &tools.Result{Output: "ran " + c.ID}, nil
}

func callOf(id, name, args string) transcript.ToolCall {
	return transcript.ToolCall{ID: id, Type: "function", Function: transcript.FunctionCall{Name: name, Arguments: args}}
}

// TestPauseResume: a step with calls that need approval pauses before any
// of its calls runs, keeps the workspace, and on resume runs exactly the
// step's calls as decided: approved, edited, refused (the model reads the
// reason), and the step's free call as it is.
func TestPauseResume(t *testing.T) {
	bash := &recTool{name: "bash", scope: "tools:execute"}
	read := &recTool{name: "read", scope: "tools:files"}
	rec := &recordModel{}
	m := &stepsModel{steps: []*model.Response{
		{ToolCalls: []transcript.ToolCall{callOf("a", "bash", `{"command":"rm x"}`), callOf("b", "bash", `{"command":"ls"}`),
			callOf("c", "bash", `{"command":"id"}`), callOf("d", "read", `{"path":"f"}`)}},
		{Content: "done"},
	}}
	en := &ender{}
	cfg := &Config{Model: recorder{rec, m}, Prompt: func() (string, error) { return "p", nil }, Ender: en,
		Approval:      approval.FromSettings(&settings.Approval{Scopes: []string{"tools:execute"}, AllowEdit: true}),
		NewApprovalID: func() string { return "ap1" }}
	in := &Input{Turn: &tools.Turn{ID: "t1"}, Text: "go", Tools: []tools.Tool{bash, read}}
	var evs []Event
	emit := func(e Event) bool { evs = append(evs, e); return true }
	res := Run(context.Background(), cfg, in, emit)
	if res.Status != StatusPaused || res.Pause == nil {
		t.Fatalf("status %q, want paused", res.Status)
	}
	req := res.Pause.Request
	if req.ApprovalID != "ap1" || len(req.Calls) != 3 || req.Calls[0].CallID != "a" || req.Calls[0].Arguments != `{"command":"rm x"}` ||
		req.Calls[0].Scope != "tools:execute" || !req.Calls[0].Editable || req.Step != 1 {
		t.Fatalf("request %+v", req)
	}
	if len(bash.ran)+len(read.ran) != 0 || len(en.ended) != 0 {
		t.Fatalf("before a decision: ran %v %v, ended %v", bash.ran, read.ran, en.ended)
	}
	dec := map[string]approval.Decision{
		"a": {CallID: "a", Verdict: approval.Deny, Reason: "never delete"},
		"b": {CallID: "b", Verdict: approval.Approve},
		"c": {CallID: "c", Verdict: approval.Edit, Arguments: `{"command":"whoami"}`},
	}
	res = res.Pause.Resume(context.Background(), cfg, dec, emit)
	if res.Status != StatusOK || res.Answer != "done" {
		t.Fatalf("after resume: %q %q", res.Status, res.Error)
	}
	got := strings.Join(bash.ran, ";")
	if strings.Contains(got, "rm x") || !strings.Contains(got, `b {"command":"ls"}`) || !strings.Contains(got, `c {"command":"whoami"}`) || len(read.ran) != 1 {
		t.Fatalf("ran %v %v", bash.ran, read.ran)
	}
	if len(en.ended) != 1 {
		t.Fatalf("workspace ended %v times", en.ended)
	}
	// The model's second request holds the refusal with its reason and the edit note.
	last := rec.reqs[len(rec.reqs)-1].Messages
	var toolOut []string
	for _, msg := range last {
		if msg.Role == "tool" {
			toolOut = append(toolOut, msg.ToolCallID+"="+transcript.TextOf(msg.Content))
		}
	}
	all := strings.Join(toolOut, "|")
	if !strings.Contains(all, `a=error: the call was refused by the approver and did not run; their reason: "never delete"`) ||
		!strings.Contains(all, "c=note: the approver edited") {
		t.Fatalf("tool results: %s", all)
	}
	var approvals []string
	for _, e := range evs {
		if e.Type() == EventToolFinished {
			if a, ok := e["approval"].(string); ok {
				approvals = append(approvals, e["call_id"].(string)+":"+a)
			}
		}
	}
	slices.Sort(approvals) // tool.finished comes in the order calls end
	if strings.Join(approvals, ",") != "a:denied,b:approved,c:edited" {
		t.Fatalf("tool.finished approvals %v", approvals)
	}
}

// TestPauseEnd: an abandoned pause ends the workspace and runs nothing.
func TestPauseEnd(t *testing.T) {
	bash := &recTool{name: "bash", scope: "tools:execute"}
	m := &stepsModel{steps: []*model.Response{{ToolCalls: []transcript.ToolCall{callOf("a", "bash", `{}`)}}}}
	en := &ender{}
	cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil }, Ender: en,
		Approval: approval.FromSettings(&settings.Approval{Tools: []string{"bash"}})}
	res := Run(context.Background(), cfg, &Input{Turn: &tools.Turn{ID: "t1"}, Text: "go", Tools: []tools.Tool{bash}}, func(Event) bool { return true })
	if res.Status != StatusPaused {
		t.Fatal(res.Status)
	}
	res = res.Pause.End(context.Background(), StatusApprovalTimeout, "no decision came")
	if res.Status != StatusApprovalTimeout || len(bash.ran) != 0 || len(en.ended) != 1 {
		t.Fatalf("%q ran %v ended %v", res.Status, bash.ran, en.ended)
	}
}

// TestNoApprovalNoPause: calls outside the policy run at once.
func TestNoApprovalNoPause(t *testing.T) {
	read := &recTool{name: "read", scope: "tools:files"}
	m := &stepsModel{steps: []*model.Response{{ToolCalls: []transcript.ToolCall{callOf("a", "read", `{}`)}}, {Content: "ok"}}}
	cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil },
		Approval: approval.FromSettings(&settings.Approval{Scopes: []string{"tools:execute"}})}
	res := Run(context.Background(), cfg, &Input{Text: "go", Tools: []tools.Tool{read}}, func(Event) bool { return true })
	if res.Status != StatusOK || len(read.ran) != 1 {
		t.Fatalf("%q %v", res.Status, read.ran)
	}
}

type recorder struct {
	rec *recordModel
	m   Modeler
}

func (r recorder) Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	r.rec.reqs = append(r.rec.reqs, req)
	return r.m.Complete(ctx, req, h)
}

type svcTool struct{ recTool }

func (*svcTool) Service() string { return "crm" }

// TestPauseOnService: a policy's services entry covers a tool that names
// its service, whatever its name and scope.
func TestPauseOnService(t *testing.T) {
	svc := &svcTool{recTool{name: "order", scope: "tools:read"}}
	m := &stepsModel{steps: []*model.Response{{ToolCalls: []transcript.ToolCall{callOf("a", "order", `{}`)}}, {Content: "ok"}}}
	cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil },
		Approval: approval.FromSettings(&settings.Approval{Services: []string{"crm"}})}
	res := Run(context.Background(), cfg, &Input{Text: "go", Tools: []tools.Tool{svc}}, func(Event) bool { return true })
	if res.Status != StatusPaused || res.Pause.Request.Calls[0].Service != "crm" {
		t.Fatalf("%q %+v", res.Status, res.Pause)
	}
}

// TestPauseRepeatedCallIDs: a model that gives two calls of one step the
// same id cannot make one decision cover both: the second is renamed, in
// the request and in the transcript.
func TestPauseRepeatedCallIDs(t *testing.T) {
	bash := &recTool{name: "bash", scope: "tools:execute"}
	m := &stepsModel{steps: []*model.Response{{ToolCalls: []transcript.ToolCall{
		callOf("c1", "bash", `{"command":"ls"}`), callOf("c1", "bash", `{"command":"rm -r /data"}`)}}, {Content: "ok"}}}
	cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil },
		Approval: approval.FromSettings(&settings.Approval{Tools: []string{"bash"}})}
	res := Run(context.Background(), cfg, &Input{Text: "go", Tools: []tools.Tool{bash}}, func(Event) bool { return true })
	if res.Status != StatusPaused {
		t.Fatal(res.Status)
	}
	calls := res.Pause.Request.Calls
	if len(calls) != 2 || calls[0].CallID != "c1" || calls[1].CallID != "c1~2" {
		t.Fatalf("calls %+v", calls)
	}
	res = res.Pause.Resume(context.Background(), cfg, map[string]approval.Decision{
		"c1": {CallID: "c1", Verdict: approval.Approve}, "c1~2": {CallID: "c1~2", Verdict: approval.Deny}}, func(Event) bool { return true })
	if res.Status != StatusOK || len(bash.ran) != 1 || bash.ran[0] != `c1 {"command":"ls"}` {
		t.Fatalf("%q ran %v", res.Status, bash.ran)
	}
	am := res.Messages[1]
	if am.Role != "assistant" || am.ToolCalls[1].ID != "c1~2" || res.Messages[3].ToolCallID != "c1~2" {
		t.Fatalf("transcript ids: %+v", res.Messages)
	}
}

// TestRepeatedCallIDsWithoutPolicy: with no approval policy a step whose
// calls repeat an id (one of them too long to take a suffix) still leaves a
// transcript that the next turn's history check accepts.
func TestRepeatedCallIDsWithoutPolicy(t *testing.T) {
	bash := &recTool{name: "bash", scope: "tools:execute"}
	long := strings.Repeat("x", transcript.MaxToolCallID)
	m := &stepsModel{steps: []*model.Response{{ToolCalls: []transcript.ToolCall{
		callOf("c1", "bash", `{}`), callOf("c1", "bash", `{}`), callOf(long, "bash", `{}`), callOf(long, "bash", `{}`)}}, {Content: "ok"}}}
	cfg := &Config{Model: m, Prompt: func() (string, error) { return "p", nil }}
	res := Run(context.Background(), cfg, &Input{Text: "go", Tools: []tools.Tool{bash}}, func(Event) bool { return true })
	if res.Status != StatusOK || len(bash.ran) != 4 {
		t.Fatalf("%q ran %v", res.Status, bash.ran)
	}
	ids := []string{}
	for _, c := range res.Messages[1].ToolCalls {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []string{"c1", "c1~2", long, "call_3~2"}) {
		t.Fatalf("ids %q", ids)
	}
	env := &transcript.Envelope{Version: 1, Messages: res.Messages}
	if err := env.Validate(); err != nil {
		t.Fatalf("the turn's transcript is refused as a history: %v", err)
	}
}
