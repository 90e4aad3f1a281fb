package primitives

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// Tool is `present` as a tools.Tool. The validated components go back in
// tools.Result.Components, which the loop gathers for the answer. It counts
// each turn's components to enforce a per-turn cap and forgets a turn when
// the loop ends it (tools.TurnEnder).
type Tool struct {
	lim      Limits
	maxTotal int

	mu     sync.Mutex
	counts map[string]int // turn id -> components attached so far
}

// NewTool returns the present tool; lim applies per call and the per-turn
// cap is 4 × lim.MaxComponents.
func NewTool(lim Limits) *Tool {
	lim = lim.orDefault()
	return &Tool{lim: lim, maxTotal: 4 * lim.MaxComponents, counts: map[string]int{}}
}

// Def implements tools.Tool.
func (t *Tool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{
		Name: ToolName, Description: Description(), Parameters: Parameters(),
	}}
}

// Scope implements tools.Tool.
func (t *Tool) Scope() string {
	if s, ok := toolset.BuiltinTools[ToolName]; ok {
		return s
	}
	return "tools:read"
}

// Run implements tools.Tool. Invalid components are a failed call whose
// text lists what to fix; nothing of that call is attached.
func (t *Tool) Run(_ context.Context, turn *tools.Turn, call tools.Call) (*tools.Result, error) {
	comps, err := Parse([]byte(call.Arguments), t.lim)
	if err != nil {
		return &tools.Result{Output: "present: " + err.Error() + ". Fix these and call present again.", IsError: true}, nil
	}
	n := countComponents(comps)
	id := ""
	if turn != nil {
		id = turn.ID
	}
	t.mu.Lock()
	if t.counts[id]+n > t.maxTotal {
		have := t.counts[id]
		t.mu.Unlock()
		return &tools.Result{Output: fmt.Sprintf("present: this turn already has %d components and may have at most %d; nothing was attached", have, t.maxTotal), IsError: true}, nil
	}
	t.counts[id] += n
	t.mu.Unlock()
	kinds := make([]string, 0, len(comps))
	for _, c := range comps {
		kinds = append(kinds, c.(map[string]any)["type"].(string))
	}
	return &tools.Result{
		Output: fmt.Sprintf("Attached %d component(s) (%s); they are shown with your answer. Still write the answer as text.",
			len(comps), strings.Join(kinds, ", ")),
		Components: comps,
	}, nil
}

// EndTurn implements tools.TurnEnder: it forgets the turn's count.
func (t *Tool) EndTurn(_ context.Context, turnID string) error {
	t.mu.Lock()
	delete(t.counts, turnID)
	t.mu.Unlock()
	return nil
}

// Factory offers `present` to agents whose manifest enables it in
// [tools] enabled together with [output] primitives = true (the spec
// refuses one without the other).
func Factory(t *Tool) tools.Factory {
	return tools.FactoryFunc(func(agent *settings.Agent) ([]tools.Tool, error) {
		if agent == nil || agent.Manifest == nil {
			return nil, nil
		}
		m := agent.Manifest
		if m.Output.Primitives && slices.Contains(m.Tools.Enabled, ToolName) {
			return []tools.Tool{t}, nil
		}
		return nil, nil
	})
}
