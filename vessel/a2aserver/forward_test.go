package a2aserver

import (
	"context"
	"slices"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

type namedTool struct{ name, scope string }

func (t namedTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: t.name}}
}
func (t namedTool) Scope() string { return t.scope }
func (t namedTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	return nil, nil
}

// TestCallCarrier: a carried call comes back with its caller, its narrowed
// tools (found again in the agent's own set; a name the agent lacks is
// dropped) and the approvals it added; a carried call without a caller or
// that is not JSON is refused.
func TestCallCarrier(t *testing.T) {
	set, err := tools.NewSet(namedTool{"species", "tools:read"}, namedTool{"bash", "tools:execute"})
	if err != nil {
		t.Fatal(err)
	}
	c := callCarrier{exec: &executor{tools: set}}
	p := &auth.Principal{Owner: "app1/alice", Kind: auth.KindApp, AppID: "app1", Subject: "alice",
		Scopes: []string{"tools:read"}, Agents: []string{"field-guide"}}
	ctx := auth.WithPrincipal(context.Background(), p)
	ctx = withTools(ctx, []tools.Tool{namedTool{"species", "tools:read"}, namedTool{"forged", "tools:read"}})
	ctx = withExtra(ctx, approval.Extra{Tools: []string{"species"}})
	call, err := c.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Restore(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	gp, ok := auth.PrincipalFrom(got)
	if !ok || gp.Owner != p.Owner || !slices.Equal(gp.Scopes, p.Scopes) || !slices.Equal(gp.Agents, p.Agents) || gp.Kind != p.Kind {
		t.Fatalf("principal %+v", gp)
	}
	list, ok := got.Value(toolsKey{}).([]tools.Tool)
	if !ok || len(list) != 1 || list[0].Def().Function.Name != "species" {
		t.Fatalf("tools %v", list)
	}
	if x := extraFrom(got); !slices.Equal(x.Tools, []string{"species"}) {
		t.Fatalf("extra %+v", x)
	}

	// Not narrowed stays not narrowed (nil is "every tool").
	call, err = c.Capture(auth.WithPrincipal(context.Background(), p))
	if err != nil {
		t.Fatal(err)
	}
	got, err = c.Restore(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if _, narrowed := got.Value(toolsKey{}).([]tools.Tool); narrowed || !extraFrom(got).Empty() {
		t.Fatal("an unnarrowed call came back narrowed or with approvals")
	}

	if _, err := c.Capture(context.Background()); err == nil {
		t.Fatal("captured a call without a caller")
	}
	for _, bad := range []string{`{}`, `{"principal":{"Owner":""}}`, `not json`, ``} {
		if _, err := c.Restore(context.Background(), []byte(bad)); err == nil {
			t.Fatalf("restored %q", bad)
		}
	}
}
