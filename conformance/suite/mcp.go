package suite

import (
	"context"
	"strings"
)

// checkMCP runs one turn that makes the agent call its MCP tools
// (Config.MCPText, e.g. a scripted-model marker naming a rule that calls a
// stdio server of the package) and wants it completed with
// Config.MCPExpect in the answer: something only the server's results hold.
func checkMCP(ctx context.Context, e *env, r *reporter) {
	const name = "mcp: a turn calls the agent's MCP server"
	if e.cfg.MCPText == "" {
		r.skip(name, "no MCP turn configured (--mcp-text)")
		return
	}
	status, m, err := e.rpc(ctx, e.cfg.Agent, "SendMessage", sendParams(e.message("", textPart(e.cfg.MCPText)), false), e.me, nil)
	if err != nil || status != 200 {
		r.fail(name, "HTTP %d: %v", status, err)
		return
	}
	task := getObj(m, "result", "task")
	st := getStr(getObj(task, "status"), "state")
	md, _ := markdown(answerOf(task))
	if st != stateCompleted || !strings.Contains(md, e.cfg.MCPExpect) {
		r.fail(name, "state %s, answer %q, want it to hold %q", st, snippet([]byte(md)), e.cfg.MCPExpect)
		return
	}
	r.pass(name, "%s; the answer holds the server's %q", st, e.cfg.MCPExpect)
}
