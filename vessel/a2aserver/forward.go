package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// callCarrier is an agent's store.CallCarrier: a decision forwarded to
// the replica holding its paused turn takes along what admit put in the
// caller's context (the principal, the narrowed tools, the approvals the
// caller added), so the holding replica's interceptors and executor see
// the same call.
type callCarrier struct{ exec *executor }

// carriedCall is the carried form. Tools are named, and found again in the
// agent's own set: a carried name the agent lacks is dropped, so a
// carried call can never widen what the caller may use.
type carriedCall struct {
	Principal *auth.Principal `json:"principal"`
	Narrowed  bool            `json:"narrowed,omitempty"`
	Tools     []string        `json:"tools,omitempty"`
	Extra     *approval.Extra `json:"extra,omitempty"`
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
	return json.Marshal(cc)
}

func (c callCarrier) Restore(ctx context.Context, call []byte) (context.Context, error) {
	var cc carriedCall
	if err := json.Unmarshal(call, &cc); err != nil {
		return nil, fmt.Errorf("decode the carried call: %w", err)
	}
	if cc.Principal == nil || cc.Principal.Owner == "" {
		return nil, errors.New("the carried call names no caller")
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
	return auth.WithPrincipal(ctx, cc.Principal), nil
}
