package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/tools"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
)

// Bounds of a served process (Serve).
const (
	// MaxServeChunk is the most stdin bytes one ServeRequest may carry.
	MaxServeChunk = 1 << 20
	// DefaultServeIdle stops a served process after this long without a
	// byte in either direction, when the vessel asks for no other.
	DefaultServeIdle = 5 * time.Minute
	// DefaultServeInput bounds the stdin bytes of one served process.
	DefaultServeInput = 64 << 20
	// DefaultServeOutput bounds the stdout (and, apart, the stderr) bytes
	// of one served process; past it the process is stopped.
	DefaultServeOutput = 64 << 20
)

// Stop reasons only a served process has.
const (
	stopIdle       = "idle"
	stopInputLimit = "input_limit"
)

// servePrefix names a served server in log lines and metrics ("mcp:notes").
const servePrefix = "mcp:"

// Serve runs one MCP server the package declares as a long-lived confined
// process of a turn, its stdin fed from the stream's requests and its
// stdout and stderr sent as responses, ending with one exit.
func (s *Server) Serve(stream grpc.BidiStreamingServer[sandboxv1.ServeRequest, sandboxv1.ServeResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	st := first.GetStart()
	if st == nil {
		return status.Error(codes.InvalidArgument, "the first message of Serve must be start")
	}
	begun := time.Now()
	// Logged, traced and audited as a call of the tool "mcp:<server>".
	req := &sandboxv1.RunRequest{TurnId: st.GetTurnId(), Owner: st.GetOwner(), Tool: servePrefix + st.GetServer()}
	pi := &procInfo{}
	ctx, span := s.startCallSpan(context.WithValue(stream.Context(), procKey{}, pi), req)
	exit := s.serve(ctx, st, stream)
	endCallSpan(span, exit)
	d := time.Since(begun)
	exit.DurationUs = uint64(d.Microseconds())
	s.observe(stream.Context(), req, exit, d)
	s.audit(stream.Context(), req, exit, pi, begun, begun.Add(d))
	return stream.Send(&sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Exit{Exit: exit}})
}

func (s *Server) serveIdle(ms uint32) time.Duration {
	idle := s.cfg.ServeIdle
	if idle <= 0 {
		idle = DefaultServeIdle
	}
	if ms > 0 {
		idle = time.Duration(ms) * time.Millisecond
	}
	return min(idle, s.cfg.MaxTimeout)
}

type serveStream = grpc.BidiStreamingServer[sandboxv1.ServeRequest, sandboxv1.ServeResponse]

func (s *Server) serve(ctx context.Context, st *sandboxv1.ServeStart, stream serveStream) *sandboxv1.Exit {
	if !workspace.ValidTurnID(st.GetTurnId()) {
		return toolErr("invalid turn id: use 1 to 128 of [A-Za-z0-9._:-]")
	}
	decl := s.cfg.Tools.StdioMCP(st.GetServer())
	if decl == nil || decl.MCP == nil || len(decl.MCP.Command) == 0 {
		return toolErr(fmt.Sprintf("the package declares no MCP server %q", st.GetServer()))
	}
	turn, err := s.cfg.Workspaces.Acquire(st.GetTurnId(), st.GetOwner())
	if err != nil {
		if errors.Is(err, workspace.ErrOwner) {
			return toolErr("this turn belongs to another owner")
		}
		s.log.Warn("workspace failed", zap.String(telemetry.FieldTask, taskID(ctx)), zap.String("turn", st.GetTurnId()), zap.Error(err))
		return toolErr("could not prepare the turn's workspace")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	k := &killer{cancel: cancel}
	call, err := turn.Begin(k.kill)
	if err != nil {
		return toolErr("the turn has ended")
	}
	defer turn.Done(call)

	argv := tools.DeclaredArgv(decl.MCP.Command, s.cfg.PackageDir)
	callEnv := serveEnv(turn.Dir, decl.MCP.Env)
	path, err := confine.LookPath(argv[0], callEnv)
	if err != nil {
		return toolErr(err.Error())
	}
	spec := confine.Spec{
		Path: path, Argv: argv, Env: callEnv,
		ReadOnly: s.ro, ReadWrite: []string{turn.Dir}, Devices: s.devs, Grants: s.grants,
		NoLandlock: s.cfg.Tier == confine.TierGVisor,
		Limits: confine.Limits{
			NoFile:       4096,
			FileSize:     uint64(max(s.cfg.Workspaces.TurnLimit(), 0)),
			NProc:        s.cfg.NProc,
			CPUSecs:      uint64(s.cfg.MaxTimeout/time.Second) + 1,
			AddressSpace: s.cfg.CallMemory,
		},
		Filter: s.cfg.Filter,
	}
	outCap := s.cfg.ServeOutput
	if outCap <= 0 {
		outCap = DefaultServeOutput
	}
	if msg := procCapMessage(s.cfg.Workspaces, turn); msg != "" {
		return toolErr(msg)
	}
	cgFiles, err := turn.OpenCgroup()
	if err != nil {
		return toolErr("could not start the MCP server: the turn's cgroup is gone")
	}
	proc, err := confine.Start(confine.Options{
		Spec: spec, Ruleset: s.ruleset(turn, &spec), Dir: turn.Dir, StdinPipe: true,
		Credential: turn.Credential(), OutputCap: outCap, Budget: s.budget, Cgroup: cgFiles,
	})
	closeAll(cgFiles)
	if msg, ok := s.capReached(err); ok {
		return toolErr(msg)
	}
	if err != nil {
		s.cfg.Logf("starting MCP server %s: %v", st.GetServer(), err)
		return toolErr("could not start the MCP server: " + err.Error())
	}
	turn.SetPgid(call, proc.Pgid())
	if pi, ok := ctx.Value(procKey{}).(*procInfo); ok {
		pi.pid, pi.uid = proc.Pgid(), turn.UID
	}
	k.started(proc)
	stopWatch := context.AfterFunc(ctx, func() { proc.Kill("cancelled") })
	defer stopWatch()

	idle := s.serveIdle(st.GetIdleTimeoutMs())
	var mu sync.Mutex
	timer := time.AfterFunc(idle, func() { proc.Kill(stopIdle) })
	defer timer.Stop()
	active := func() {
		mu.Lock()
		timer.Reset(idle)
		mu.Unlock()
	}
	var failMu sync.Mutex
	failure := ""
	fail := func(reason, msg string) {
		failMu.Lock()
		if failure == "" {
			failure = msg
		}
		failMu.Unlock()
		proc.Kill(reason)
	}
	maxIn := s.cfg.ServeInput
	if maxIn <= 0 {
		maxIn = DefaultServeInput
	}
	// stdin: the stream's requests, written in order; a full pipe holds
	// the reader back, and gRPC's flow control the vessel.
	go func() {
		in := proc.Stdin()
		defer in.Close()
		var total int64
		for {
			req, err := stream.Recv()
			if err != nil {
				// The vessel closed its side: the server reads EOF. A broken
				// stream is also caught by the context watch.
				return
			}
			switch ev := req.GetEvent().(type) {
			case *sandboxv1.ServeRequest_Stdin:
				active()
				if len(ev.Stdin) > MaxServeChunk {
					fail(stopInputLimit, fmt.Sprintf("a stdin message of %d bytes is over %d", len(ev.Stdin), MaxServeChunk))
					return
				}
				if total += int64(len(ev.Stdin)); total > maxIn {
					fail(stopInputLimit, fmt.Sprintf("more than %d bytes of stdin", maxIn))
					return
				}
				if _, err := in.Write(ev.Stdin); err != nil {
					return // the process closed its stdin or died
				}
			case *sandboxv1.ServeRequest_CloseStdin:
				return
			default:
				fail("cancelled", "start may only be the first message")
				return
			}
		}
	}()
	res := proc.Wait(func(stream_ int, data []byte) error {
		active()
		if stream_ == confine.Stdout {
			return stream.Send(&sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Stdout{Stdout: data}})
		}
		return stream.Send(&sandboxv1.ServeResponse{Event: &sandboxv1.ServeResponse_Stderr{Stderr: data}})
	})
	exit := &sandboxv1.Exit{Code: int32(res.Code), Signal: res.Signal, Stopped: res.Stopped, Truncated: res.Truncated}
	failMu.Lock()
	exit.Error = failure
	failMu.Unlock()
	if res.Stopped == workspace.ReasonDiskLimit {
		turn.WaitEmptied()
	}
	return exit
}

// serveEnv is a served process's environment: a call's, without an
// outbox (its files come back as MCP content), plus the declared variables.
func serveEnv(ws string, extra map[string]string) []string {
	out := []string{}
	for _, kv := range env(ws, "") {
		if !strings.HasPrefix(kv, "VESSEL_OUTBOX=") {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, k+"="+extra[k])
	}
	return out
}
