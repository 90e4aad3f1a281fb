package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// MaxModelOutput caps the tool output handed to the model.
const MaxModelOutput = 64 << 10

// Sandbox is the client of one agent's sandboxd.
type Sandbox struct {
	conn  *grpc.ClientConn
	rpc   sandboxv1.RunServiceClient
	token string

	mu    sync.Mutex
	onEnd []func(turnID string)
}

// ServeStream is a Serve stream to one served MCP server process.
type ServeStream = grpc.BidiStreamingClient[sandboxv1.ServeRequest, sandboxv1.ServeResponse]

// Serve starts the MCP server the package declares as server, as a
// process of the turn; it lives until ctx ends, the stream is closed or
// the turn ends.
func (s *Sandbox) Serve(ctx context.Context, turnID, owner, server string, idle time.Duration) (ServeStream, error) {
	st, err := s.rpc.Serve(s.turnCtx(ctx, turnID))
	if err != nil {
		return nil, fmt.Errorf("sandbox serve %s: %w", server, err)
	}
	start := &sandboxv1.ServeStart{TurnId: turnID, Owner: owner, Server: server, IdleTimeoutMs: uint32(idle.Milliseconds())}
	if err := st.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Start{Start: start}}); err != nil {
		return nil, fmt.Errorf("sandbox serve %s: %w", server, err)
	}
	return st, nil
}

// OnEndTurn registers f to be called with a turn's id when the turn ends,
// before its workspace is (the MCP sessions of the turn are closed).
func (s *Sandbox) OnEndTurn(f func(turnID string)) {
	s.mu.Lock()
	s.onEnd = append(s.onEnd, f)
	s.mu.Unlock()
}

// DialSandbox connects to a sandbox at a URL such as http://sandbox-a:8600
// (the connection is made lazily, so a sandbox that starts later is fine).
func DialSandbox(rawURL, token string) (*Sandbox, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("sandbox URL %q: want http://host:port", rawURL)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("sandbox URL %q: only http is supported on the internal network", rawURL)
	}
	// Reconnect within a second of a restarted sandbox: gRPC's default
	// backoff grows to two minutes, which kept an agent out of service
	// for seconds after its sandbox was back.
	backoffCfg := backoff.DefaultConfig
	backoffCfg.MaxDelay = time.Second
	opts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(32 << 20)),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoffCfg, MinConnectTimeout: 5 * time.Second})},
		telemetry.GRPCClientOptions()...) // the trace goes on inside sandboxd (traceparent metadata)
	conn, err := grpc.NewClient(u.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", rawURL, err)
	}
	return &Sandbox{conn: conn, rpc: sandboxv1.NewRunServiceClient(conn), token: token}, nil
}

// Close closes the connection.
func (s *Sandbox) Close() error { return s.conn.Close() }

func (s *Sandbox) ctx(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.token)
}

// turnCtx is ctx for a call about one turn: it also carries the turn's
// task id, which sandboxd puts on its log lines about the call.
func (s *Sandbox) turnCtx(ctx context.Context, taskID string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+s.token, telemetry.TaskIDMetadata, taskID)
}

// Status asks the sandbox for its status.
func (s *Sandbox) Status(ctx context.Context) (*sandboxv1.StatusResponse, error) {
	st, err := s.rpc.Status(s.ctx(ctx), &sandboxv1.StatusRequest{})
	if err != nil {
		return nil, fmt.Errorf("sandbox status: %w", err)
	}
	return st, nil
}

// EndTurn implements TurnEnder.
func (s *Sandbox) EndTurn(ctx context.Context, turnID string) error {
	s.mu.Lock()
	hooks := slices.Clone(s.onEnd)
	s.mu.Unlock()
	for _, f := range hooks {
		f(turnID)
	}
	if _, err := s.rpc.EndTurn(s.turnCtx(ctx, turnID), &sandboxv1.EndTurnRequest{TurnId: turnID}); err != nil {
		return fmt.Errorf("sandbox end turn: %w", err)
	}
	return nil
}

// ListTurns lists the sandbox's live turns.
func (s *Sandbox) ListTurns(ctx context.Context) ([]*sandboxv1.TurnInfo, error) {
	resp, err := s.rpc.ListTurns(s.ctx(ctx), &sandboxv1.ListTurnsRequest{})
	if err != nil {
		return nil, fmt.Errorf("sandbox list turns: %w", err)
	}
	return resp.GetTurns(), nil
}

// SandboxBuiltins are the built-in tools that run in the sandbox.
var SandboxBuiltins = []string{"read", "glob", "list", "grep", "bash"}

// SandboxTools returns the agent's sandbox tools: enabled builtins and
// declared command tools.
func SandboxTools(sb *Sandbox, agent *settings.Agent) []Tool {
	var out []Tool
	m := agent.Manifest
	if m == nil {
		return nil
	}
	for _, name := range SandboxBuiltins {
		if slices.Contains(m.Tools.Enabled, name) {
			out = append(out, &sandboxTool{sb: sb, def: builtinDefs[name], scope: toolset.BuiltinTools[name]})
		}
	}
	for _, t := range m.Declared {
		if len(t.Command) == 0 {
			continue // service tools are vessel/tools/service's
		}
		params := t.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		st := &sandboxTool{sb: sb, scope: scopes.Of(t.Scope), def: model.ToolDef{Type: "function", Function: model.FunctionDef{
			Name: t.Name, Description: t.Description, Parameters: params}}}
		if t.TimeoutSeconds > 0 {
			st.timeout = time.Duration(t.TimeoutSeconds) * time.Second
		}
		out = append(out, st)
	}
	return out
}

type sandboxTool struct {
	sb      *Sandbox
	def     model.ToolDef
	scope   string
	timeout time.Duration
}

func (t *sandboxTool) Def() model.ToolDef { return t.def }
func (t *sandboxTool) Scope() string      { return t.scope }

// Run streams the call's output from the sandbox.
func (t *sandboxTool) Run(ctx context.Context, turn *Turn, call Call) (*Result, error) {
	args := call.Arguments
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	req := &sandboxv1.RunRequest{TurnId: turn.ID, Owner: turn.Owner, CallId: call.ID, Tool: call.Name, ArgumentsJson: args}
	if t.timeout > 0 {
		req.TimeoutMs = uint32(t.timeout / time.Millisecond)
	}
	stream, err := t.sb.rpc.Run(t.sb.turnCtx(ctx, turn.ID), req)
	if err != nil {
		return nil, fmt.Errorf("sandbox run %s: %w", call.Name, err)
	}
	var out strings.Builder
	res := &Result{}
	var exit *sandboxv1.Exit
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sandbox run %s: %w", call.Name, err)
		}
		switch e := ev.Event.(type) {
		case *sandboxv1.RunResponse_Stdout:
			appendCapped(&out, e.Stdout, &res.Truncated)
		case *sandboxv1.RunResponse_Stderr:
			appendCapped(&out, e.Stderr, &res.Truncated)
		case *sandboxv1.RunResponse_File:
			// Not trusted yet: the loop checks every file again and notes
			// which were attached and which refused.
			res.Files = append(res.Files, File{Name: e.File.GetName(), MediaType: e.File.GetMediaType(), Content: e.File.GetContent()})
		case *sandboxv1.RunResponse_Refused:
			res.Refused = append(res.Refused, Refused{Name: e.Refused.GetName(), Reason: e.Refused.GetReason()})
		case *sandboxv1.RunResponse_Exit:
			exit = e.Exit
		}
	}
	if exit == nil {
		return nil, fmt.Errorf("sandbox run %s: the stream ended without an exit event", call.Name)
	}
	code := int(exit.GetCode())
	res.ExitCode = &code
	res.Stopped = exit.GetStopped()
	res.Truncated = res.Truncated || exit.GetTruncated()
	text := out.String()
	var notes []string
	switch {
	case exit.GetError() != "":
		res.IsError = true
		notes = append(notes, "error: "+exit.GetError())
	case res.Stopped != "":
		res.IsError = true
		notes = append(notes, "the call was stopped: "+res.Stopped)
	case code != 0:
		res.IsError = true
		notes = append(notes, fmt.Sprintf("exit code %d", code))
		if exit.GetSignal() != "" {
			notes[len(notes)-1] += " (" + exit.GetSignal() + ")"
		}
	}
	if res.Truncated {
		notes = append(notes, "the output was truncated")
	}
	if len(notes) > 0 {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "[" + strings.Join(notes, "; ") + "]"
	}
	res.Output = text
	return res, nil
}

func appendCapped(b *strings.Builder, p []byte, truncated *bool) {
	room := MaxModelOutput - b.Len()
	if room <= 0 {
		*truncated = true
		return
	}
	if len(p) > room {
		p = p[:room]
		for len(p) > 0 && !utf8.Valid(p) {
			p = p[:len(p)-1]
		}
		*truncated = true
	}
	b.Write(p)
}

func obj(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		m["required"] = required
	}
	return m
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func def(name, desc string, params map[string]any) model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: name, Description: desc, Parameters: params}}
}

var builtinDefs = map[string]model.ToolDef{
	"read": def("read", "Read a text file. Paths are absolute or relative to the turn's workspace.", obj(map[string]any{
		"path":   str("The file to read."),
		"offset": map[string]any{"type": "integer", "description": "First line to read, from 1."},
		"limit":  map[string]any{"type": "integer", "description": "How many lines to read."},
	}, "path")),
	"glob": def("glob", "Find files whose path matches a glob pattern such as **/*.csv.", obj(map[string]any{
		"pattern": str("The glob pattern."),
		"path":    str("The folder to search; default the workspace."),
	}, "pattern")),
	"list": def("list", "List a folder's entries with their sizes.", obj(map[string]any{
		"path": str("The folder to list; default the workspace."),
	})),
	"grep": def("grep", "Search files for a regular expression.", obj(map[string]any{
		"pattern":     str("The regular expression."),
		"path":        str("The file or folder to search; default the workspace."),
		"include":     str("Only files whose name matches this glob."),
		"ignore_case": map[string]any{"type": "boolean", "description": "Match case-insensitively."},
	}, "pattern")),
	"bash": def("bash", "Run a shell command in the turn's workspace. It has no network; files written to $VESSEL_OUTBOX are returned to the user.", obj(map[string]any{
		"command": str("The command line."),
	}, "command")),
}
