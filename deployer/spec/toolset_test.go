package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
)

// TestToolsetOfExamples: the notebook's stdio MCP server and the field
// guide's command tool reach sandboxd as the package declares them, and
// the JSON round trip keeps them.
func TestToolsetOfExamples(t *testing.T) {
	nb, err := LoadPackage(filepath.Join("..", "..", "examples", "notebook"), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	s := nb.Toolset()
	// sandboxd's TestServeNotebookExample serves this set.
	want := []toolset.Tool{{Name: "notes", MCP: &toolset.StdioMCP{
		Command: []string{"{package}/bin/notes-mcp", "--dir", "notes"}, Env: map[string]string{"NOTES_LANG": "en"}}}}
	if !reflect.DeepEqual(s.MCP, want) || s.StdioMCP("notes") == nil || len(s.Declared) != 0 {
		t.Fatalf("notebook: %+v, want MCP %+v", s, want)
	}
	fg, err := LoadPackage(filepath.Join("..", "..", "examples", "field-guide"), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	s = fg.Toolset()
	if len(s.Declared) != 1 || s.Declared[0].Name != fg.Declared[0].Name || !reflect.DeepEqual(s.Declared[0].Command, fg.Declared[0].Command) {
		t.Fatalf("field guide tools: %+v, want %+v", s.Declared, fg.Declared)
	}
	if !reflect.DeepEqual(s.Tools.Enabled, fg.Tools.Enabled) || !reflect.DeepEqual(s.Output.Files, fg.Output.Files) {
		t.Fatalf("built-ins %v files %v, want %v %v", s.Tools.Enabled, s.Output.Files, fg.Tools.Enabled, fg.Output.Files)
	}
	back, err := toolset.Parse(s.Encode())
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, s)
	}
	var none *Manifest
	if none.Toolset() != nil {
		t.Fatal("no manifest, no tool set")
	}
}
