package primitives

import (
	"context"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

func TestPresentTool(t *testing.T) {
	pt := NewTool(Limits{MaxComponents: 2})
	turn := &tools.Turn{ID: "t1"}
	res, err := pt.Run(context.Background(), turn, tools.Call{Name: "present", Arguments: `{"components":[{"type":"metric","title":"Humidity","value":"62%"}]}`})
	if err != nil || res.IsError || len(res.Components) != 1 {
		t.Fatalf("res = %+v, %v", res, err)
	}
	if res.Components[0].(map[string]any)["variant"] != "default" {
		t.Fatal("defaults not filled")
	}
	res, _ = pt.Run(context.Background(), turn, tools.Call{Arguments: `{"components":[{"type":"card","title":"x","content":[{"type":"text"}]}]}`})
	if !res.IsError || !strings.Contains(res.Output, `components[0].content[0]: text requires "content"`) || len(res.Components) != 0 {
		t.Fatalf("invalid: %+v", res)
	}
	// Per-turn cap (4 × 2 = 8): 1 so far, 7 more fit, the next does not.
	for i := 0; i < 3; i++ {
		res, _ = pt.Run(context.Background(), turn, tools.Call{Arguments: `[{"type":"divider"},{"type":"divider"}]`})
		if res.IsError {
			t.Fatalf("call %d refused: %s", i, res.Output)
		}
	}
	res, _ = pt.Run(context.Background(), turn, tools.Call{Arguments: `[{"type":"divider"},{"type":"divider"}]`})
	if !res.IsError || !strings.Contains(res.Output, "at most 8") {
		t.Fatalf("turn cap: %+v", res)
	}
	// Another turn is unaffected; ending the turn resets it.
	if res, _ = pt.Run(context.Background(), &tools.Turn{ID: "t2"}, tools.Call{Arguments: `[{"type":"divider"}]`}); res.IsError {
		t.Fatal(res.Output)
	}
	_ = pt.EndTurn(context.Background(), "t1")
	if res, _ = pt.Run(context.Background(), turn, tools.Call{Arguments: `[{"type":"divider"}]`}); res.IsError {
		t.Fatal(res.Output)
	}
	if pt.Def().Function.Name != "present" || pt.Scope() != "tools:read" {
		t.Fatal("def/scope")
	}
}

func TestPresentFactory(t *testing.T) {
	pt := NewTool(Limits{})
	f := Factory(pt)
	on := &settings.Agent{Manifest: &settings.Manifest{Tools: settings.Builtins{Enabled: []string{"read", "present"}}, Output: settings.Output{Primitives: true}}}
	off := &settings.Agent{Manifest: &settings.Manifest{Tools: settings.Builtins{Enabled: []string{"read"}}, Output: settings.Output{Primitives: true}}}
	if l, _ := f.Tools(on); len(l) != 1 {
		t.Fatal("present not offered")
	}
	if l, _ := f.Tools(off); len(l) != 0 {
		t.Fatal("present offered without being enabled")
	}
	if l, _ := f.Tools(&settings.Agent{}); len(l) != 0 {
		t.Fatal("agent without manifest")
	}
}
