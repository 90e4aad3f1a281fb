package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// examples is the repository's examples folder.
func examples() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "examples")
}

// probeMCP builds examples/notes-mcp/testdata/probe-mcp, a real MCP server
// (the Go SDK) whose tools make the attempts probe.py makes, once per run.
var probeMCP = sync.OnceValues(func() (string, error) { return buildExample("./testdata/probe-mcp") })

// notesMCP builds the example server examples/notes-mcp.
var notesMCP = sync.OnceValues(func() (string, error) { return buildExample(".") })

func buildExample(pkg string) (string, error) {
	dir, err := os.MkdirTemp("", "example-mcp-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "server")
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = filepath.Join(examples(), "notes-mcp")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// newServeEnv is a sandbox whose package declares the probe server as "probe".
func newServeEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	o.manifest = &toolset.Set{
		Tools: toolset.Builtins{Enabled: []string{"bash"}},
		MCP: []toolset.Tool{{Name: "probe", MCP: &toolset.StdioMCP{Command: []string{"{package}/bin/probe-mcp"},
			Env: map[string]string{"PROBE_MODE": "test"}}}},
	}
	return newEnvWithBin(t, o, probeMCP, "probe-mcp")
}

// newEnvWithBin is a sandbox with a built example server at bin/<name> of its package.
func newEnvWithBin(t *testing.T, o envOpts, build func() (string, error), name string) *env {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, o)
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := mkdirAll(filepath.Join(e.pkg, "bin")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.pkg, "bin", name), b, 0o755)
	return e
}

// notebookTools is the notebook example's tools as deploy hands them to
// sandboxd (--tools; deployer/spec TestToolsetOfExamples derives the same
// from its tools/notes.toml).
var notebookTools = &toolset.Set{MCP: []toolset.Tool{{Name: "notes", MCP: &toolset.StdioMCP{
	Command: []string{"{package}/bin/notes-mcp", "--dir", "notes"}, Env: map[string]string{"NOTES_LANG": "en"}}}}}

// The notebook example: its MCP server writes its notes in the turn's
// workspace as the turn's user.
func TestServeNotebookExample(t *testing.T) {
	e := newEnvWithBin(t, envOpts{manifest: notebookTools}, notesMCP, "notes-mcp")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := e.serve(ctx, "turn-notes", "notes", 0)
	s.initialize()
	if out := s.tool("add_note", map[string]any{"title": "survey", "text": "starts 12 May"}); out != "saved survey" {
		t.Fatalf("add_note: %s", out)
	}
	if out := s.tool("read_note", map[string]any{"title": "survey"}); out != "starts 12 May" {
		t.Errorf("read_note: %s", out)
	}
	p := filepath.Join(e.workspace("turn-notes"), "notes", "survey.md")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatalf("the note is not in the workspace: %v", err)
	}
	if turn := e.turn("turn-notes"); turn.UID >= 0 && int(st.Sys().(*syscall.Stat_t).Uid) != turn.UID {
		t.Errorf("the note belongs to uid %d, not the turn's %d", st.Sys().(*syscall.Stat_t).Uid, turn.UID)
	}
	if _, err := e.client.EndTurn(authCtx(ctx, testToken), mkEnd("turn-notes")); err != nil {
		t.Fatal(err)
	}
	if ex := s.waitExit(); ex.GetStopped() != "cancelled" {
		t.Errorf("exit at the turn's end: %+v", ex)
	}
}

// served is one Serve stream spoken to as newline-delimited JSON-RPC.
type served struct {
	t      *testing.T
	stream grpc.BidiStreamingClient[sandboxv1.ServeRequest, sandboxv1.ServeResponse]
	lines  chan string
	exit   chan *sandboxv1.Exit
	mu     sync.Mutex
	stderr bytes.Buffer
	nextID int
}

func (e *env) serve(ctx context.Context, turn, server string, idleMs uint32) *served {
	e.t.Helper()
	stream, err := e.client.Serve(authCtx(ctx, testToken))
	if err != nil {
		e.t.Fatal(err)
	}
	if err := stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Start{Start: &sandboxv1.ServeStart{
		TurnId: turn, Owner: "app/alice", Server: server, IdleTimeoutMs: idleMs}}}); err != nil {
		e.t.Fatal(err)
	}
	s := &served{t: e.t.(*testing.T), stream: stream, lines: make(chan string, 64), exit: make(chan *sandboxv1.Exit, 1)}
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, pr)
		close(s.lines)
	}()
	go func() {
		defer pw.Close()
		for {
			resp, err := stream.Recv()
			if err != nil {
				close(s.exit)
				return
			}
			switch ev := resp.GetEvent().(type) {
			case *sandboxv1.ServeResponse_Stdout:
				_, _ = pw.Write(ev.Stdout)
			case *sandboxv1.ServeResponse_Stderr:
				s.mu.Lock()
				s.stderr.Write(ev.Stderr)
				s.mu.Unlock()
			case *sandboxv1.ServeResponse_Exit:
				s.exit <- ev.Exit
			}
		}
	}()
	return s
}

func (s *served) send(v any) {
	s.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Stdin{Stdin: append(b, '\n')}}); err != nil {
		s.t.Fatalf("send: %v", err)
	}
}

// rpc sends a request and returns its result (or fails the test).
func (s *served) rpc(method string, params any) json.RawMessage {
	s.t.Helper()
	s.nextID++
	id := s.nextID
	s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("%s: the server's stdout ended; stderr: %s", method, s.stderrText())
			}
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal([]byte(line), &msg) != nil || msg.ID == nil || *msg.ID != id {
				continue
			}
			if msg.Error != nil {
				s.t.Fatalf("%s: %s", method, msg.Error)
			}
			return msg.Result
		case <-timeout:
			s.t.Fatalf("%s: no answer; stderr: %s", method, s.stderrText())
		}
	}
}

func (s *served) stderrText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func (s *served) initialize() {
	s.t.Helper()
	s.rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// tool calls a tool and returns the text of its result.
func (s *served) tool(name string, args map[string]any) string {
	s.t.Helper()
	res := s.rpc("tools/call", map[string]any{"name": name, "arguments": args})
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		s.t.Fatalf("tools/call %s: %s", name, res)
	}
	return r.Content[0].Text
}

func (s *served) waitExit() *sandboxv1.Exit {
	s.t.Helper()
	select {
	case ex, ok := <-s.exit:
		if !ok {
			s.t.Fatal("the stream ended without an exit")
		}
		return ex
	case <-time.After(20 * time.Second):
		s.t.Fatal("no exit")
	}
	return nil
}

func blocked(t *testing.T, what, out string) {
	t.Helper()
	if !strings.HasPrefix(out, "BLOCKED") {
		t.Errorf("%s from inside the MCP server: %s", what, out)
	}
}

// The escape attempts that fail from bash fail from inside a served MCP
// server too: it runs as the turn's user, in the turn's workspace, under
// the same Landlock ruleset and seccomp filter.
func TestServeConfined(t *testing.T) {
	e := newServeEnv(t, envOpts{})
	e.bash("turn-other", "echo other-secret > secret.txt")
	other := filepath.Join(e.workspace("turn-other"), "secret.txt")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := e.serve(ctx, "turn-mcp", "probe", 0)
	s.initialize()
	ws := e.workspace("turn-mcp")
	who := s.tool("whoami", nil)
	turn := e.turn("turn-mcp")
	if !strings.Contains(who, "wd="+ws) || (turn.UID >= 0 && !strings.Contains(who, "uid="+strconv.Itoa(turn.UID)+" ")) {
		t.Errorf("identity: %s (turn uid %d, workspace %s)", who, turn.UID, ws)
	}
	if out := s.tool("write", map[string]any{"path": filepath.Join(ws, "inside.txt")}); out != "ALLOWED" {
		t.Errorf("writing in its workspace: %s", out)
	}
	blocked(t, "write to the package", s.tool("write", map[string]any{"path": filepath.Join(e.pkg, "x")}))
	blocked(t, "write to /tmp", s.tool("write", map[string]any{"path": "/tmp/mcp-escape"}))
	blocked(t, "write to the data mount", s.tool("write", map[string]any{"path": filepath.Join(e.data, "x")}))
	blocked(t, "write to another turn", s.tool("write", map[string]any{"path": filepath.Join(e.workspace("turn-other"), "x")}))
	blocked(t, "read of another turn", s.tool("read", map[string]any{"path": other}))
	blocked(t, "dial of a loopback listener", s.tool("dial", map[string]any{"path": ln.Addr().String()}))
	if n := accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections from the server", n)
	}
	if _, err := os.Stat("/tmp/mcp-escape"); err == nil {
		t.Error("/tmp/mcp-escape was written")
	}
	// Closing stdin ends the server; the exit is clean.
	if err := s.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_CloseStdin{CloseStdin: true}}); err != nil {
		t.Fatal(err)
	}
	if ex := s.waitExit(); ex.GetCode() != 0 || ex.GetStopped() != "" || ex.GetError() != "" {
		t.Errorf("exit after closing stdin: %+v", ex)
	}
}

// A child the server started, even in a session of its own, dies when
// the turn ends, and so does the server.
func TestServeChildDiesWithTurn(t *testing.T) {
	e := newServeEnv(t, envOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := e.serve(ctx, "turn-child", "probe", 0)
	s.initialize()
	out := s.tool("child", nil)
	pid, err := strconv.Atoi(strings.TrimPrefix(out, "child="))
	if err != nil || !alive(pid) {
		t.Fatalf("child: %s", out)
	}
	if _, err := e.client.EndTurn(authCtx(ctx, testToken), mkEnd("turn-child")); err != nil {
		t.Fatal(err)
	}
	if ex := s.waitExit(); ex.GetStopped() != "cancelled" {
		t.Errorf("exit: %+v", ex)
	}
	if !waitGone(pid) {
		t.Errorf("the server's child %d outlived the turn", pid)
	}
}

func TestServeHostile(t *testing.T) {
	e := newServeEnv(t, envOpts{serveOutput: 256 << 10, serveInput: 1 << 20})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t.Run("huge output", func(t *testing.T) {
		s := e.serve(ctx, "turn-flood", "probe", 0)
		s.initialize()
		s.send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tools/call",
			"params": map[string]any{"name": "flood", "arguments": map[string]any{"bytes": 1 << 20}}})
		if ex := s.waitExit(); !ex.GetTruncated() {
			t.Errorf("a flood past the output bound: %+v", ex)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		s := e.serve(ctx, "turn-hang", "probe", 300)
		s.initialize()
		s.send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tools/call",
			"params": map[string]any{"name": "hang", "arguments": map[string]any{}}})
		if ex := s.waitExit(); ex.GetStopped() != "idle" {
			t.Errorf("a silent server: %+v", ex)
		}
	})
	t.Run("too much input", func(t *testing.T) {
		s := e.serve(ctx, "turn-input", "probe", 0)
		big := bytes.Repeat([]byte(" "), 600<<10)
		for range 2 {
			_ = s.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Stdin{Stdin: big}})
		}
		if ex := s.waitExit(); ex.GetStopped() != "input_limit" || !strings.Contains(ex.GetError(), "stdin") {
			t.Errorf("over the input bound: %+v", ex)
		}
	})
	t.Run("oversize message", func(t *testing.T) {
		s := e.serve(ctx, "turn-chunk", "probe", 0)
		_ = s.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Stdin{Stdin: make([]byte, 1<<20+1)}})
		if ex := s.waitExit(); ex.GetStopped() != "input_limit" {
			t.Errorf("a message over the chunk bound: %+v", ex)
		}
	})
	t.Run("second start", func(t *testing.T) {
		s := e.serve(ctx, "turn-start", "probe", 0)
		_ = s.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Start{Start: &sandboxv1.ServeStart{TurnId: "turn-start"}}})
		if ex := s.waitExit(); !strings.Contains(ex.GetError(), "first message") {
			t.Errorf("a second start: %+v", ex)
		}
	})
	t.Run("undeclared server", func(t *testing.T) {
		s := e.serve(ctx, "turn-x", "bash", 0)
		if ex := s.waitExit(); !strings.Contains(ex.GetError(), `declares no MCP server "bash"`) {
			t.Errorf("an undeclared server: %+v", ex)
		}
	})
	t.Run("no start", func(t *testing.T) {
		stream, err := e.client.Serve(authCtx(ctx, testToken))
		if err != nil {
			t.Fatal(err)
		}
		_ = stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Stdin{Stdin: []byte("{}")}})
		if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
			t.Errorf("stdin first: %v", err)
		}
	})
	t.Run("no token", func(t *testing.T) {
		stream, err := e.client.Serve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_Start{Start: &sandboxv1.ServeStart{TurnId: "t", Server: "probe"}}})
		if _, err := stream.Recv(); status.Code(err) != codes.Unauthenticated {
			t.Errorf("without the token: %v", err)
		}
	})
}

// A served server is audited like a call: one Process Activity event when
// it ends, as the tool "mcp:<server>", with its pid and the turn's uid.
func TestServeAudited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, "sandboxd", "test", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newServeEnv(t, envOpts{audit: w})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := e.serve(ctx, "turn-audit", "probe", 0)
	s.initialize()
	_ = s.stream.Send(&sandboxv1.ServeRequest{Event: &sandboxv1.ServeRequest_CloseStdin{CloseStdin: true}})
	s.waitExit()
	_ = w.Close()
	evs, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	ev := evs[0]
	if ev.Process.Name != "mcp:probe" || ev.Process.Pid <= 0 || ev.Actor.User.Name != "app/alice" || ev.Unmapped["turn"] != "turn-audit" || ev.StatusID != audit.StatusSuccess {
		t.Errorf("event %+v %+v", ev, ev.Process)
	}
}
