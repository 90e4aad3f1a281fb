package mcp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDefBuiltOncePerListing: a tool's definition (its schema checked by a
// JSON round trip) is built once per listing and rebuilt when the listing
// changes or the tool leaves it, so a large schema is not re-encoded on
// every Def of a turn.
func TestDefBuiltOncePerListing(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	srv := &Server{name: "s", listed: map[string]*mcp.Tool{"a": {Name: "a", Description: "first", InputSchema: schema}}}
	tool := &Tool{srv: srv, name: "a", full: "s__a"}

	d1, d2 := tool.Def(), tool.Def()
	if d1.Function.Description != "first" || d1.Function.Name != "s__a" {
		t.Fatalf("Def = %+v", d1.Function)
	}
	if reflect.ValueOf(d1.Function.Parameters).Pointer() != reflect.ValueOf(d2.Function.Parameters).Pointer() {
		t.Fatal("the schema was rebuilt for an unchanged listing")
	}

	srv.mu.Lock()
	srv.listed = map[string]*mcp.Tool{"a": {Name: "a", Description: "second", InputSchema: schema}}
	srv.mu.Unlock()
	if d := tool.Def(); d.Function.Description != "second" {
		t.Fatalf("after a new listing Def = %q, want the new description", d.Function.Description)
	}

	srv.mu.Lock()
	srv.listed = map[string]*mcp.Tool{}
	srv.mu.Unlock()
	if d := tool.Def(); !strings.Contains(d.Function.Description, `does not offer a tool "a"`) {
		t.Fatalf("after the tool left the listing Def = %q", d.Function.Description)
	}
}
