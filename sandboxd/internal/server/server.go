// Package server implements the sandbox API (RunService) over gRPC and
// HTTP/JSON on one port.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/outbox"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/tools"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Config is what the server needs.
type Config struct {
	Agent       string
	Fingerprint string
	Version     string
	LandlockABI int
	// Tier is the isolation tier sandboxd checked at start (confine.Tier*),
	// reported on /status for the vessel to compare with the deployment's.
	Tier string
	// PackageDir and Mounts are absolute, clean, read-only trees.
	PackageDir string
	Mounts     []string
	// Tools may be nil (every built-in on, no declared tools, no files).
	Tools *toolset.Set
	Token string
	// Filter is the seccomp program from confine.BuildFilter.
	Filter         []byte
	Workspaces     *workspace.Manager
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	OutputCap      int64
	NProc          uint64
	// CallMemory is RLIMIT_AS of every process of a call (0: none).
	CallMemory uint64
	// ServeIdle, ServeInput and ServeOutput bound a served MCP server
	// (Serve): its idle time when the vessel names none, its stdin bytes,
	// and its stdout bytes (DefaultServe* if unset).
	ServeIdle   time.Duration
	ServeInput  int64
	ServeOutput int64
	// OutputBudget bounds the call output sandboxd holds at once across
	// all calls (DefaultOutputBudget if unset).
	OutputBudget int64
	Logf         func(string, ...any)
	// Logger writes one line per call, with the task id the vessel sent;
	// default none.
	Logger *zap.Logger
	// Metrics receives the series (NewMetrics); nil keeps them in a
	// registry nobody reads.
	Metrics *Metrics
	// Audit receives one OCSF Process Activity event per call
	// (docs/audit.md); nil writes none.
	Audit *audit.Writer
}

// Server implements sandboxv1.RunServiceServer.
type Server struct {
	sandboxv1.UnimplementedRunServiceServer
	cfg    Config
	log    *zap.Logger
	met    *Metrics
	budget *semaphore.Weighted
	roots  tools.Roots
	ro     []string
	devs   []string
	// grants holds ro and devs open for the calls' rulesets.
	grants *confine.Grants
}

// DefaultOutputBudget is how much call output sandboxd holds at once, all
// calls together: 24 output floods to a slow reader once took it from 35
// to 244 MB.
const DefaultOutputBudget = 32 << 20

// systemDirs are readable (and executable) by every call, when present.
var systemDirs = []string{"/usr", "/bin", "/lib", "/lib64", "/lib32", "/etc", "/sbin", "/opt"}

// New checks the config and prepares the read-only trees.
func New(cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("no sandbox token")
	}
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 2 * time.Minute
	}
	if cfg.MaxTimeout < cfg.DefaultTimeout {
		cfg.MaxTimeout = max(10*time.Minute, cfg.DefaultTimeout)
	}
	if cfg.OutputCap <= 0 {
		cfg.OutputCap = 1 << 20
	}
	if cfg.NProc == 0 {
		cfg.NProc = 512
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.OutputBudget <= 0 {
		cfg.OutputBudget = DefaultOutputBudget
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(prometheus.NewRegistry(), nil)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, met: cfg.Metrics, budget: semaphore.NewWeighted(cfg.OutputBudget)}
	for _, d := range systemDirs {
		if _, err := os.Stat(d); err == nil {
			s.ro = append(s.ro, d)
		}
	}
	for _, d := range append([]string{cfg.PackageDir}, cfg.Mounts...) {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return nil, fmt.Errorf("read-only path %q must be absolute and clean", d)
		}
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("read-only path: %w", err)
		}
		s.ro = append(s.ro, d)
		s.roots.Dirs = append(s.roots.Dirs, d)
	}
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"} {
		if _, err := os.Stat(d); err == nil {
			s.devs = append(s.devs, d)
		}
	}
	g, err := confine.OpenGrants(s.ro, s.devs)
	if err != nil {
		return nil, err
	}
	s.grants = g
	return s, nil
}

// ReadableByCalls reports whether path lies in a tree calls may read
// (system directories, the package, data mounts, the scratch directory),
// so a secret there would leak to them.
func (s *Server) ReadableByCalls(path string) (string, bool) {
	trees := append(append([]string{}, s.ro...), s.cfg.Workspaces.Scratch())
	for _, d := range trees {
		if path == d || strings.HasPrefix(path, d+"/") || d == "/" {
			return d, true
		}
	}
	return "", false
}

// Status reports confinement and the profile the sandbox started with.
func (s *Server) Status(context.Context, *sandboxv1.StatusRequest) (*sandboxv1.StatusResponse, error) {
	return &sandboxv1.StatusResponse{
		Confined:    true, // sandboxd refuses to start otherwise
		LandlockAbi: int32(s.cfg.LandlockABI),
		Fingerprint: s.cfg.Fingerprint,
		Version:     s.cfg.Version,
		Agent:       s.cfg.Agent,
		Tier:        s.cfg.Tier,
	}, nil
}

// EndTurn stops a turn's calls and deletes its workspace.
func (s *Server) EndTurn(ctx context.Context, req *sandboxv1.EndTurnRequest) (*sandboxv1.EndTurnResponse, error) {
	if !workspace.ValidTurnID(req.GetTurnId()) {
		return nil, status.Error(codes.InvalidArgument, "invalid turn id")
	}
	existed, err := s.cfg.Workspaces.End(req.GetTurnId())
	if err != nil {
		s.log.Warn("end turn failed", zap.String(telemetry.FieldTask, taskID(ctx)), zap.String("turn", req.GetTurnId()), zap.Error(err))
		return nil, status.Error(codes.Internal, "could not delete the workspace")
	}
	return &sandboxv1.EndTurnResponse{Existed: existed}, nil
}

// ListTurns reports the turns that hold a workspace.
func (s *Server) ListTurns(context.Context, *sandboxv1.ListTurnsRequest) (*sandboxv1.ListTurnsResponse, error) {
	turns := s.cfg.Workspaces.List()
	resp := &sandboxv1.ListTurnsResponse{Turns: make([]*sandboxv1.TurnInfo, len(turns))}
	for i, t := range turns {
		resp.Turns[i] = &sandboxv1.TurnInfo{TurnId: t.ID, Owner: t.Owner, RunningCalls: uint32(t.Running),
			IdleMs: uint64(t.Idle.Milliseconds()), UsageBytes: t.Usage}
	}
	return resp, nil
}

// Run runs one tool call and streams its events, ending with Exit.
func (s *Server) Run(req *sandboxv1.RunRequest, stream grpc.ServerStreamingServer[sandboxv1.RunResponse]) error {
	start := time.Now()
	pi := &procInfo{}
	ctx, span := s.startCallSpan(context.WithValue(stream.Context(), procKey{}, pi), req)
	exit, after := s.run(ctx, req, stream.Send)
	endCallSpan(span, exit)
	d := time.Since(start)
	exit.DurationUs = uint64(d.Microseconds())
	s.observe(stream.Context(), req, exit, d)
	s.audit(stream.Context(), req, exit, pi, start, start.Add(d))
	err := stream.Send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Exit{Exit: exit}})
	if after != nil {
		// Clean-up the vessel need not wait for (removing the call's
		// empty outbox costs a journal update on a disk-backed scratch).
		go after()
	}
	return err
}

type sendFunc func(*sandboxv1.RunResponse) error

func toolErr(msg string) *sandboxv1.Exit { return &sandboxv1.Exit{Code: -1, Error: msg} }

// run runs one call; the returned function, if any, is clean-up to do
// after the exit has been sent.
func (s *Server) run(ctx context.Context, req *sandboxv1.RunRequest, send sendFunc) (*sandboxv1.Exit, func()) {
	if !workspace.ValidTurnID(req.GetTurnId()) {
		return toolErr("invalid turn id: use 1 to 128 of [A-Za-z0-9._:-]"), nil
	}
	turn, err := s.cfg.Workspaces.Acquire(req.GetTurnId(), req.GetOwner())
	if err != nil {
		if errors.Is(err, workspace.ErrOwner) {
			return toolErr("this turn belongs to another owner"), nil
		}
		s.log.Warn("workspace failed", zap.String(telemetry.FieldTask, taskID(ctx)), zap.String("turn", req.GetTurnId()), zap.Error(err))
		return toolErr("could not prepare the turn's workspace"), nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	k := &killer{cancel: cancel}
	call, err := turn.Begin(k.kill)
	if err != nil {
		return toolErr("the turn has ended"), nil
	}
	defer turn.Done(call)

	tool := req.GetTool()
	stdout := &chunkWriter{send: send}
	switch tool {
	case tools.Read, tools.List, tools.Glob:
		if !s.enabled(tool) {
			return toolErr(fmt.Sprintf("the tool %q is not enabled for this agent", tool)), nil
		}
		return s.inProcess(tool, req.GetArgumentsJson(), turn.Dir, stdout), nil
	}
	argv, stdin, timeout, err := s.command(tool, req.GetArgumentsJson(), turn.Dir)
	if err != nil {
		return toolErr(err.Error()), nil
	}
	if ms := req.GetTimeoutMs(); ms > 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	timeout = min(timeout, s.cfg.MaxTimeout)
	return s.confined(ctx, turn, call, k, argv, stdin, timeout, send)
}

// killer stops a call synchronously (the disk check empties the workspace
// right after) and cancels its context.
type killer struct {
	mu     sync.Mutex
	proc   *confine.Process
	reason string
	cancel context.CancelCauseFunc
	// startErr is why the call could not start; the self-test explains it.
	startErr error
}

func (k *killer) kill(reason string) {
	k.mu.Lock()
	if k.reason == "" {
		k.reason = reason
	}
	p := k.proc
	k.mu.Unlock()
	if p != nil {
		p.Kill(reason)
	}
	k.cancel(errors.New(reason))
}

// started records the process; a kill that came first applies now.
func (k *killer) started(p *confine.Process) {
	k.mu.Lock()
	k.proc = p
	reason := k.reason
	k.mu.Unlock()
	if reason != "" {
		p.Kill(reason)
	}
}

// enabled reports whether the manifest turns a built-in on; without a
// manifest (tests, local experiments) every built-in is on.
func (s *Server) enabled(tool string) bool {
	m := s.cfg.Tools
	if m == nil {
		return true
	}
	return slices.Contains(m.Tools.Enabled, tool)
}

func (s *Server) inProcess(tool, args, ws string, w *chunkWriter) *sandboxv1.Exit {
	var err error
	truncated := false
	switch tool {
	case tools.Read:
		var a tools.ReadArgs
		if err = tools.Decode(args, &a); err == nil {
			truncated, err = s.roots.RunRead(a, ws, w, s.cfg.OutputCap)
		}
	case tools.List:
		var a tools.ListArgs
		if err = tools.Decode(args, &a); err == nil {
			err = s.roots.RunList(a, ws, w)
		}
	case tools.Glob:
		var a tools.GlobArgs
		if err = tools.Decode(args, &a); err == nil {
			err = s.roots.RunGlob(a, ws, w)
		}
	}
	if w.err != nil {
		return &sandboxv1.Exit{Code: -1, Stopped: "cancelled"}
	}
	if err != nil {
		return toolErr(err.Error())
	}
	return &sandboxv1.Exit{Code: 0, Truncated: truncated}
}

// command turns a tool call into argv, stdin and a default timeout.
func (s *Server) command(tool, args, ws string) ([]string, []byte, time.Duration, error) {
	switch tool {
	case tools.Grep:
		if !s.enabled(tool) {
			return nil, nil, 0, fmt.Errorf("the tool %q is not enabled for this agent", tool)
		}
		var a tools.GrepArgs
		if err := tools.Decode(args, &a); err != nil {
			return nil, nil, 0, err
		}
		argv, err := s.roots.GrepArgv(a, ws)
		return argv, nil, s.cfg.DefaultTimeout, err
	case tools.Bash:
		if !s.enabled(tool) {
			return nil, nil, 0, fmt.Errorf("the tool %q is not enabled for this agent", tool)
		}
		var a tools.BashArgs
		if err := tools.Decode(args, &a); err != nil {
			return nil, nil, 0, err
		}
		argv, err := tools.BashArgv(a)
		return argv, nil, s.cfg.DefaultTimeout, err
	}
	if m := s.cfg.Tools; m != nil {
		for _, t := range m.Declared {
			if t.Name == tool && len(t.Command) > 0 {
				timeout := s.cfg.DefaultTimeout
				if t.TimeoutSeconds > 0 {
					timeout = time.Duration(t.TimeoutSeconds) * time.Second
				}
				stdin := []byte(args)
				if len(bytes.TrimSpace(stdin)) == 0 {
					stdin = []byte("{}")
				}
				if !json.Valid(stdin) {
					return nil, nil, 0, errors.New("the arguments are not valid JSON")
				}
				return tools.DeclaredArgv(t.Command, s.cfg.PackageDir), stdin, timeout, nil
			}
		}
	}
	return nil, nil, 0, fmt.Errorf("unknown tool %q", tool)
}

// callLang is the C.UTF-8 locale under the name this system installs it
// by. glibc looks a locale up as spelled, then under its normalised name
// (C.utf8): where it is installed as C.utf8 (glibc 2.35 and later), a
// LANG of C.UTF-8 made every program fail to open each of its 12
// categories before finding them; older Debian and Ubuntu install it as
// C.UTF-8, which C.utf8 would never find.
var callLang = localeName("/usr/lib/locale")

// localeName picks the spelling of C.UTF-8 installed under dir.
func localeName(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "C.UTF-8")); err != nil {
		if _, err := os.Stat(filepath.Join(dir, "C.utf8")); err == nil {
			return "C.utf8"
		}
	}
	return "C.UTF-8"
}

// env is the whole environment of a call: nothing from sandboxd's own.
func env(ws, box string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + ws,
		"TMPDIR=" + ws,
		"PWD=" + ws,
		"VESSEL_OUTBOX=" + box,
		"LANG=" + callLang,
		"TERM=dumb",
		// Without SHELL, bash looks its user up to fill it in: the call's
		// uid is in no user database, so every call loaded glibc's NSS
		// modules (libnss_systemd and its libraries) and probed userdb,
		// about 40 opens and a dozen mappings, for nothing.
		"SHELL=/bin/bash",
	}
}

// confined runs a call as a confined process. The returned function, if
// any, removes the call's empty outbox; the caller runs it once the exit
// has been sent.
func (s *Server) confined(ctx context.Context, turn *workspace.Turn, call *workspace.Call, k *killer, argv []string,
	stdin []byte, timeout time.Duration, send sendFunc) (*sandboxv1.Exit, func()) {
	ws, err := os.OpenRoot(turn.Dir)
	if err != nil {
		s.cfg.Logf("opening workspace %s: %v", turn.Dir, err)
		return toolErr("the turn's workspace is gone"), nil
	}
	keepWS := false
	defer func() {
		if !keepWS {
			ws.Close()
		}
	}()
	boxRel := turn.TakeSpare()
	if boxRel == "" || !spareOK(ws, boxRel, turn) {
		if boxRel != "" {
			outbox.Remove(ws, boxRel)
		}
		boxRel = outboxName(turn.NextSeq())
		if err := makeOutbox(ws, boxRel, turn); err != nil {
			s.cfg.Logf("outbox for turn %s: %v", turn.ID, err)
			return toolErr("could not prepare the outbox"), nil
		}
	}
	limits := confine.Limits{
		NoFile:   4096,
		FileSize: uint64(max(s.cfg.Workspaces.TurnLimit(), 0)),
		NProc:    s.cfg.NProc,
		CPUSecs:  uint64(timeout/time.Second) + 1,
		// Per process: a call's processes together are bounded by
		// NProc times this, and in Compose by the container's memory.
		AddressSpace: s.cfg.CallMemory,
	}
	callEnv := env(turn.Dir, filepath.Join(turn.Dir, boxRel))
	path, err := confine.LookPath(argv[0], callEnv)
	if err != nil {
		return toolErr(err.Error()), nil
	}
	spec := confine.Spec{
		Path:      path,
		Argv:      argv,
		Env:       callEnv,
		ReadOnly:  s.ro,
		ReadWrite: []string{turn.Dir},
		Devices:   s.devs,
		Grants:    s.grants,
		// In the gvisor tier gVisor is the boundary (docs/security.md).
		NoLandlock: s.cfg.Tier == confine.TierGVisor,
		Limits:     limits,
		Filter:     s.cfg.Filter,
	}
	if msg := procCapMessage(s.cfg.Workspaces, turn); msg != "" {
		return toolErr(msg), nil
	}
	cgFiles, err := turn.OpenCgroup()
	if err != nil {
		s.cfg.Logf("turn %s: %v", turn.ID, err)
		return toolErr("could not start the call: the turn's cgroup is gone"), nil
	}
	spawnStart := time.Now()
	proc, err := confine.Start(confine.Options{
		Cgroup:     cgFiles,
		Spec:       spec,
		Ruleset:    s.ruleset(turn, &spec),
		Dir:        turn.Dir,
		Stdin:      stdin,
		Credential: turn.Credential(),
		Timeout:    timeout,
		OutputCap:  s.cfg.OutputCap,
		Budget:     s.budget,
	})
	closeAll(cgFiles)
	if err != nil {
		s.cfg.Logf("starting call: %v", err)
		if msg, ok := s.capReached(err); ok {
			return toolErr(msg), nil
		}
		k.mu.Lock()
		k.startErr = err
		k.mu.Unlock()
		return toolErr("could not start the call: " + err.Error()), nil
	}
	s.met.spawn.Observe(time.Since(spawnStart).Seconds())
	turn.SetPgid(call, proc.Pgid())
	if pi, ok := ctx.Value(procKey{}).(*procInfo); ok {
		pi.pid, pi.uid = proc.Pgid(), turn.UID
	}
	k.started(proc)
	// A cancelled stream (the vessel gave up) ends the call too.
	stopWatch := context.AfterFunc(ctx, func() { proc.Kill("cancelled") })
	res := proc.Wait(func(stream int, data []byte) error {
		if stream == confine.Stdout {
			return send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Stdout{Stdout: data}})
		}
		return send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Stderr{Stderr: data}})
	})
	stopWatch()
	exit := &sandboxv1.Exit{Code: int32(res.Code), Signal: res.Signal, Stopped: res.Stopped, Truncated: res.Truncated}
	if s.cfg.Workspaces.FullDuring(spawnStart) {
		exit.Error = workspace.FullMessage
	}
	if res.Stopped == workspace.ReasonDiskLimit {
		turn.WaitEmptied()
		return exit, nil // the workspace was emptied; no files
	}
	// Most calls leave the outbox empty: nothing to send, and removing the
	// directory can wait until the exit is out.
	empty := outbox.Empty(ws, boxRel)
	if !empty {
		s.sendFiles(ws, boxRel, turn, send)
	}
	// Directory work on a disk-backed scratch costs journal updates: do it
	// after the exit, and have the next call's outbox ready. An empty
	// outbox is renamed for it (cheaper than rmdir and mkdir); spareOK
	// checks it again before a call gets it.
	keepWS = true
	return exit, func() {
		defer ws.Close()
		next := outboxName(turn.NextSeq())
		made := empty && ws.Rename(boxRel, next) == nil
		if !made {
			if empty {
				outbox.Remove(ws, boxRel)
			}
			made = makeOutbox(ws, next, turn) == nil
		}
		if !made || !turn.PutSpare(next) {
			outbox.Remove(ws, next)
		}
	}
}

// outboxName names the turn's n-th outbox. Outboxes sit directly in the
// workspace, not beneath a shared parent: on a disk-backed scratch every
// directory made costs an inode allocation, which is a large part of a
// short turn's CPU (docs/performance.md).
func outboxName(n int) string { return ".outbox-" + strconv.Itoa(n) }

// spareOK checks an outbox made ahead before a call gets it: still a
// directory as it was made (the calls of the turn could have changed it
// meanwhile), and empty.
func spareOK(ws *os.Root, rel string, turn *workspace.Turn) bool {
	st, err := ws.Lstat(rel)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || st.Mode() != fs.ModeDir|0o700 || (turn.UID >= 0 && (int(sys.Uid) != turn.UID || int(sys.Gid) != turn.GID)) {
		return false
	}
	return outbox.Empty(ws, rel)
}

// ruleset is the turn's Landlock ruleset, built on its first call: the
// granted paths are the same for every call of a turn. nil (the start
// builds its own) if it cannot be had.
func (s *Server) ruleset(turn *workspace.Turn, spec *confine.Spec) *confine.Ruleset {
	c, err := turn.Shared(func() (io.Closer, error) { return confine.NewRuleset(spec) })
	if err != nil {
		return nil
	}
	rs, _ := c.(*confine.Ruleset)
	return rs
}

// makeOutbox makes a call's outbox: always a directory made here, so
// whatever a call of the turn put at the name beforehand is removed first.
func makeOutbox(ws *os.Root, rel string, turn *workspace.Turn) error {
	err := ws.Mkdir(rel, 0o700)
	if errors.Is(err, fs.ErrExist) {
		if err := ws.RemoveAll(rel); err != nil {
			return fmt.Errorf("removing %s: %w", rel, err)
		}
		err = ws.Mkdir(rel, 0o700)
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", rel, err)
	}
	// The outbox belongs to the turn's user.
	if turn.UID >= 0 {
		if err := ws.Lchown(rel, turn.UID, turn.GID); err != nil {
			return fmt.Errorf("handing %s to the turn's user: %w", rel, err)
		}
	}
	return nil
}

func (s *Server) sendFiles(ws *os.Root, boxRel string, turn *workspace.Turn, send sendFunc) {
	var allowed []string
	if s.cfg.Tools != nil {
		allowed = s.cfg.Tools.Output.Files
	}
	files, refused, err := outbox.Collect(ws, boxRel, allowed, turn.ReserveFile)
	if err != nil {
		s.cfg.Logf("outbox of turn %s: %v", turn.ID, err)
	}
	for _, f := range files {
		_ = send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_File{File: &sandboxv1.OutboxFile{
			Name: f.Name, MediaType: f.MediaType, Content: f.Content}}})
	}
	for _, r := range refused {
		_ = send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Refused{Refused: &sandboxv1.RefusedFile{
			Name: r.Name, Reason: r.Reason}}})
	}
}

// chunkWriter streams in-process tool output as stdout events.
type chunkWriter struct {
	send sendFunc
	err  error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	for off := 0; off < len(p); off += 32 << 10 {
		end := min(off+32<<10, len(p))
		chunk := append([]byte(nil), p[off:end]...)
		if err := w.send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Stdout{Stdout: chunk}}); err != nil {
			w.err = err
			return off, err
		}
	}
	return len(p), nil
}
