package suite

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCheckMCP: the mcp check passes when the turn completes with the
// expected text in its answer, fails when the answer lacks it, and is
// skipped when no MCP turn is configured.
func TestCheckMCP(t *testing.T) {
	answer := "Your note: The Larchmere survey starts on 12 May."
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/agents/a" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"T","contextId":"C","status":{"state":%q},`+
			`"artifacts":[{"artifactId":"A","name":"answer","parts":[{"text":%q,"mediaType":"text/markdown"}]}]}}}`, stateCompleted, answer)
	}))
	defer srv.Close()
	run := func(text, expect string) Result {
		t.Helper()
		rs := Run(context.Background(), Config{URL: srv.URL, Key: "k", Agent: "a", MCPText: text, MCPExpect: expect,
			Only: regexp.MustCompile(`^mcp`), Timeout: 10 * time.Second}, nil)
		for _, r := range rs {
			if strings.HasPrefix(r.Name, "mcp:") {
				return r
			}
		}
		t.Fatalf("no mcp result among %v", rs)
		return Result{}
	}
	if r := run("note it #script:notes", "Larchmere survey starts on 12 May"); r.Status != "PASS" {
		t.Errorf("answer holding the server's text: %s", r)
	}
	if r := run("note it #script:notes", "something the server never said"); r.Status != "FAIL" {
		t.Errorf("answer without it: %s", r)
	}
	if r := run("", ""); r.Status != "SKIP" {
		t.Errorf("no MCP turn configured: %s", r)
	}
}
