package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// callingModel calls one tool, then answers with what the tool said; it
// keeps the requests it got.
type callingModel struct {
	tool, args string
	reqs       []*model.Request
}

func (m *callingModel) Complete(_ context.Context, req *model.Request, _ model.Handler) (*model.Response, error) {
	m.reqs = append(m.reqs, req)
	if len(m.reqs) == 1 {
		return &model.Response{ToolCalls: []transcript.ToolCall{{ID: "c1", Type: "function",
			Function: transcript.FunctionCall{Name: m.tool, Arguments: m.args}}}}, nil
	}
	last := req.Messages[len(req.Messages)-1]
	return &model.Response{Content: "answer: " + string(last.Content)}, nil
}

// A turn through the real loop: the MCP tool's listed schema reaches the
// model (the loop prepares the tool first), the call reaches the SDK server
// on loopback, and its text comes back as the tool result.
func TestLoopCallsMCPTool(t *testing.T) {
	ts, s := realServer(t)
	list, err := Tools(agentWith(ts.URL, "search"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &callingModel{tool: "issues__search", args: `{"query":"leak"}`}
	cfg := &loop.Config{Model: m, Prompt: func() (string, error) { return "p", nil }}
	res := loop.Run(context.Background(), cfg, &loop.Input{Turn: turn, Text: "q", Tools: list}, func(loop.Event) bool { return true })
	if res.Status != loop.StatusOK || !strings.Contains(res.Answer, "found 2 issues for leak") {
		t.Fatalf("status %q answer %q error %q", res.Status, res.Answer, res.Error)
	}
	defs, _ := json.Marshal(m.reqs[0].Tools)
	if !strings.Contains(string(defs), `"name":"issues__search"`) || !strings.Contains(string(defs), `"query"`) {
		t.Errorf("definitions sent: %s", defs)
	}
	if h := s.last(); h.Get(HeaderTool) != "search" || h.Get(HeaderOwner) != "web/alice" {
		t.Errorf("headers %v", h)
	}
}

// The approval policy covers MCP tools by name, by scope and by server.
func TestLoopPausesMCPTool(t *testing.T) {
	ts, s := realServer(t)
	list, err := Tools(agentWith(ts.URL, "search"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ap := range []*settings.Approval{{Tools: []string{"issues__search"}}, {Scopes: []string{"tools:read"}}, {Services: []string{"issues"}}} {
		m := &callingModel{tool: "issues__search", args: `{"query":"leak"}`}
		before := s.callCount()
		cfg := &loop.Config{Model: m, Prompt: func() (string, error) { return "p", nil }, Approval: approval.FromSettings(ap)}
		res := loop.Run(context.Background(), cfg, &loop.Input{Turn: turn, Text: "q", Tools: list}, func(loop.Event) bool { return true })
		if res.Status != loop.StatusPaused || res.Pause == nil || len(res.Pause.Request.Calls) != 1 ||
			res.Pause.Request.Calls[0].Tool != "issues__search" || res.Pause.Request.Calls[0].Service != "issues" {
			t.Fatalf("%+v: status %q pause %+v", ap, res.Status, res.Pause)
		}
		res.Pause.End(context.Background(), loop.StatusCancelled, "test")
		if s.callCount() != before {
			t.Errorf("%+v: the server was called before approval", ap)
		}
	}
	var _ tools.Preparer = list[0].(*Tool)
}

// A caller's scopes narrow MCP tools like any tool: a token with
// tools:read keeps issues__search and loses issues__chart (tools:files).
func TestScopesNarrowMCPTools(t *testing.T) {
	list, err := Tools(agentWith("http://127.0.0.1:1/mcp", "search", "chart"), nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := scopes.Narrow(list, func(t tools.Tool) string { return t.Def().Function.Name },
		func(t tools.Tool) string { return t.Scope() }, scopes.FromToken([]string{"tools:read"}))
	if len(kept) != 1 || kept[0].Def().Function.Name != "issues__search" {
		t.Errorf("kept %d tools", len(kept))
	}
}
