package spec

import (
	"path/filepath"
	"strings"
	"testing"
)

// mcpGrant is appended to the fixture's beta agent (which ends the file at line 33).
const mcpGrant = `[agents.mcp.github]
url = "http://tools:8080/mcp"
headers = { Authorization = "env:GH_TOKEN" }
tools = ["search_issues", "create_issue"]
scope = "tools:read"
scopes = { create_issue = "tools:write" }
timeout_seconds = 20
`

func mcpDeployment(grant string) map[string]string {
	return map[string]string{"deploy/deployment.toml": fixture["deploy/deployment.toml"] + grant}
}

func mcpEnv() map[string]string {
	env := map[string]string{"GH_TOKEN": "Bearer gh-secret"}
	for k, v := range fixtureEnv {
		env[k] = v
	}
	return env
}

func TestLoadMCP(t *testing.T) {
	d, err := loadFixtureEnv(t, mcpDeployment(mcpGrant), mcpEnv())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	m, ok := d.Agents[1].MCP["github"]
	if !ok {
		t.Fatalf("no grant: %+v", d.Agents[1].MCP)
	}
	if m.Headers["Authorization"] != "Bearer gh-secret" || d.EnvRefs["agents[1].mcp.github.headers.Authorization"] != "GH_TOKEN" {
		t.Errorf("header not resolved: %v %v", m.Headers, d.EnvRefs)
	}
	if m.ToolScope("search_issues") != "tools:read" || m.ToolScope("create_issue") != "tools:write" || m.TimeoutSecs != 20 {
		t.Errorf("scopes: %+v", m)
	}
	if got := MCPToolNames(&d.Agents[1]); strings.Join(got, ",") != "github__create_issue,github__search_issues" {
		t.Errorf("names: %v", got)
	}
}

func TestLoadMCPApproval(t *testing.T) {
	grant := mcpGrant + "[agents.approval]\ntools = [\"github__create_issue\"]\nservices = [\"github\"]\n"
	if _, err := loadFixtureEnv(t, mcpDeployment(grant), mcpEnv()); err != nil {
		t.Fatalf("an approval naming an MCP tool and server: %v", err)
	}
	grant = mcpGrant + "[agents.approval]\ntools = [\"github__delete_repo\"]\n"
	_, err := loadFixtureEnv(t, mcpDeployment(grant), mcpEnv())
	if err == nil || !strings.Contains(err.Error(), `agents[beta].approval.tools[0]: agent "beta" has no tool "github__delete_repo"`) {
		t.Errorf("an unlisted MCP tool in the approval: %v", err)
	}
}

// A grant with tools = ["*"] offers every tool the server lists: it needs
// a default scope, may set scopes for tools it does not name, adds no
// names to MCPToolNames, and an approval may name <server>__<tool> for a
// valid tool name (the server lists it at run time) or the server.
func TestLoadMCPStar(t *testing.T) {
	star := strings.Replace(mcpGrant, `tools = ["search_issues", "create_issue"]`, `tools = ["*"]`, 1)
	grant := star + "[agents.approval]\ntools = [\"github__create_issue\", \"github__anything-else\"]\nservices = [\"github\"]\n"
	d, err := loadFixtureEnv(t, mcpDeployment(grant), mcpEnv())
	if err != nil {
		t.Fatalf("tools = [\"*\"]: %v", err)
	}
	m := d.Agents[1].MCP["github"]
	if !m.AllTools() || !m.Allows("whatever") || m.ToolScope("create_issue") != "tools:write" || m.ToolScope("other") != "tools:read" {
		t.Errorf("grant: %+v", m)
	}
	if got := MCPToolNames(&d.Agents[1]); len(got) != 0 {
		t.Errorf("names: %v", got)
	}
	if got := MCPStarServers(&d.Agents[1]); strings.Join(got, ",") != "github" {
		t.Errorf("star servers: %v", got)
	}
	for _, bad := range []string{"github__", "github__a b", "other__x", "github__" + strings.Repeat("x", 60)} {
		g := star + "[agents.approval]\ntools = [\"" + bad + "\"]\n"
		if _, err := loadFixtureEnv(t, mcpDeployment(g), mcpEnv()); err == nil || !strings.Contains(err.Error(), "approval.tools[0]") {
			t.Errorf("approval of %q: %v", bad, err)
		}
	}
}

// Each broken grant gives file:line: field: message.
func TestLoadMCPErrors(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"no url", `url = "http://tools:8080/mcp"`, ``, `deployment.toml:34: agents[beta].mcp.github.url: required`},
		{"bad url", `url = "http://tools:8080/mcp"`, `url = "ftp://tools/mcp"`, `deployment.toml:35: agents[beta].mcp.github.url: invalid URL "ftp://tools/mcp"`},
		{"credentials in url", `url = "http://tools:8080/mcp"`, `url = "http://u:p@tools/mcp"`, `deployment.toml:35: agents[beta].mcp.github.url: "http://u:p@tools/mcp" must not carry credentials`},
		{"vessel header", `Authorization = "env:GH_TOKEN"`, `"X-Vessel-Owner" = "me"`, `deployment.toml:36: agents[beta].mcp.github.headers.X-Vessel-Owner: headers starting X-Vessel- are set by the vessel itself`},
		{"protocol header", `Authorization = "env:GH_TOKEN"`, `"mcp-session-id" = "x"`, `deployment.toml:36: agents[beta].mcp.github.headers.mcp-session-id: header Mcp-Session-Id is set by the vessel itself`},
		{"missing env", `env:GH_TOKEN`, `env:NOPE`, `deployment.toml:36: agents[beta].mcp.github.headers.Authorization: environment variable NOPE is not set`},
		{"no tools", `tools = ["search_issues", "create_issue"]`, `tools = []`, `agents[beta].mcp.github.tools: required: the names of the server's tools`},
		{"bad tool", `"search_issues", "create_issue"`, `"search issues", "create_issue"`, `deployment.toml:37: agents[beta].mcp.github.tools[0]: invalid tool name "search issues"`},
		{"long tool", `"search_issues", "create_issue"`, `"` + strings.Repeat("x", 57) + `", "create_issue"`, `agents[beta].mcp.github.tools[0]: invalid tool name`},
		{"twice", `"search_issues", "create_issue"`, `"create_issue", "create_issue"`, `agents[beta].mcp.github.tools[1]: tool "create_issue" is listed twice`},
		{"bad scope", `scope = "tools:read"`, `scope = "tools:all"`, `deployment.toml:38: agents[beta].mcp.github.scope: unknown scope "tools:all"`},
		{"bad tool scope", `create_issue = "tools:write"`, `create_issue = "root"`, `deployment.toml:39: agents[beta].mcp.github.scopes.create_issue: unknown scope "root"`},
		{"scope of unlisted tool", `create_issue = "tools:write"`, `delete_repo = "tools:write"`, `agents[beta].mcp.github.scopes.delete_repo: tool "delete_repo" is not in tools`},
		{"no scope", `scope = "tools:read"`, ``, `agents[beta].mcp.github.tools[0]: tool "search_issues" has no scope: set scope (the default) or scopes.search_issues`},
		{"timeout", `timeout_seconds = 20`, `timeout_seconds = 601`, `deployment.toml:40: agents[beta].mcp.github.timeout_seconds: 601 is out of range; allowed 1 to 600`},
		{"unknown key", `timeout_seconds = 20`, `timeout = 20`, `agents[beta].mcp.github.timeout: unknown key`},
		{"bad name", `[agents.mcp.github]`, `[agents.mcp.Git_Hub]`, `agents[beta].mcp.Git_Hub: invalid MCP server name "Git_Hub"`},
		{"star and more", `"search_issues", "create_issue"`, `"*", "create_issue"`, `deployment.toml:37: agents[beta].mcp.github.tools[0]: "*" (every tool) must be the only entry`},
		{"star last", `"search_issues", "create_issue"`, `"create_issue", "*"`, `deployment.toml:37: agents[beta].mcp.github.tools[1]: "*" (every tool) must be the only entry`},
		{"star without scope", "tools = [\"search_issues\", \"create_issue\"]\nscope = \"tools:read\"", `tools = ["*"]`,
			`agents[beta].mcp.github.scope: required with tools = ["*"]: the default scope`},
		{"star bad tool scope", "tools = [\"search_issues\", \"create_issue\"]\nscope = \"tools:read\"\nscopes = { create_issue = \"tools:write\" }",
			"tools = [\"*\"]\nscope = \"tools:read\"\nscopes = { \"a b\" = \"tools:write\" }", `agents[beta].mcp.github.scopes.a b: invalid tool name "a b"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			grant := strings.Replace(mcpGrant, tc.from, tc.to, 1)
			_, err := loadFixtureEnv(t, mcpDeployment(grant), mcpEnv())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestLoadMCPNameClash(t *testing.T) {
	// The fixture's alpha agent has a declared tool "lookup" and the service
	// "records": an MCP server named records, or a tool that takes an own
	// tool's name, is refused.
	dep := fixture["deploy/deployment.toml"]
	dep = strings.Replace(dep, `headers = { "X-Token" = "env:RECORDS_TOKEN" }`, `headers = { "X-Token" = "env:RECORDS_TOKEN" }
[agents.mcp.records]
url = "http://tools:8080/mcp"
tools = ["find"]
scope = "tools:read"`, 1)
	_, err := loadFixtureEnv(t, map[string]string{"deploy/deployment.toml": dep}, mcpEnv())
	if err == nil || !strings.Contains(err.Error(), `agents[alpha].mcp.records: "records" is also a granted service`) {
		t.Errorf("clash with a service: %v", err)
	}
}

func TestFingerprintCoversMCP(t *testing.T) {
	fp := func(grant string, env map[string]string) string {
		t.Helper()
		d, err := loadFixtureEnv(t, mcpDeployment(grant), env)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		s, err := Fingerprint(d, "beta")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base := fp(mcpGrant, mcpEnv())
	if none := fp("", mcpEnv()); none == base {
		t.Error("the fingerprint ignores the MCP grant")
	}
	for _, change := range [][2]string{
		{`"search_issues", "create_issue"`, `"create_issue"`},
		{`create_issue = "tools:write"`, `create_issue = "tools:execute"`},
		{`http://tools:8080/mcp`, `http://tools:8081/mcp`},
		{`Authorization =`, `X-Key =`},
	} {
		if fp(strings.Replace(mcpGrant, change[0], change[1], 1), mcpEnv()) == base {
			t.Errorf("changing %s to %s keeps the fingerprint", change[0], change[1])
		}
	}
	env := mcpEnv()
	env["GH_TOKEN"] = "Bearer another-secret"
	if fp(mcpGrant, env) != base {
		t.Error("a header's secret value changes the fingerprint (it must not be in it)")
	}
}

func loadFixtureEnv(t testing.TB, overrides, env map[string]string) (*Deployment, error) {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, fixture, overrides)
	return LoadDeployment(filepath.Join(dir, "deploy", "deployment.toml"), envOf(env))
}
