package mcp

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// exampleBins builds examples/notes-mcp (the example server) and its
// testdata/probe-mcp (the hostile one), once per run.
var exampleBins = sync.OnceValues(func() (map[string]string, error) {
	_, file, _, _ := runtime.Caller(0)
	mod := filepath.Join(filepath.Dir(file), "..", "..", "..", "examples", "notes-mcp")
	dir, err := os.MkdirTemp("", "mcp-bins-")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, pkg := range map[string]string{"notes": ".", "probe": "./testdata/probe-mcp"} {
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Dir = mod
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s: %v\n%s", pkg, err, b)
		}
		out[name] = bin
	}
	return out, nil
})

// serveSandbox is a RunService on loopback whose Serve runs the example
// binaries as plain processes (sandboxd's tests confine them for real):
// it tests the vessel's side of the stream.
type serveSandbox struct {
	sandboxv1.UnimplementedRunServiceServer
	bins map[string]string
	dir  string

	mu     sync.Mutex
	served []string // "turn/server" per stream
	ended  []string
	procs  map[string][]*exec.Cmd
}

func (f *serveSandbox) Serve(stream grpc.BidiStreamingServer[sandboxv1.ServeRequest, sandboxv1.ServeResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	st := first.GetStart()
	exit := func(e *sandboxv1.Exit) error {
		return stream.Send(&sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Exit{Exit: e}})
	}
	bin, ok := f.bins[st.GetServer()]
	if !ok {
		return exit(&sandboxv1.Exit{Code: -1, Error: fmt.Sprintf("the package declares no MCP server %q", st.GetServer())})
	}
	ws := filepath.Join(f.dir, st.GetTurnId())
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	cmd := exec.CommandContext(stream.Context(), bin)
	cmd.Dir = ws
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	errOut, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return exit(&sandboxv1.Exit{Code: -1, Error: err.Error()})
	}
	f.mu.Lock()
	f.served = append(f.served, st.GetTurnId()+"/"+st.GetServer())
	f.procs[st.GetTurnId()] = append(f.procs[st.GetTurnId()], cmd)
	f.mu.Unlock()
	go func() {
		defer in.Close()
		for {
			req, err := stream.Recv()
			if err != nil || req.GetCloseStdin() {
				return
			}
			if _, err := in.Write(req.GetStdin()); err != nil {
				return
			}
		}
	}()
	var sendMu sync.Mutex
	pump := func(r io.Reader, wrap func([]byte) *sandboxv1.ServeResponse, done *sync.WaitGroup) {
		defer done.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				sendMu.Lock()
				_ = stream.Send(wrap(append([]byte(nil), buf[:n]...)))
				sendMu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go pump(out, func(b []byte) *sandboxv1.ServeResponse {
		return &sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Stdout{Stdout: b}}
	}, &wg)
	go pump(errOut, func(b []byte) *sandboxv1.ServeResponse {
		return &sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Stderr{Stderr: b}}
	}, &wg)
	wg.Wait()
	err = cmd.Wait()
	code := int32(cmd.ProcessState.ExitCode())
	sendMu.Lock()
	defer sendMu.Unlock()
	if err != nil && code < 0 {
		return exit(&sandboxv1.Exit{Code: -1, Signal: "SIGKILL", Stopped: "cancelled"})
	}
	return exit(&sandboxv1.Exit{Code: code})
}

func (f *serveSandbox) EndTurn(_ context.Context, req *sandboxv1.EndTurnRequest) (*sandboxv1.EndTurnResponse, error) {
	f.mu.Lock()
	f.ended = append(f.ended, req.GetTurnId())
	procs := f.procs[req.GetTurnId()]
	f.mu.Unlock()
	for _, c := range procs {
		_ = c.Process.Kill()
	}
	return &sandboxv1.EndTurnResponse{Existed: true}, nil
}

func (f *serveSandbox) snapshot() (served, ended []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.served...), append([]string(nil), f.ended...)
}

func newServeSandbox(t testing.TB) (*serveSandbox, *tools.Sandbox) {
	t.Helper()
	bins, err := exampleBins()
	if err != nil {
		t.Fatal(err)
	}
	f := &serveSandbox{bins: bins, dir: t.TempDir(), procs: map[string][]*exec.Cmd{}}
	gs := grpc.NewServer()
	sandboxv1.RegisterRunServiceServer(gs, f)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	sb, err := tools.DialSandbox("http://"+ln.Addr().String(), "token")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return f, sb
}

// stdioAgent grants one stdio server with a 10 s timeout: starting a server
// process and listing its tools can take seconds on a loaded machine (a 2 s
// timeout failed CI once). Tests of the timeout itself set their own.
func stdioAgent(server string, toolNames ...string) *settings.Agent {
	return &settings.Agent{ID: "notes-agent", Manifest: &settings.Manifest{MCP: []settings.Tool{{Name: server, MCP: &settings.StdioMCP{
		Command: []string{"{package}/bin/" + server}, Tools: toolNames, Scope: "tools:files",
		Scopes: map[string]string{"add_note": "tools:write"}, TimeoutSecs: 10}}}}}
}

func stdioTools(t testing.TB, sb *tools.Sandbox, a *settings.Agent, c *Client) map[string]*Tool {
	t.Helper()
	list, err := StdioTools(sb, a, c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Tool{}
	for _, tl := range list {
		out[tl.Def().Function.Name] = tl.(*Tool)
	}
	return out
}

func TestStdioServer(t *testing.T) {
	f, sb := newServeSandbox(t)
	set := stdioTools(t, sb, stdioAgent("notes", "add_note", "list_notes"), nil)
	if len(set) != 2 || set["notes__read_note"] != nil {
		t.Fatalf("tools: %v", set)
	}
	ctx := context.Background()
	add := set["notes__add_note"]
	if add.Scope() != "tools:write" || set["notes__list_notes"].Scope() != "tools:files" || add.Service() != "notes" {
		t.Errorf("scopes: %s %s", add.Scope(), set["notes__list_notes"].Scope())
	}
	add.Prepare(ctx, nil)
	def := add.Def().Function
	if !strings.Contains(def.Description, "Save a note") || !strings.Contains(fmt.Sprint(def.Parameters), "title") {
		t.Errorf("definition from tools/list: %+v", def)
	}
	served, ended := f.snapshot()
	if len(served) != 1 || !strings.HasPrefix(served[0], "mcp-list.notes.") || len(ended) != 1 || !strings.HasPrefix(ended[0], "mcp-list.notes.") {
		t.Errorf("the listing has a turn of its own, ended after: %v %v", served, ended)
	}
	t1 := &tools.Turn{ID: "task-1", Agent: "notes-agent", Owner: "web/alice"}
	res, err := add.Run(ctx, t1, tools.Call{ID: "c1", Name: "notes__add_note", Arguments: `{"title":"wren","text":"small"}`})
	if err != nil || res.IsError || res.Output != "saved wren" {
		t.Fatalf("add: %+v %v", res, err)
	}
	res, err = set["notes__list_notes"].Run(ctx, t1, tools.Call{ID: "c2", Arguments: `{}`})
	if err != nil || res.IsError || res.Output != `{"titles":["wren"]}` {
		t.Fatalf("list: %+v %v", res, err)
	}
	res, _ = add.Run(ctx, t1, tools.Call{ID: "c3", Arguments: `{"title":"../x","text":"y"}`})
	if !res.IsError || !strings.Contains(res.Output, "the notes MCP server reported an error: invalid title") {
		t.Errorf("a tool error: %+v", res)
	}
	served, _ = f.snapshot()
	if n := strings.Count(strings.Join(served, ","), "task-1/notes"); n != 1 {
		t.Errorf("the turn's calls share one server process; served %v", served)
	}
	// The turn ends: its session closes and the sandbox ends the turn.
	if err := sb.EndTurn(ctx, "task-1"); err != nil {
		t.Fatal(err)
	}
	// Another turn starts a server of its own, which sees its own workspace.
	t2 := &tools.Turn{ID: "task-2", Agent: "notes-agent", Owner: "web/bob"}
	res, err = set["notes__list_notes"].Run(ctx, t2, tools.Call{ID: "c4", Arguments: `{}`})
	if err != nil || res.Output != `{"titles":[]}` {
		t.Fatalf("list in another turn: %+v %v", res, err)
	}
	served, _ = f.snapshot()
	if strings.Count(strings.Join(served, ","), "task-2/notes") != 1 {
		t.Errorf("served: %v", served)
	}
}

func TestStdioHostile(t *testing.T) {
	_, sb := newServeSandbox(t)
	c := &Client{MaxResponse: 64 << 10}
	set := stdioTools(t, sb, stdioAgent("probe", "flood", "garbage", "hang", "whoami"), c)
	ctx := context.Background()
	// The server is started and listed with the 10 s grant (a loaded
	// machine can take seconds); only the "hang" call, expected to time
	// out, runs under a 2 s one. Every probe tool shares the one server.
	probe := set["probe__hang"].srv
	probe.refresh(ctx)
	if _, why := probe.cached("hang"); why != "" {
		t.Fatalf("listing the probe server: %s", why)
	}
	turn := &tools.Turn{ID: "task-h", Agent: "notes-agent", Owner: "web/alice"}
	run := func(name, args string) string {
		t.Helper()
		res, err := set["probe__"+name].Run(ctx, turn, tools.Call{ID: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			t.Fatalf("%s did not fail: %s", name, res.Output)
		}
		return res.Output
	}
	probe.grant.TimeoutSecs = 2
	if out := run("hang", `{}`); out != "the probe MCP server did not answer within 2s while calling hang" {
		t.Errorf("never answering: %s", out)
	}
	probe.grant.TimeoutSecs = 10
	if out := run("flood", `{"bytes": 1000000}`); !strings.Contains(out, "sent more than 65536 bytes while calling flood; nothing of it was kept") {
		t.Errorf("huge output: %s", out)
	}
	// The broken session is gone; the next call starts the server again.
	res, err := set["probe__whoami"].Run(ctx, turn, tools.Call{ID: "w", Arguments: `{}`})
	if err != nil || res.IsError || !strings.Contains(res.Output, "pid=") {
		t.Errorf("after a broken session: %+v %v", res, err)
	}
	if out := run("garbage", `{}`); !strings.HasPrefix(out, "the probe MCP server broke the protocol while calling garbage") {
		t.Errorf("malformed JSON-RPC: %s", out)
	}
	if out := run("whoami", `[1]`); out != "probe__whoami needs its arguments as a JSON object" {
		t.Errorf("bad arguments: %s", out)
	}
	// A server the sandbox will not run.
	gone := stdioTools(t, sb, stdioAgent("missing", "x"), nil)["missing__x"]
	res, err = gone.Run(ctx, turn, tools.Call{ID: "m", Arguments: `{}`})
	if err != nil || !res.IsError || !strings.Contains(res.Output, `stopped while listing its tools: the package declares no MCP server "missing"`) {
		t.Errorf("undeclared server: %+v %v", res, err)
	}
	_ = sb.EndTurn(ctx, "task-h")
}

// BenchmarkStdioCall is one call of a stdio server's tool in a turn whose
// session is open: tools/call over the Serve stream to a real server
// process (the example notes server, unconfined here) and back.
func BenchmarkStdioCall(b *testing.B) {
	_, sb := newServeSandbox(b)
	tl := stdioTools(b, sb, stdioAgent("notes", "list_notes"), nil)["notes__list_notes"]
	ctx := context.Background()
	tr := &tools.Turn{ID: "bench", Owner: "web/alice"}
	call := tools.Call{Arguments: `{}`}
	if res, err := tl.Run(ctx, tr, call); err != nil || res.IsError {
		b.Fatalf("%+v %v", res, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := tl.Run(ctx, tr, call)
		if err != nil || res.IsError {
			b.Fatalf("%+v %v", res, err)
		}
	}
	_ = sb.EndTurn(ctx, "bench")
}

// An agent rebuilt (a reload) keeps its turns' sessions and adds no
// turn-end hook.
func TestStdioRebuildSharesSessions(t *testing.T) {
	f, sb := newServeSandbox(t)
	a := stdioAgent("notes", "list_notes")
	first := stdioTools(t, sb, a, nil)["notes__list_notes"]
	ctx := context.Background()
	tr := &tools.Turn{ID: "task-r", Owner: "web/alice"}
	if res, err := first.Run(ctx, tr, tools.Call{Arguments: `{}`}); err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	again := stdioTools(t, sb, a, nil)["notes__list_notes"]
	if res, err := again.Run(ctx, tr, tools.Call{Arguments: `{}`}); err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	served, _ := f.snapshot()
	if n := strings.Count(strings.Join(served, ","), "task-r/notes"); n != 1 {
		t.Errorf("the rebuilt agent started another server for the turn: %v", served)
	}
	if first.srv.stdio != again.srv.stdio {
		t.Error("the rebuilt agent has a per-turn side of its own")
	}
	_ = sb.EndTurn(ctx, "task-r")
}
