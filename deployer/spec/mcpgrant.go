package spec

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/issuers"
)

func (v *validator) mcp(f string, a *Agent) {
	for _, n := range slices.Sorted(maps.Keys(a.MCP)) {
		m := a.MCP[n]
		v.mcpServer(f+"."+n, n, a, &m)
		a.MCP[n] = m
	}
}

// mcpServer checks one [agents.mcp.<n>] grant: its name, URL, headers,
// tool allowlist, scopes and timeout.
func (v *validator) mcpServer(mf, n string, a *Agent, m *MCPServer) {
	if !issuers.ValidID(n) {
		v.c.add(mf, "invalid MCP server name %q; allowed: lowercase letters, digits and - (so <server>__<tool> splits one way)", n)
	}
	if _, dup := a.Services[n]; dup {
		v.c.add(mf, "%q is also a granted service; an approval entry service:%s would name both", n, n)
	}
	if m.URL == "" {
		v.c.add(mf+".url", "required: the server's streamable HTTP endpoint, e.g. http://tools:8080/mcp")
	} else if v.resolve(mf+".url", &m.URL) {
		if msg := checkURL(m.URL, false); msg != "" {
			v.c.add(mf+".url", "%s", msg)
		} else if u, _ := url.Parse(m.URL); u.Fragment != "" {
			v.c.add(mf+".url", "%q must not have a fragment", m.URL)
		}
	}
	m.Headers = v.headers(mf+".headers", m.Headers)
	seen := v.mcpTools(mf, n, m)
	v.mcpScopes(mf, n, m, seen)
	if m.TimeoutSecs != 0 && (m.TimeoutSecs < 1 || m.TimeoutSecs > MaxMCPTimeout) {
		v.c.add(mf+".timeout_seconds", "%d is out of range; allowed 1 to %d", m.TimeoutSecs, MaxMCPTimeout)
	}
}

// mcpTools checks the grant's tool allowlist and returns the names listed.
func (v *validator) mcpTools(mf, n string, m *MCPServer) map[string]bool {
	if len(m.Tools) == 0 {
		v.c.add(mf+".tools", `required: the names of the server's tools this agent may use (the allowlist), or ["*"] for every tool it lists`)
	}
	all := m.AllTools()
	seen := map[string]bool{}
	for i, t := range m.Tools {
		tf := fmt.Sprintf("%s.tools[%d]", mf, i)
		full := MCPToolName(n, t)
		switch {
		case t == AllMCPTools && !all:
			v.c.add(tf, `"*" (every tool) must be the only entry`)
		case t == AllMCPTools:
		case t == "" || !ValidToolName(full):
			v.c.add(tf, "invalid tool name %q; allowed: letters, digits, _ and -, and %q with the server's name at most 64 characters", t, full)
		case seen[t]:
			v.c.add(tf, "tool %q is listed twice", t)
		}
		seen[t] = true
	}
	return seen
}

// mcpScopes checks the grant's default scope and per-tool scopes: every
// allowed tool ends with one.
func (v *validator) mcpScopes(mf, n string, m *MCPServer, seen map[string]bool) {
	all := m.AllTools()
	if m.Scope != "" && !contains(Scopes, m.Scope) {
		v.c.add(mf+".scope", "unknown scope %q; allowed: %s", m.Scope, strings.Join(Scopes, ", "))
	}
	for _, t := range slices.Sorted(maps.Keys(m.Scopes)) {
		sc := m.Scopes[t]
		switch {
		case !all && !seen[t]:
			v.c.add(mf+".scopes."+t, "tool %q is not in tools", t)
		case !ValidToolName(MCPToolName(n, t)):
			v.c.add(mf+".scopes."+t, "invalid tool name %q", t)
		case !contains(Scopes, sc):
			v.c.add(mf+".scopes."+t, "unknown scope %q; allowed: %s", sc, strings.Join(Scopes, ", "))
		}
	}
	if m.Scope == "" && all {
		v.c.add(mf+".scope", `required with tools = ["*"]: the default scope of the server's tools (scopes sets one per tool); one of %s`, strings.Join(Scopes, ", "))
	} else if m.Scope == "" {
		for i, t := range m.Tools {
			if _, ok := m.Scopes[t]; !ok && !slices.Contains(m.Tools[:i], t) {
				v.c.add(fmt.Sprintf("%s.tools[%d]", mf, i), "tool %q has no scope: set scope (the default) or scopes.%s", t, t)
			}
		}
	}
}
