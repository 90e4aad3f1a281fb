package spec

import (
	"strings"
	"testing"
)

// notesServer is a tools/notes.toml declaring a stdio MCP server for the
// fixture's alpha agent.
const notesServer = `name = "notes"
description = "Notes kept in the turn's workspace."
[mcp]
command = ["{package}/bin/notes-mcp", "--dir", "notes"]
env = { NOTES_LANG = "en" }
tools = ["add_note", "list_notes"]
scope = "tools:files"
scopes = { add_note = "tools:write" }
timeout_seconds = 20
`

func notesOverride(body string) map[string]string {
	return map[string]string{"agents/alpha/tools/notes.toml": body}
}

func TestLoadStdioMCP(t *testing.T) {
	d, err := loadFixture(t, notesOverride(notesServer))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	a := &d.Agents[0]
	srv := a.Manifest.StdioMCP("notes")
	if srv == nil || srv.MCP == nil {
		t.Fatalf("no server: %+v", a.Manifest.MCP)
	}
	for _, tl := range a.Manifest.Declared {
		if tl.Name == "notes" {
			t.Error("the MCP server is also a declared command tool")
		}
	}
	g := srv.MCP.Grant()
	if g.ToolScope("add_note") != "tools:write" || g.ToolScope("list_notes") != "tools:files" || g.TimeoutSecs != 20 {
		t.Errorf("grant: %+v", g)
	}
	if srv.MCP.Env["NOTES_LANG"] != "en" || srv.MCP.Command[0] != "{package}/bin/notes-mcp" {
		t.Errorf("server: %+v", srv.MCP)
	}
	if got := strings.Join(MCPToolNames(a), ","); got != "notes__add_note,notes__list_notes" {
		t.Errorf("names: %v", got)
	}
	if !strings.Contains(strings.Join(AgentToolNames(a.Manifest), ","), "lookup") || strings.Contains(strings.Join(AgentToolNames(a.Manifest), ","), "notes") {
		t.Errorf("own tools: %v", AgentToolNames(a.Manifest))
	}
	all, err := loadFixture(t, notesOverride(strings.Replace(notesServer, `tools = ["add_note", "list_notes"]`, `tools = ["*"]`, 1)))
	if err != nil {
		t.Fatalf("tools = [\"*\"]: %v", err)
	}
	if g := all.Agents[0].Manifest.StdioMCP("notes").MCP.Grant(); !g.AllTools() || !g.Allows("anything") || g.ToolScope("add_note") != "tools:write" {
		t.Errorf("every tool: %+v", g)
	}
}

// An approval may name any valid <server>__<tool> of a package's server
// declared with tools = ["*"] (its tools are known once it is listed), not
// a bad name or one of a server with named tools.
func TestStdioMCPStarApproval(t *testing.T) {
	star := notesOverride(strings.Replace(notesServer, `tools = ["add_note", "list_notes"]`, `tools = ["*"]`, 1))
	with := func(files map[string]string, tool string) map[string]string {
		out := map[string]string{"deploy/deployment.toml": strings.Replace(fixture["deploy/deployment.toml"], "[[agents]]\nid = \"beta\"",
			"[agents.approval]\ntools = [\""+tool+"\"]\n\n[[agents]]\nid = \"beta\"", 1)}
		for k, v := range files {
			out[k] = v
		}
		return out
	}
	d, err := loadFixture(t, with(star, "notes__read_note"))
	if err != nil {
		t.Fatalf("approval of a tool of a [\"*\"] server: %v", err)
	}
	if d.Agents[0].Approval == nil || MCPStarServers(&d.Agents[0])[0] != "notes" {
		t.Fatalf("approval not loaded: %+v", d.Agents[0].Approval)
	}
	for _, tc := range []struct {
		files map[string]string
		tool  string
	}{{star, "notes__a.b"}, {star, "notes__"}, {notesOverride(notesServer), "notes__read_note"}} {
		if _, err := loadFixture(t, with(tc.files, tc.tool)); err == nil || !strings.Contains(err.Error(), "approval.tools[0]") {
			t.Errorf("approval of %q: %v", tc.tool, err)
		}
	}
}

// Each broken [mcp] table gives file:line: field: message.
func TestLoadStdioMCPErrors(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"no command", `command = ["{package}/bin/notes-mcp", "--dir", "notes"]`, ``, `notes.toml:3: mcp.command: required`},
		{"empty command", `command = ["{package}/bin/notes-mcp", "--dir", "notes"]`, `command = [" "]`, `notes.toml:4: mcp.command: required`},
		{"secret env", `NOTES_LANG = "en"`, `TOKEN = "env:GH_TOKEN"`, `notes.toml:5: mcp.env.TOKEN: an agent package holds no secrets`},
		{"reserved env", `NOTES_LANG = "en"`, `HOME = "/"`, `notes.toml:5: mcp.env.HOME: HOME is set by the sandbox`},
		{"vessel env", `NOTES_LANG = "en"`, `VESSEL_X = "1"`, `mcp.env.VESSEL_X: VESSEL_X is set by the sandbox`},
		{"bad env name", `NOTES_LANG = "en"`, `"1X" = "en"`, `mcp.env.1X: invalid variable name`},
		{"no tools", `tools = ["add_note", "list_notes"]`, `tools = []`, `notes.toml:6: mcp.tools: required`},
		{"star and more", `"add_note", "list_notes"`, `"*", "list_notes"`, `notes.toml:6: mcp.tools[0]: "*" (every tool) must be the only entry`},
		{"bad tool", `"add_note", "list_notes"`, `"add note", "list_notes"`, `notes.toml:6: mcp.tools[0]: invalid tool name "add note"`},
		{"twice", `"add_note", "list_notes"`, `"add_note", "add_note"`, `mcp.tools[1]: tool "add_note" is listed twice`},
		{"bad scope", `scope = "tools:files"`, `scope = "root"`, `notes.toml:7: mcp.scope: unknown scope "root"`},
		{"no scope", `scope = "tools:files"`, ``, `mcp.scope: required`},
		{"unlisted scope", `add_note = "tools:write"`, `drop = "tools:write"`, `notes.toml:8: mcp.scopes.drop: tool "drop" is not in tools`},
		{"timeout", `timeout_seconds = 20`, `timeout_seconds = 0`, `notes.toml:9: mcp.timeout_seconds: 0 is out of range; allowed 1 to 600`},
		{"unknown key", `timeout_seconds = 20`, `restart = true`, `notes.toml:9: mcp.restart: unknown key`},
		{"top-level command", `name = "notes"`, "name = \"notes\"\ncommand = [\"x\"]", `notes.toml:2: command: a file with [mcp] declares a server`},
		{"top-level scope", `name = "notes"`, "name = \"notes\"\nscope = \"tools:read\"", `notes.toml:2: scope: a file with [mcp] declares a server`},
		{"bad name", `name = "notes"`, `name = "Notes_1"`, `notes.toml:1: name: invalid MCP server name "Notes_1"`},
		{"builtin name", `name = "notes"`, `name = "bash"`, `name: "bash" is the name of a built-in tool`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadFixture(t, notesOverride(strings.Replace(notesServer, tc.from, tc.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestFingerprintCoversStdioMCP(t *testing.T) {
	base, err := loadFixture(t, notesOverride(notesServer))
	if err != nil {
		t.Fatal(err)
	}
	fp0, err := Fingerprint(base, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range [][2]string{
		{`"--dir", "notes"`, `"--dir", "other"`},
		{`NOTES_LANG = "en"`, `NOTES_LANG = "de"`},
		{`add_note = "tools:write"`, `add_note = "tools:execute"`},
		{`"add_note", "list_notes"`, `"add_note"`},
	} {
		d, err := loadFixture(t, notesOverride(strings.Replace(notesServer, change[0], change[1], 1)))
		if err != nil {
			t.Fatal(err)
		}
		if fp, _ := Fingerprint(d, "alpha"); fp == fp0 {
			t.Errorf("changing %s to %s keeps the fingerprint", change[0], change[1])
		}
	}
}
