package toolset

import (
	"regexp"
	"slices"
)

// The values below are what an agent's tools are named and scoped by. The
// deployer validates a deployment against them and the vessel offers and
// gates tools by them: one definition for both.

// Scopes are the six Astral permission scopes, weakest first (see
// docs/configuration.md).
var Scopes = []string{"tools:read", "tools:search", "tools:files", "tools:system", "tools:write", "tools:execute"}

// BuiltinTools lists the built-in tools a manifest may enable and their scopes.
var BuiltinTools = map[string]string{
	"read":      "tools:files",
	"glob":      "tools:files",
	"list":      "tools:files",
	"grep":      "tools:files",
	"bash":      "tools:execute",
	"webfetch":  "tools:search",
	"websearch": "tools:search",
	"present":   "tools:read",
}

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidToolName reports whether name may be the name of a tool the model
// sees: 1 to 64 letters, digits, _ and -.
func ValidToolName(name string) bool { return toolNamePattern.MatchString(name) }

// MaxMCPTimeout is the most an MCP server's timeout_seconds may be.
const MaxMCPTimeout = 600

// AllMCPTools in an MCP tools list offers every tool the server lists.
const AllMCPTools = "*"

// MCPToolSeparator joins a server's name and its tool's name in the name
// the model sees: "github__search_issues".
const MCPToolSeparator = "__"

// MCPToolName is the name the model sees for tool of server.
func MCPToolName(server, tool string) string { return server + MCPToolSeparator + tool }

// MCPAllTools reports whether an MCP tools list offers every tool the
// server lists.
func MCPAllTools(tools []string) bool { return len(tools) == 1 && tools[0] == AllMCPTools }

// MCPAllows reports whether an MCP tools list offers the server's tool.
func MCPAllows(tools []string, tool string) bool {
	return MCPAllTools(tools) || slices.Contains(tools, tool)
}

// MCPToolScope is the scope of one of an MCP server's tools: its entry in
// scopes, else the server's scope.
func MCPToolScope(scope string, scopes map[string]string, tool string) string {
	if s, ok := scopes[tool]; ok {
		return s
	}
	return scope
}
