package a2aserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// A caller's X-Vessel-Approve may name an MCP server granted to the agent
// as a service (service:<name>), and no other.
func TestApprovalNamesMCPServer(t *testing.T) {
	h := newHarness(t, func(d *settings.Deployment) {
		d.Agents[0].MCP = map[string]settings.MCPServer{"issues": {URL: "http://127.0.0.1:1/mcp", Tools: []string{"search"}, Scope: "tools:read"}}
	})
	body := `{"jsonrpc":"2.0","id":"1","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`
	for entry, want := range map[string]int{"service:issues": http.StatusOK, "service:nope": http.StatusBadRequest} {
		code, _, b := h.rawPost("/agents/"+h.agentID, body,
			map[string]string{"Authorization": "Bearer " + h.keyApp1, "X-Vessel-User": "alice", approval.Header: entry})
		if code != want || (want == http.StatusOK && strings.Contains(string(b), `"error"`)) {
			t.Errorf("%s: HTTP %d %s", entry, code, b)
		}
	}
}

// A package's stdio MCP server may be named too (service:<name>), as the
// deployment's approval policy may name it.
func TestApprovalNamesStdioMCPServer(t *testing.T) {
	h := newHarness(t, func(d *settings.Deployment) {
		m := d.Agents[0].Manifest
		m.Declared = append(m.Declared, settings.Tool{Name: "notes", MCP: &settings.StdioMCP{
			Command: []string{"{package}/bin/notes-mcp"}, Tools: []string{"add_note"}, Scope: "tools:write"}})
	})
	body := `{"jsonrpc":"2.0","id":"1","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`
	for entry, want := range map[string]int{"service:notes": http.StatusOK, "service:nope": http.StatusBadRequest} {
		code, _, b := h.rawPost("/agents/"+h.agentID, body,
			map[string]string{"Authorization": "Bearer " + h.keyApp1, "X-Vessel-User": "alice", approval.Header: entry})
		if code != want || (want == http.StatusOK && strings.Contains(string(b), `"error"`)) {
			t.Errorf("%s: HTTP %d %s", entry, code, b)
		}
	}
}
