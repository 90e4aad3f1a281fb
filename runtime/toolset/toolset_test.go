package toolset

import (
	"reflect"
	"strings"
	"testing"
)

func TestEncodeParse(t *testing.T) {
	in := &Set{
		Tools:    Builtins{Enabled: []string{"bash"}},
		Output:   Output{Files: []string{"png"}},
		Declared: []Tool{{Name: "echo", Command: []string{"{package}/echo"}, TimeoutSeconds: 5}},
		MCP:      []Tool{{Name: "probe", MCP: &StdioMCP{Command: []string{"probe"}, Env: map[string]string{"A": "1"}}}},
	}
	out, err := Parse(in.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	if out.StdioMCP("probe") == nil || out.StdioMCP("echo") != nil {
		t.Fatal("StdioMCP finds MCP servers only")
	}
	var none *Set
	if none.StdioMCP("probe") != nil {
		t.Fatal("a nil set has no MCP server")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, v := range []string{``, `{"tools":{"enabled":["bash"]},"extra":1}`, `{} {}`, `[]`} {
		if _, err := Parse(v); err == nil || !strings.HasPrefix(err.Error(), "tools: ") {
			t.Errorf("Parse(%q) = %v, want a tools: error", v, err)
		}
	}
	s, err := Parse(`{}`)
	if err != nil || s.Tools.Enabled == nil || len(s.Tools.Enabled) != 0 || s.Output.Files == nil {
		t.Fatalf("Parse({}) = %+v, %v; want no built-ins and no files, not nil", s, err)
	}
}
