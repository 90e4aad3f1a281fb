// Command sandboxd is one agent's sandbox: it runs the agent's file, shell
// and command tools as confined processes and serves the sandbox API (gRPC
// and HTTP/JSON on one port).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/bytesize"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/server"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/uidlock"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
	"golang.org/x/sys/unix"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "health" {
		os.Exit(health(os.Args[2:], os.Stderr)) // the Compose healthcheck (health.go)
	}
	if err := run(os.Args[1:], confine.HostKernel(), confine.BuildFilter); err != nil {
		fmt.Fprintf(os.Stderr, "sandboxd: %v\n", err)
		os.Exit(1)
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }
func (s *sizeFlag) Set(v string) error {
	b, err := bytesize.Parse(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(b)
	return nil
}

// options are sandboxd's command-line flags.
type options struct {
	agent, pkg, toolsJSON, scratch  string
	listen, httpListen, fingerprint string
	uidRange                        string
	callTimeout, turnTTL            time.Duration
	nproc                           uint64
	callProcs                       int
	logLevel, metricsAddr, auditLog string
	uidLockDir, tier, cgroupMode    string
	turnProcs, ownerProcs           int64
	mounts                          multiFlag
	turnMemory, ownerMemory         sizeFlag
	turnDisk, userDisk, scratchSize sizeFlag
	callMemory, outBudget, memLimit sizeFlag
}

// parseFlags reads the command line; a bad flag exits (ExitOnError), a
// missing required one prints the usage and is an error.
func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("sandboxd", flag.ExitOnError)
	o := &options{outBudget: sizeFlag(server.DefaultOutputBudget), memLimit: sizeFlag(64 << 20)}
	fs.StringVar(&o.agent, "agent", "", "the agent this sandbox serves (required)")
	fs.StringVar(&o.pkg, "package", "", "the agent's package directory, read-only (required)")
	fs.StringVar(&o.toolsJSON, "tools", os.Getenv("VESSEL_SANDBOX_TOOLS"), "what calls may run, as JSON: the package's enabled built-ins, command tools, stdio MCP servers and output file types, as `astralvessel deploy` writes it from vessel.toml and tools/*.toml (env VESSEL_SANDBOX_TOOLS; required)")
	fs.StringVar(&o.scratch, "scratch", "", "directory for turn workspaces, ideally a tmpfs (required)")
	fs.StringVar(&o.listen, "listen", "0.0.0.0:8600", "address of the gRPC API (the vessel's)")
	fs.StringVar(&o.httpListen, "http-listen", "", "address of the HTTP/JSON gateway to the same API (probes, curl; default off)")
	fs.StringVar(&o.fingerprint, "fingerprint", "", "the profile fingerprint set at deploy time, reported on /status")
	fs.StringVar(&o.uidRange, "uid-range", "100000:4096", "FIRST:COUNT of the uids turns run as, one each (uid = gid); disjoint from every other sandbox's and service's")
	fs.DurationVar(&o.callTimeout, "call-timeout", 2*time.Minute, "default wall-clock limit of one call")
	fs.DurationVar(&o.turnTTL, "turn-ttl", 30*time.Minute, "idle time after which a turn the vessel never ended is deleted")
	fs.Uint64Var(&o.nproc, "max-procs", 512, "RLIMIT_NPROC of calls (counted per user across the sandbox)")
	fs.IntVar(&o.callProcs, "call-procs", 128, "stop a call whose process group holds more processes (checked twice a second; 0: off)")
	fs.StringVar(&o.logLevel, "log-level", os.Getenv("VESSEL_SANDBOX_LOG_LEVEL"), "log level: debug, info, warn or error (env VESSEL_SANDBOX_LOG_LEVEL; default info)")
	fs.StringVar(&o.metricsAddr, "metrics-listen", os.Getenv("VESSEL_SANDBOX_METRICS_LISTEN"), "address of the Prometheus /metrics listener (env VESSEL_SANDBOX_METRICS_LISTEN; default off)")
	fs.StringVar(&o.auditLog, "audit-log", os.Getenv("VESSEL_SANDBOX_AUDIT_LOG"), "append one OCSF Process Activity event per call to this file (env VESSEL_SANDBOX_AUDIT_LOG; default off); never where calls can read")
	fs.StringVar(&o.uidLockDir, "uid-lock-dir", uidlock.DefaultDir, "directory of the host-wide uid range reservations (shared by every sandboxd on the host)")
	fs.StringVar(&o.tier, "tier", confine.TierConfined, "the isolation tier the deployment asked for: confined (Landlock on the host kernel) or gvisor (under runsc); sandboxd refuses to start in another")
	fs.StringVar(&o.cgroupMode, "cgroups", "auto", "a cgroup per turn and per owner: auto (where one can be made), required, or off")
	fs.Int64Var(&o.turnProcs, "turn-procs", 0, "processes one turn may hold at once (cgroup pids.max, else RLIMIT_NPROC; default --owner-procs)")
	fs.Int64Var(&o.ownerProcs, "owner-procs", 0, "processes one owner may hold across turns (default: half the container's pids limit, else 256)")
	fs.Var(&o.turnMemory, "turn-memory", "memory of one turn, all its processes together (cgroup; default --call-memory)")
	fs.Var(&o.ownerMemory, "owner-memory", "memory of one owner across turns (cgroup; default twice --turn-memory)")
	fs.Var(&o.mounts, "mount", "a read-only data directory calls may read (repeatable)")
	fs.Var(&o.turnDisk, "turn-disk", "disk limit of one turn (default scratch size / 8)")
	fs.Var(&o.userDisk, "user-disk", "disk limit of one user across turns (default scratch size / 4, so two users at their limits leave half)")
	fs.Var(&o.scratchSize, "scratch-size", "size of the scratch filesystem (default: measured)")
	fs.Var(&o.memLimit, "memory-limit", "soft limit of sandboxd's own memory, for the Go runtime (GOMEMLIMIT wins when set)")
	fs.Var(&o.outBudget, "output-budget", "call output sandboxd holds at once, all calls together")
	fs.Var(&o.callMemory, "call-memory", "address-space limit of each process of a call, the agent's memory (default: none)")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits, as with the global flag set
	if o.agent == "" || o.pkg == "" || o.scratch == "" || o.toolsJSON == "" {
		fs.Usage()
		return nil, errors.New("--agent, --package, --tools and --scratch are required")
	}
	return o, nil
}

// confinement is what the kernel offers for the tier asked for: the
// Landlock ABI and the seccomp filter of calls.
type confinement struct {
	tier   string
	abi    int
	filter []byte
}

// checkConfinement refuses a start where calls cannot be confined.
func checkConfinement(o *options, kernel confine.Kernel, buildFilter func() ([]byte, error)) (confinement, error) {
	tier, err := confine.ParseTier(o.tier)
	if err != nil {
		return confinement{}, fmt.Errorf("--tier: %w", err)
	}
	abi, err := kernel.CheckTier(tier)
	if err != nil {
		return confinement{}, fmt.Errorf("refusing to start, calls cannot be confined: %w", err)
	}
	filter, err := buildFilter()
	if err != nil {
		return confinement{}, fmt.Errorf("refusing to start: %w", err)
	}
	return confinement{tier: tier, abi: abi, filter: filter}, nil
}

// inputs are what calls are given: the token, the package, the tools, the
// data mounts and the uids turns run as.
type inputs struct {
	token     string
	pkgDir    string
	toolSet   *toolset.Set
	mountDirs []string
	uids      workspace.UIDRange
}

// readInputs reads the token and checks the directories, tools and uid
// range the flags name.
func readInputs(o *options) (inputs, error) {
	var in inputs
	var err error
	if in.token, err = readToken(); err != nil {
		return in, err
	}
	if in.pkgDir, err = canonical(o.pkg); err != nil {
		return in, fmt.Errorf("--package: %w", err)
	}
	if in.toolSet, err = toolset.Parse(o.toolsJSON); err != nil {
		return in, fmt.Errorf("--tools: %w", err)
	}
	for _, m := range o.mounts {
		d, err := canonical(m)
		if err != nil {
			return in, fmt.Errorf("--mount: %w", err)
		}
		in.mountDirs = append(in.mountDirs, d)
	}
	if in.uids, err = workspace.ParseUIDRange(o.uidRange); err != nil {
		return in, fmt.Errorf("--uid-range: %w", err)
	}
	return in, nil
}

// run starts sandboxd with the command line args. kernel and buildFilter
// are the confinement probes; tests substitute failing ones.
func run(args []string, kernel confine.Kernel, buildFilter func() ([]byte, error)) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	zl, _, err := telemetry.NewLogger(o.logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	zl = zl.With(zap.String(telemetry.FieldAgent, o.agent))
	defer func() { _ = zl.Sync() }()
	// Off unless the OTEL_* variables ask for it; the confined calls never
	// see those variables (their environment is built, not inherited).
	tr, err := telemetry.StartTracing(context.Background(), "sandboxd", zl)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer tr.Stop(zl)
	logf := zl.Sugar().Infof
	if os.Getenv("GOMEMLIMIT") == "" && o.memLimit > 0 {
		// Output floods make garbage fast: collect before it piles up.
		debug.SetMemoryLimit(int64(o.memLimit))
	}

	conf, err := checkConfinement(o, kernel, buildFilter)
	if err != nil {
		return err
	}
	in, err := readInputs(o)
	if err != nil {
		return err
	}
	if err := canSwitchUsers(); err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	// Before anything runs as a uid of the range: it must be ours alone.
	res, err := uidlock.Reserve(o.uidLockDir, in.uids.First, in.uids.Count)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	defer res.Release()
	if res.Secured != "" {
		logf("uid reservation: %s", res.Secured)
	}
	caps := turnCaps{turnProcs: o.turnProcs, ownerProcs: o.ownerProcs, turnMemory: int64(o.turnMemory),
		ownerMemory: int64(o.ownerMemory), callMemory: int64(o.callMemory)}
	cgTree, turnLim, ownerLim, err := openCgroups(o.cgroupMode, treeName(o.agent, o.scratch), in.uids, caps, logf)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	if cgTree != nil {
		// On the way out (a refused start too) nothing of ours stays.
		defer func() { _ = cgTree.Kill(); _ = cgTree.Remove() }()
	} else if turnLim.Procs > 0 && uint64(turnLim.Procs) < o.nproc {
		// No cgroup: the turn's cap is its uid's RLIMIT_NPROC, and the
		// owner's is checked with the disk (workspace.Config.OwnerCaps).
		o.nproc = uint64(turnLim.Procs)
	}
	// Listen before the slow part (the workspaces, the confined self-test),
	// so a busy address is reported at once.
	ln, err := listenTCP("--listen", o.listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	var httpLn net.Listener
	if o.httpListen != "" {
		if httpLn, err = listenTCP("--http-listen", o.httpListen); err != nil {
			return err
		}
		defer httpLn.Close()
	}
	if err := diskLimits(o); err != nil {
		return err
	}
	wm, err := workspace.New(workspace.Config{Scratch: o.scratch, TurnLimit: int64(o.turnDisk), UserLimit: int64(o.userDisk),
		TTL: o.turnTTL, UIDs: in.uids, CallProcs: o.callProcs, Cgroups: cgTree, TurnCaps: turnLim, OwnerCaps: ownerLim})
	if err != nil {
		return err
	}
	reg := telemetry.NewRegistry()
	auditW, err := openAudit(o.auditLog)
	if err != nil {
		return err
	}
	if auditW != nil {
		defer auditW.Close()
	}
	server.RegisterTier(reg, conf.tier)
	srv, err := server.New(server.Config{
		Agent: o.agent, Fingerprint: o.fingerprint, Version: version, LandlockABI: conf.abi, Tier: conf.tier,
		PackageDir: in.pkgDir, Mounts: in.mountDirs, Tools: in.toolSet, Token: in.token, Filter: conf.filter,
		Workspaces: wm, DefaultTimeout: o.callTimeout, NProc: o.nproc, CallMemory: uint64(o.callMemory),
		OutputBudget: int64(o.outBudget), Logf: logf, Logger: zl, Metrics: server.NewMetrics(reg, wm), Audit: auditW,
	})
	if err != nil {
		return err
	}
	if err := secretsOutOfReach(srv, o.auditLog); err != nil {
		return err
	}
	if err := srv.SelfTest(context.Background()); err != nil {
		return fmt.Errorf("refusing to start, a confined test call failed: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go wm.Run(ctx, logf)
	if os.Getpid() == 1 {
		// PID 1 of a container: orphans of killed calls come to us.
		confine.EnableReaper()
		go confine.Reap(ctx)
	}
	api, err := srv.NewAPI(ctx)
	if err != nil {
		return fmt.Errorf("setting up the API: %w", err)
	}
	ms, err := telemetry.ServeMetrics(o.metricsAddr, reg, zl)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	defer ms.Close()
	zl.Info("confined calls, listening", zap.String("tier", conf.tier), zap.Int("landlock_abi", conf.abi), zap.String("addr", ln.Addr().String()),
		zap.String("http_addr", addrOf(httpLn)),
		zap.Int64("turn_disk", int64(o.turnDisk)), zap.Int64("user_disk", int64(o.userDisk)))
	return serve(ctx, api, ln, httpLn)
}

// diskLimits makes the scratch directory and fills in the default disk
// limits of a turn and a user from its size.
func diskLimits(o *options) error {
	if err := os.MkdirAll(o.scratch, 0o711); err != nil {
		return fmt.Errorf("--scratch: %w", err)
	}
	size := int64(o.scratchSize)
	if size <= 0 {
		var st unix.Statfs_t
		if err := unix.Statfs(o.scratch, &st); err != nil {
			return fmt.Errorf("measuring --scratch: %w", err)
		}
		size = int64(st.Blocks) * st.Bsize
	}
	if o.turnDisk <= 0 {
		o.turnDisk = sizeFlag(size / 8)
	}
	if o.userDisk <= 0 {
		o.userDisk = sizeFlag(size / 4)
	}
	return nil
}

// openAudit opens the audit log at path; none (nil) when path is empty.
func openAudit(path string) (*audit.Writer, error) {
	if path == "" {
		return nil, nil
	}
	rlo, err := rotlog.OptionsFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	w, err := audit.Open(path, "sandboxd", version, rlo)
	if err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	return w, nil
}

// secretsOutOfReach refuses a token file or an audit log that lies where
// tool calls can read.
func secretsOutOfReach(srv *server.Server, auditLog string) error {
	if f := os.Getenv("VESSEL_SANDBOX_TOKEN_FILE"); f != "" {
		if real, err := filepath.EvalSymlinks(f); err == nil {
			if tree, bad := srv.ReadableByCalls(real); bad {
				return fmt.Errorf("refusing to start: the token file %s lies in %s, which tool calls can read; "+
					"keep it elsewhere (Compose mounts it under /run/secrets)", real, tree)
			}
		}
	}
	if auditLog != "" {
		if real, err := filepath.EvalSymlinks(filepath.Dir(auditLog)); err == nil {
			if tree, bad := srv.ReadableByCalls(real); bad {
				return fmt.Errorf("refusing to start: the audit log %s lies in %s, which tool calls can read; keep it elsewhere", auditLog, tree)
			}
		}
	}
	return nil
}

// serve serves the API until it fails or a signal ends ctx, then shuts it
// down within 10 seconds.
func serve(ctx context.Context, api *server.API, ln, httpLn net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- api.Serve(ln, httpLn) }()
	select {
	case err := <-errc:
		api.Close()
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return api.Shutdown(shutdown)
}

// listenTCP listens on addr, the value of flag; a busy address gets one
// plain sentence.
func listenTCP(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s is already in use (another process listens there): stop that process or pass %s with another address", addr, flag)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return ln, nil
}

// addrOf is ln's address, or "off" when there is none.
func addrOf(ln net.Listener) string {
	if ln == nil {
		return "off"
	}
	return ln.Addr().String()
}

// readToken takes the token from VESSEL_SANDBOX_TOKEN_FILE or
// VESSEL_SANDBOX_TOKEN and removes both from the environment.
func readToken() (string, error) {
	defer os.Unsetenv("VESSEL_SANDBOX_TOKEN")
	if f := os.Getenv("VESSEL_SANDBOX_TOKEN_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("reading VESSEL_SANDBOX_TOKEN_FILE: %w", err)
		}
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("VESSEL_SANDBOX_TOKEN_FILE %s is empty", f)
	}
	if t := strings.TrimSpace(os.Getenv("VESSEL_SANDBOX_TOKEN")); t != "" {
		return t, nil
	}
	return "", errors.New("no token: set VESSEL_SANDBOX_TOKEN_FILE (or VESSEL_SANDBOX_TOKEN) to the agent's sandbox token")
}

func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// neededCaps are what sandboxd needs to give each turn a uid of its own:
// SETUID and SETGID to switch a call (and the end-of-turn sweep) to it,
// CHOWN to hand the workspace to it, KILL to stop its processes, and
// DAC_OVERRIDE to measure, read the outbox of and remove a workspace that
// the turn's user owns.
var neededCaps = []struct {
	bit  uint
	name string
}{
	{unix.CAP_SETUID, "CAP_SETUID"}, {unix.CAP_SETGID, "CAP_SETGID"}, {unix.CAP_CHOWN, "CAP_CHOWN"},
	{unix.CAP_KILL, "CAP_KILL"}, {unix.CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE"},
}

// canSwitchUsers says what is missing for a uid per turn: root (whose
// calls would otherwise share one user, and with it process limits,
// ownership, scheduling and signals) and the capabilities above.
func canSwitchUsers() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("sandboxd runs as uid %d, but every turn's calls need a uid of their own, which only "+
			"root can give: run it as root (in a container: user 0 with cap_drop ALL and cap_add %s, as "+
			"`astralvessel deploy` generates)", os.Geteuid(), capNames())
	}
	eff, err := effectiveCaps()
	if err != nil {
		return err
	}
	var missing []string
	for _, c := range neededCaps {
		if eff&(1<<c.bit) == 0 {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("sandboxd runs as root without %s, which it needs to give every turn a uid of its "+
			"own: add them to the container (cap_add %s)", strings.Join(missing, ", "), capNames())
	}
	return nil
}

func capNames() string {
	names := make([]string, len(neededCaps))
	for i, c := range neededCaps {
		names[i] = strings.TrimPrefix(c.name, "CAP_")
	}
	return strings.Join(names, ", ")
}

// effectiveCaps reads CapEff from /proc/self/status.
func effectiveCaps() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("reading capabilities: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("reading capabilities: %w", err)
			}
			return caps, nil
		}
	}
	return 0, errors.New("reading capabilities: no CapEff in /proc/self/status")
}
