package a2aserver

import (
	"context"
	"slices"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
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
	got, end, err := c.Restore(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	end()
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
	got, end, err = c.Restore(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	end()
	if _, narrowed := got.Value(toolsKey{}).([]tools.Tool); narrowed || !extraFrom(got).Empty() {
		t.Fatal("an unnarrowed call came back narrowed or with approvals")
	}

	if _, err := c.Capture(context.Background()); err == nil {
		t.Fatal("captured a call without a caller")
	}
	for _, bad := range []string{`{}`, `{"principal":{"Owner":""}}`, `not json`, ``} {
		if _, _, err := c.Restore(context.Background(), []byte(bad)); err == nil {
			t.Fatalf("restored %q", bad)
		}
	}
}

// TestCallCarrierCountsOnce: a forwarded turn holds one [limits] place,
// on the replica that runs it. Capture (the receiving replica) gives its
// request's place back; Restore (the holding replica) takes one, which
// the turn claims and holds past the handler's return, or which end gives
// back when no turn claimed it.
func TestCallCarrierCountsOnce(t *testing.T) {
	set, err := tools.NewSet(namedTool{"species", "tools:read"})
	if err != nil {
		t.Fatal(err)
	}
	lim := settings.Limits{MaxTurns: 1, MaxTurnsPerAgent: 1, MaxTurnsPerApp: 1, MaxTurnsPerOwner: 1,
		MaxStreamsPerOwner: 1, MaxRequestsPerOwner: 1, RequestsPerSecondPerApp: 100, RequestBurstPerApp: 100, RetryAfterSecs: 1}
	received, holding := admission.New(lim, nil), admission.New(lim, nil)
	p := &auth.Principal{Owner: "app1/alice", Kind: auth.KindApp, AppID: "app1", Subject: "alice"}
	turns := func(c *admission.Controller) int { _, n, _, _ := c.Counts(p.Owner); return n }

	// The receiving replica admitted the decision as a turn.
	tk, err := received.Turn(whoOf(p, "field-guide"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(auth.WithPrincipal(context.Background(), p), ticketKey{}, tk)
	call, err := callCarrier{exec: &executor{tools: set}, adm: received, agent: "field-guide"}.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := turns(received); n != 0 {
		t.Fatalf("the receiving replica still counts %d turns after forwarding", n)
	}
	tk.Done() // the request's own end: nothing more to give back
	if n := turns(received); n != 0 {
		t.Fatalf("the request's end counted %d", n)
	}

	// The holding replica counts it, over its caps if need be (the
	// receiving replica checked them): fill its one place first.
	full, err := holding.Turn(whoOf(p, "field-guide"))
	if err != nil {
		t.Fatal(err)
	}
	hc := callCarrier{exec: &executor{tools: set}, adm: holding, agent: "field-guide"}
	rctx, end, err := hc.Restore(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	if n := turns(holding); n != 2 {
		t.Fatalf("the holding replica counts %d turns, want its own and the forwarded one", n)
	}
	held := ticketFrom(rctx).Claim() // the executor's claim: the turn runs
	end()                            // the handler returned (returnImmediately)
	if n := turns(holding); n != 2 {
		t.Fatalf("the running forwarded turn lost its place at the handler's return: %d", n)
	}
	held.Release()
	full.Done()
	if n := turns(holding); n != 0 {
		t.Fatalf("after the turns: %d", n)
	}
	// A forwarded message no turn took (refused by the interceptor) gives
	// its place back with end.
	_, end, err = hc.Restore(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	end()
	if n := turns(holding); n != 0 {
		t.Fatalf("an unclaimed forwarded place stayed: %d", n)
	}
}
