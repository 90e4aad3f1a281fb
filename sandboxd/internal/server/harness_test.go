package server_test

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/server"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

//go:embed testdata/probe.py
var probePy []byte

const testToken = "test-token-0123456789"

// requireKernel skips (or fails under CI=true) without Landlock ABI 6 and seccomp.
func requireKernel(t testing.TB) int {
	t.Helper()
	abi, err := confine.Check()
	if err != nil {
		testenv.Require(t, false, "kernel features missing: "+err.Error())
	}
	return abi
}

type env struct {
	t        testing.TB
	base     string
	pkg      string
	data     string
	scratch  string
	addr     string // gRPC
	httpAddr string // the HTTP/JSON gateway
	client   sandboxv1.RunServiceClient
	wm       *workspace.Manager
	turns    map[string]*workspace.Turn
}

type envOpts struct {
	turnLimit, userLimit int64
	manifest             *toolset.Set
	outputCap            int64
	// callProcs is the per-call process cap (0: off); callMemory the
	// per-process address-space limit.
	callProcs    int
	callMemory   uint64
	outputBudget int64
	// logger and registry, when set, receive the server's call lines and
	// series.
	logger   *zap.Logger
	registry *prometheus.Registry
	// audit, when set, receives the Process Activity events.
	audit *audit.Writer
	// serveIdle, serveInput and serveOutput bound served processes.
	serveIdle               time.Duration
	serveInput, serveOutput int64
}

// nextRange hands every test sandbox a uid range of its own: sandboxd
// sweeps its range's processes at start, and tests of other packages
// run at the same time with ranges far from these.
var nextRange atomic.Uint32

func testUIDs() workspace.UIDRange {
	if os.Geteuid() != 0 {
		return workspace.UIDRange{}
	}
	return workspace.UIDRange{First: 300000 + 64*(nextRange.Add(1)%4000), Count: 64}
}

// newEnv starts a real sandboxd server on loopback with its package, data
// mount and scratch in a fresh directory.
func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	abi := requireKernel(t)
	base, err := os.MkdirTemp("", "sandboxd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	// World-writable package and data: only Landlock stands between a call
	// and a write, so the write tests test Landlock, not file modes.
	e := &env{t: t, base: base, pkg: filepath.Join(base, "pkg"), data: filepath.Join(base, "data"),
		scratch: filepath.Join(base, "scratch"), turns: map[string]*workspace.Turn{}}
	for _, d := range []string{e.pkg, e.data, filepath.Join(e.pkg, "tools")} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(d, 0o777)
	}
	_ = os.Chmod(base, 0o755)
	write(t, filepath.Join(e.pkg, "probe.py"), probePy, 0o666)
	write(t, filepath.Join(e.pkg, "secret-in-package.txt"), []byte("package text\n"), 0o666)
	write(t, filepath.Join(e.data, "guide.txt"), []byte("wren\nrobin\nfinch\n"), 0o666)
	write(t, filepath.Join(e.pkg, "tools", "echo.py"), []byte("import sys, json\nprint(json.dumps(json.load(sys.stdin), sort_keys=True))\n"), 0o666)
	if o.turnLimit == 0 {
		o.turnLimit = 6 << 20
	}
	if o.userLimit == 0 {
		o.userLimit = 10 << 20
	}
	if o.manifest == nil {
		o.manifest = &toolset.Set{
			Tools:  toolset.Builtins{Enabled: []string{"read", "glob", "list", "grep", "bash"}},
			Output: toolset.Output{Files: []string{"png", "svg", "csv", "pdf"}},
			Declared: []toolset.Tool{{Name: "echoargs", Command: []string{"python3", "{package}/tools/echo.py"}},
				{Name: "probe", Command: []string{"python3", "{package}/probe.py", "inet"}}},
		}
	}
	wm, err := workspace.New(workspace.Config{Scratch: e.scratch, TurnLimit: o.turnLimit, UserLimit: o.userLimit,
		UIDs: testUIDs(), Interval: 100 * time.Millisecond, CallProcs: o.callProcs})
	if err != nil {
		t.Fatal(err)
	}
	e.wm = wm
	filter, err := confine.BuildFilter()
	if err != nil {
		t.Fatal(err)
	}
	var met *server.Metrics
	if o.registry != nil {
		met = server.NewMetrics(o.registry, wm)
	}
	srv, err := server.New(server.Config{
		Logger: o.logger, Metrics: met, Audit: o.audit,
		Agent: "test", Fingerprint: "sha256:test", Version: "test", LandlockABI: abi,
		PackageDir: e.pkg, Mounts: []string{e.data}, Tools: o.manifest, Token: testToken, Filter: filter,
		Workspaces: wm, DefaultTimeout: 20 * time.Second, OutputCap: o.outputCap, NProc: 256, CallMemory: o.callMemory,
		OutputBudget: o.outputBudget,
		ServeIdle:    o.serveIdle, ServeInput: o.serveInput, ServeOutput: o.serveOutput,
		Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go wm.Run(ctx, func(f string, a ...any) { t.Logf(f, a...) })
	api, err := srv.NewAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = api.Serve(ln, hln) }()
	e.addr, e.httpAddr = ln.Addr().String(), hln.Addr().String()
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	e.client = sandboxv1.NewRunServiceClient(conn)
	t.Cleanup(func() {
		conn.Close()
		api.Close()
		cancel()
	})
	return e
}

func write(t testing.TB, p string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(p, mode)
}

func authCtx(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// result is everything a call streamed.
type result struct {
	stdout, stderr string
	files          []*sandboxv1.OutboxFile
	refused        []*sandboxv1.RefusedFile
	exit           *sandboxv1.Exit
}

func (r result) String() string {
	return fmt.Sprintf("exit=%v\nstdout=%q\nstderr=%q", r.exit, trim(r.stdout), trim(r.stderr))
}

func trim(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

type call struct {
	turn, owner, tool, args string
	timeoutMs               uint32
}

func (e *env) run(ctx context.Context, c call) (result, error) {
	if c.owner == "" {
		c.owner = "app/alice"
	}
	if c.turn == "" {
		c.turn = "turn-1"
	}
	st, err := e.client.Run(authCtx(ctx, testToken), &sandboxv1.RunRequest{
		TurnId: c.turn, Owner: c.owner, CallId: "call-1", Tool: c.tool, ArgumentsJson: c.args, TimeoutMs: c.timeoutMs})
	if err != nil {
		return result{}, err
	}
	var r result
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return r, err
		}
		switch x := ev.Event.(type) {
		case *sandboxv1.RunResponse_Stdout:
			r.stdout += string(x.Stdout)
		case *sandboxv1.RunResponse_Stderr:
			r.stderr += string(x.Stderr)
		case *sandboxv1.RunResponse_File:
			r.files = append(r.files, x.File)
		case *sandboxv1.RunResponse_Refused:
			r.refused = append(r.refused, x.Refused)
		case *sandboxv1.RunResponse_Exit:
			r.exit = x.Exit
		}
	}
	if r.exit == nil {
		return r, errors.New("no exit event")
	}
	return r, nil
}

// must runs a call that must complete (whatever its exit code).
func (e *env) must(c call) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := e.run(ctx, c)
	if err != nil {
		e.t.Fatalf("call %s %s: %v (%s)", c.tool, c.args, err, r)
	}
	return r
}

func (e *env) bash(turn, command string) result {
	e.t.Helper()
	return e.must(call{turn: turn, tool: "bash", args: jsonArgs("command", command)})
}

// probe runs probe.py ACTION ARG inside a confined call.
func (e *env) probe(turn, action, arg string) result {
	e.t.Helper()
	return e.bash(turn, fmt.Sprintf("python3 %s/probe.py %s %s", e.pkg, action, arg))
}

func jsonArgs(kv ...string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%q", kv[i], kv[i+1])
	}
	b.WriteString("}")
	return b.String()
}

// workspace is the turn's workspace directory (made for the default owner
// when the turn has not started yet); it stays known after the turn ends.
func (e *env) workspace(turn string) string {
	e.t.Helper()
	return e.turn(turn).Dir
}

// turn is the live turn (started for the default owner if need be), or
// the one seen last once it has ended.
func (e *env) turn(id string) *workspace.Turn {
	e.t.Helper()
	if t, ok := e.wm.Lookup(id); ok {
		e.turns[id] = t
		return t
	}
	if t, ok := e.turns[id]; ok {
		return t
	}
	t, err := e.wm.Acquire(id, "app/alice")
	if err != nil {
		e.t.Fatalf("turn %s: %v", id, err)
	}
	e.turns[id] = t
	return t
}

// assertBlocked requires a probe to report BLOCKED (with errno when given).
func assertBlocked(t *testing.T, r result, errno string) {
	t.Helper()
	if !strings.Contains(r.stdout, "BLOCKED") || strings.Contains(r.stdout, "ALLOWED") {
		t.Fatalf("attempt was not blocked:\n%s", r)
	}
	if errno != "" && !strings.Contains(r.stdout, "errno="+errno+" ") {
		t.Fatalf("want errno %s:\n%s", errno, r)
	}
}

// alive reports whether pid exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

// waitGone polls until pid has gone, up to a few seconds.
func waitGone(pid int) bool {
	for range 100 {
		if !alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func mkReq(turn, tool, args string) *sandboxv1.RunRequest {
	return &sandboxv1.RunRequest{TurnId: turn, Owner: "app/alice", CallId: "c", Tool: tool, ArgumentsJson: args}
}

func mkEnd(turn string) *sandboxv1.EndTurnRequest { return &sandboxv1.EndTurnRequest{TurnId: turn} }

func mkdirAll(d string) error {
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	return os.Chmod(d, 0o755)
}
