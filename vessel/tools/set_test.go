package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/model"
)

type named struct{ name, scope string }

func (n *named) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: n.name}}
}
func (n *named) Scope() string { return n.scope }
func (n *named) Run(context.Context, *Turn, Call) (*Result, error) {
	return &Result{Output: n.name}, nil
}

// expander offers what it was last "listed" with; Refresh counts.
type expander struct {
	named
	list      []Tool
	refreshed int
}

func (e *expander) Expand() []Tool          { return e.list }
func (e *expander) Refresh(context.Context) { e.refreshed++ }

// A set offers an expander's tools in its place, as they are now; a listed
// name already taken (by a fixed tool or an earlier expander) stays the
// first one's, and the expander itself is never offered.
func TestSetExpanders(t *testing.T) {
	fixed := &named{name: "srv__fixed", scope: "tools:read"}
	e1 := &expander{named: named{name: "srv__*"}}
	e2 := &expander{named: named{name: "two__*"}}
	s, err := NewSet(fixed, e1, e2, &named{name: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "bash,srv__fixed" {
		t.Errorf("before a listing: %s", got)
	}
	s.Refresh(context.Background())
	if e1.refreshed != 1 || e2.refreshed != 1 {
		t.Errorf("refreshed %d %d", e1.refreshed, e2.refreshed)
	}
	a, dup := &named{name: "srv__a"}, &named{name: "srv__fixed"}
	e1.list = []Tool{a, dup}
	e2.list = []Tool{&named{name: "srv__a"}, &named{name: "two__b", scope: "tools:write"}}
	if got := strings.Join(s.Names(), ","); got != "bash,srv__a,srv__fixed,two__b" {
		t.Errorf("expanded: %s", got)
	}
	if g, _ := s.Get("srv__fixed"); g != fixed {
		t.Error("a listed name replaced a fixed tool")
	}
	if g, _ := s.Get("srv__a"); g != a {
		t.Error("a second expander took a name already listed")
	}
	if _, ok := s.Get("srv__*"); ok {
		t.Error("the expander itself is offered")
	}
	kept := s.Filter(func(t Tool) bool { return t.Scope() == "tools:write" })
	if len(kept) != 1 || kept[0].Def().Function.Name != "two__b" {
		t.Errorf("filter: %v", kept)
	}
	e2.list = nil // listed again, without two__b
	if _, ok := s.Get("two__b"); ok {
		t.Error("a tool no longer listed is still in the set")
	}
}
