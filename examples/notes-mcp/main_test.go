package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestNotes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "notes")
	ct, st := mcp.NewInMemoryTransports()
	ss, err := newServer(dir).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if r := call("add_note", map[string]any{"title": "wren", "text": "small and loud"}); r.IsError {
		t.Fatalf("add: %s", text(r))
	}
	if r := call("read_note", map[string]any{"title": "wren"}); text(r) != "small and loud" {
		t.Errorf("read: %q", text(r))
	}
	r := call("list_notes", map[string]any{})
	b, _ := json.Marshal(r.StructuredContent)
	if string(b) != `{"titles":["wren"]}` {
		t.Errorf("list: %s", b)
	}
	for _, bad := range []string{"../escape", "", "a/b"} {
		if r := call("read_note", map[string]any{"title": bad}); !r.IsError || !strings.Contains(text(r), "invalid title") {
			t.Errorf("title %q: %v %s", bad, r.IsError, text(r))
		}
	}
}
