package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// Tool is one granted tool of one MCP server, offered to the model as
// <server>__<tool>.
type Tool struct {
	srv   *Server
	name  string // the server's name for it
	full  string // the model's
	scope string

	// The definition built from one listing of the tool: a listed schema
	// is checked by a JSON round trip, which for a large schema of a
	// hostile server costs milliseconds, and Def runs several times per
	// turn (tool sets, narrowing, the loop). Rebuilt when the listing
	// (its *mcp.Tool) or the reason it is missing changes.
	defMu   sync.Mutex
	defFrom *mcp.Tool
	defWhy  string
	defOK   bool
	def     model.ToolDef
}

// Def implements tools.Tool: the server's description and input schema as
// last listed, or a plain object schema and a note when the server has not
// listed the tool.
func (t *Tool) Def() model.ToolDef {
	mt, why := t.srv.cached(t.name)
	t.defMu.Lock()
	defer t.defMu.Unlock()
	if t.defOK && t.defFrom == mt && t.defWhy == why {
		return t.def
	}
	t.def, t.defFrom, t.defWhy, t.defOK = t.build(mt, why), mt, why, true
	return t.def
}

// build is the definition of the tool from its listing mt (nil when it is
// not listed, why saying why).
func (t *Tool) build(mt *mcp.Tool, why string) model.ToolDef {
	desc, params := "", any(map[string]any{"type": "object"})
	if mt != nil {
		desc = mt.Description
		if p, ok := schema(mt.InputSchema); ok {
			params = p
		} else {
			why = "its input schema was not a JSON object schema of at most 64 KiB"
		}
	}
	desc = truncate(strings.ToValidUTF8(desc, "\uFFFD"), MaxDescription)
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the %s MCP server.", t.name, t.srv.name)
	}
	if why != "" {
		desc += fmt.Sprintf(" (Its definition is not available: %s.)", why)
	}
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: t.full, Description: desc, Parameters: params}}
}

// schema checks a listed input schema: a JSON object of type "object",
// small enough to send to the model.
func schema(in any) (map[string]any, bool) {
	b, err := json.Marshal(in)
	if err != nil || len(b) > MaxSchemaBytes {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return nil, false
	}
	if typ, ok := m["type"]; ok && typ != "object" {
		return nil, false
	}
	m["type"] = "object"
	return m, true
}

// Scope implements tools.Tool.
func (t *Tool) Scope() string { return scopes.Of(t.scope) }

// Service is the tool's server, so an approval policy's service:<name>
// entries cover MCP servers too (approval.Servicer).
func (t *Tool) Service() string { return t.srv.name }

// Server is the name of the tool's server.
func (t *Tool) Server() string { return t.srv.name }

// Prepare implements tools.Preparer: it refreshes the server's tool list
// when it is old, so the turn's definitions are current.
func (t *Tool) Prepare(ctx context.Context, _ *tools.Turn) {
	t.srv.refresh(ctx)
}

// Run implements tools.Tool. Whatever the server does, the call ends as a
// result or a failed call; only a cancelled turn is returned as an error.
func (t *Tool) Run(ctx context.Context, turn *tools.Turn, call tools.Call) (res *tools.Result, err error) {
	defer func() {
		if r := recover(); r != nil { // a broken reply must not take the vessel down
			res, err = failed("the %s MCP server's reply could not be handled", t.srv.name), nil
		}
	}()
	body := strings.TrimSpace(call.Arguments)
	if body == "" {
		body = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(body), &obj); err != nil || obj == nil {
		return failed("%s needs its arguments as a JSON object", t.full), nil
	}
	// The tool must be one the server offers now, not only one the grant lists.
	t.srv.refresh(ctx)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("mcp tool %s: %w", t.full, ctx.Err())
	}
	if mt, why := t.srv.cached(t.name); mt == nil {
		return failed("%s cannot be called: %s", t.full, strings.TrimSuffix(why, ".")), nil
	}
	cctx, cancel := context.WithTimeout(ctx, t.srv.timeout())
	defer cancel()
	cs, st, release, err := t.srv.open(cctx, turn, t.name)
	if err != nil {
		return t.sessionFailed(ctx, cctx, err, st)
	}
	defer release()
	r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: t.name, Arguments: json.RawMessage(body)})
	if err != nil {
		if t.srv.stdio != nil && cctx.Err() == nil {
			// A turn's session that broke is not used again: the turn's
			// next call starts the server afresh.
			t.srv.stdio.drop(turn.ID, st)
		}
		return t.sessionFailed(ctx, cctx, err, st)
	}
	return t.result(r), nil
}

func (t *Tool) sessionFailed(parent, ctx context.Context, err error, st *session) (*tools.Result, error) {
	e := t.srv.explain(parent, ctx, err, st, "calling "+t.name)
	if parent.Err() != nil {
		return nil, fmt.Errorf("mcp tool %s: %w", t.full, e)
	}
	return &tools.Result{Output: e.Error(), IsError: true}, nil
}

// result maps a call's content to what the model reads and the files the
// loop checks: text as is, structured content as JSON when there is no
// text, images and embedded binary resources as files of the types
// outputfiles knows (the loop keeps them only when the manifest lists the
// type), and everything else as a short note.
func (t *Tool) result(r *mcp.CallToolResult) *tools.Result {
	var parts []string
	var files []tools.File
	n := 0
	file := func(mime string, data []byte, what string) {
		ext := extOf(mime)
		if ext == "" {
			parts = append(parts, fmt.Sprintf("[%s of type %q not passed on: only %s can be returned as files]",
				what, truncate(mime, 80), strings.Join(outputfiles.Types, ", ")))
			return
		}
		n++
		files = append(files, tools.File{Name: fmt.Sprintf("%s-%d.%s", t.full, n, ext), MediaType: outputfiles.MediaType(ext), Content: data})
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			file(c.MIMEType, c.Data, "an image")
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio of type %q not passed on]", truncate(c.MIMEType, 80)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s %s]", truncate(c.Name, 200), truncate(c.URI, 500)))
		case *mcp.EmbeddedResource:
			rc := c.Resource
			switch {
			case rc == nil:
			case rc.Blob != nil:
				file(rc.MIMEType, rc.Blob, "a resource")
			default:
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", truncate(rc.URI, 500), rc.Text))
			}
		default:
			parts = append(parts, fmt.Sprintf("[content of type %T not passed on]", c))
		}
	}
	if len(parts) == 0 && len(files) == 0 && r.StructuredContent != nil {
		if s := compactJSON(r.StructuredContent); s != "" {
			parts = append(parts, s)
		}
	}
	out := strings.ToValidUTF8(strings.Join(parts, "\n"), "\uFFFD")
	if len(out) > t.srv.client.maxText() {
		return failed("the %s MCP server's result has %d bytes of text, more than %d; nothing of it was kept", t.srv.name, len(out), t.srv.client.maxText())
	}
	if out == "" && len(files) == 0 {
		out = "(the MCP server returned no content)"
	}
	res := &tools.Result{Output: out, Files: files}
	if r.IsError {
		res.IsError = true
		res.Output = fmt.Sprintf("the %s MCP server reported an error: %s", t.srv.name, out)
	}
	return res
}

// extOf is the output file type of a media type, "" for one outputfiles
// does not know.
func extOf(mime string) string {
	mime = strings.ToLower(strings.TrimSpace(strings.SplitN(mime, ";", 2)[0]))
	for _, ext := range outputfiles.Types {
		if outputfiles.MediaType(ext) == mime {
			return ext
		}
	}
	return ""
}

func failed(format string, args ...any) *tools.Result {
	return &tools.Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// Tools builds the tools of every MCP server granted to agent.
func Tools(agent *settings.Agent, c *Client) ([]tools.Tool, error) {
	if agent == nil || len(agent.MCP) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(agent.MCP))
	for n := range agent.MCP {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []tools.Tool
	for _, n := range names {
		s, err := NewServer(agent, n, c)
		if err != nil {
			return nil, err
		}
		out = append(out, s.Tools()...)
	}
	return out, nil
}

// Factory offers an agent the tools of its granted MCP servers.
func Factory(c *Client) tools.Factory {
	return tools.FactoryFunc(func(agent *settings.Agent) ([]tools.Tool, error) { return Tools(agent, c) })
}

// starTool stands for the tools of a server with tools = ["*"]
// (tools.Expander): a Set offers what the server last listed, never the
// starTool itself.
type starTool struct{ srv *Server }

// Expand implements tools.Expander: a Tool per valid name of the last
// listing, none while the server has not been listed or its listing failed.
func (t *starTool) Expand() []tools.Tool {
	t.srv.mu.Lock()
	defer t.srv.mu.Unlock()
	return t.srv.expanded
}

// Refresh implements tools.Expander: it lists the server's tools when the
// list is old (ListTTL), as Tool.Prepare does.
func (t *starTool) Refresh(ctx context.Context) { t.srv.refresh(ctx) }

// Def implements tools.Tool; a Set never offers it.
func (t *starTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: toolset.MCPToolName(t.srv.name, toolset.AllMCPTools),
		Description: fmt.Sprintf("Every tool the %s MCP server lists.", t.srv.name), Parameters: map[string]any{"type": "object"}}}
}

// Scope implements tools.Tool: the server's default scope.
func (t *starTool) Scope() string { return scopes.Of(t.srv.grant.Scope) }

// Run implements tools.Tool: the model is never offered a starTool.
func (t *starTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	return failed("%s is not a tool: call one of the tools of the %s MCP server", toolset.MCPToolName(t.srv.name, toolset.AllMCPTools), t.srv.name), nil
}

// expand is a Tool per listed name, sorted (with s.mu held).
func (s *Server) expand(listed map[string]*mcp.Tool) []tools.Tool {
	names := make([]string, 0, len(listed))
	for n := range listed {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]tools.Tool, 0, len(names))
	for _, n := range names {
		out = append(out, s.tool(n))
	}
	return out
}
