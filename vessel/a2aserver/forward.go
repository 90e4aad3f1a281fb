package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// callCarrier is an agent's store.CallCarrier: a decision forwarded to
// the replica holding its paused turn takes along what admit put in the
// caller's context (the principal, the narrowed tools, the approvals the
// caller added), so the holding replica's interceptors and executor see
// the same call. The resumed turn counts under [limits] once, where it
// runs: Capture gives the receiving replica's turn place back, Restore
// takes one on the holding replica (admission.Controller.Forwarded).
type callCarrier struct {
	exec  *executor
	adm   *admission.Controller // nil: no turn place is taken (tests)
	agent string
}

// carriedCall is the carried form. Tools are named, and found again in the
// agent's own set: a carried name the agent lacks is dropped, so a
// carried call can never widen what the caller may use.
type carriedCall struct {
	Principal *auth.Principal `json:"principal"`
	Narrowed  bool            `json:"narrowed,omitempty"`
	Tools     []string        `json:"tools,omitempty"`
	Extra     *approval.Extra `json:"extra,omitempty"`
	// Extensions are the A2A extensions the call requested that the vessel
	// acts on (A2A-Extensions): a push config the forwarded message
	// registers keeps the push-working flag.
	Extensions []string `json:"extensions,omitempty"`
}

func (c callCarrier) Capture(ctx context.Context) ([]byte, error) {
	p, ok := auth.PrincipalFrom(ctx)
	if !ok {
		return nil, errors.New("no authenticated caller")
	}
	cc := carriedCall{Principal: p}
	if list, ok := ctx.Value(toolsKey{}).([]tools.Tool); ok {
		cc.Narrowed = true
		cc.Tools = make([]string, len(list))
		for i, t := range list {
			cc.Tools[i] = t.Def().Function.Name
		}
	}
	if x := extraFrom(ctx); !x.Empty() {
		cc.Extra = &x
	}
	if e, ok := a2asrv.ExtensionsFrom(ctx); ok && requested(e, store.PushWorkingURI) {
		cc.Extensions = []string{store.PushWorkingURI}
	}
	b, err := json.Marshal(cc)
	if err != nil {
		return nil, fmt.Errorf("encode the carried call: %w", err)
	}
	// The turn runs and counts on the holding replica (Restore).
	ticketFrom(ctx).Forward()
	return b, nil
}

func (c callCarrier) Restore(ctx context.Context, call []byte) (context.Context, func(), error) {
	var cc carriedCall
	if err := json.Unmarshal(call, &cc); err != nil {
		return nil, nil, fmt.Errorf("decode the carried call: %w", err)
	}
	if cc.Principal == nil || cc.Principal.Owner == "" {
		return nil, nil, errors.New("the carried call names no caller")
	}
	end := func() {}
	if c.adm != nil {
		t := c.adm.Forwarded(whoOf(cc.Principal, c.agent))
		ctx = context.WithValue(ctx, ticketKey{}, t)
		end = t.Done
	}
	if cc.Narrowed {
		c.exec.tools.Refresh(ctx) // MCP servers with tools = ["*"] (docs/mcp.md)
		ctx = withTools(ctx, c.exec.tools.Filter(func(t tools.Tool) bool {
			return slices.Contains(cc.Tools, t.Def().Function.Name)
		}))
	}
	if cc.Extra != nil {
		ctx = withExtra(ctx, *cc.Extra)
	}
	if len(cc.Extensions) > 0 {
		params := a2asrv.NewServiceParams(nil)
		if prev, ok := a2asrv.CallContextFrom(ctx); ok && prev.ServiceParams() != nil {
			params = prev.ServiceParams()
		}
		ctx, _ = a2asrv.NewCallContext(ctx, params.With(map[string][]string{a2a.SvcParamExtensions: cc.Extensions}))
	}
	return auth.WithPrincipal(ctx, cc.Principal), end, nil
}
