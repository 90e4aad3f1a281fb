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

// run starts sandboxd with the command line args. kernel and buildFilter
// are the confinement probes; tests substitute failing ones.
func run(args []string, kernel confine.Kernel, buildFilter func() ([]byte, error)) error {
	fs := flag.NewFlagSet("sandboxd", flag.ExitOnError)
	var (
		agent       = fs.String("agent", "", "the agent this sandbox serves (required)")
		pkg         = fs.String("package", "", "the agent's package directory, read-only (required)")
		toolsJSON   = fs.String("tools", os.Getenv("VESSEL_SANDBOX_TOOLS"), "what calls may run, as JSON: the package's enabled built-ins, command tools, stdio MCP servers and output file types, as `astralvessel deploy` writes it from vessel.toml and tools/*.toml (env VESSEL_SANDBOX_TOOLS; required)")
		scratch     = fs.String("scratch", "", "directory for turn workspaces, ideally a tmpfs (required)")
		listen      = fs.String("listen", "0.0.0.0:8600", "address of the gRPC API (the vessel's)")
		httpListen  = fs.String("http-listen", "", "address of the HTTP/JSON gateway to the same API (probes, curl; default off)")
		fingerprint = fs.String("fingerprint", "", "the profile fingerprint set at deploy time, reported on /status")
		uidRange    = fs.String("uid-range", "100000:4096", "FIRST:COUNT of the uids turns run as, one each (uid = gid); disjoint from every other sandbox's and service's")
		callTimeout = fs.Duration("call-timeout", 2*time.Minute, "default wall-clock limit of one call")
		turnTTL     = fs.Duration("turn-ttl", 30*time.Minute, "idle time after which a turn the vessel never ended is deleted")
		nproc       = fs.Uint64("max-procs", 512, "RLIMIT_NPROC of calls (counted per user across the sandbox)")
		callProcs   = fs.Int("call-procs", 128, "stop a call whose process group holds more processes (checked twice a second; 0: off)")
		logLevel    = fs.String("log-level", os.Getenv("VESSEL_SANDBOX_LOG_LEVEL"), "log level: debug, info, warn or error (env VESSEL_SANDBOX_LOG_LEVEL; default info)")
		metricsAddr = fs.String("metrics-listen", os.Getenv("VESSEL_SANDBOX_METRICS_LISTEN"), "address of the Prometheus /metrics listener (env VESSEL_SANDBOX_METRICS_LISTEN; default off)")
		auditLog    = fs.String("audit-log", os.Getenv("VESSEL_SANDBOX_AUDIT_LOG"), "append one OCSF Process Activity event per call to this file (env VESSEL_SANDBOX_AUDIT_LOG; default off); never where calls can read")
		uidLockDir  = fs.String("uid-lock-dir", uidlock.DefaultDir, "directory of the host-wide uid range reservations (shared by every sandboxd on the host)")
		tierFlag    = fs.String("tier", confine.TierConfined, "the isolation tier the deployment asked for: confined (Landlock on the host kernel) or gvisor (under runsc); sandboxd refuses to start in another")
		cgroupMode  = fs.String("cgroups", "auto", "a cgroup per turn and per owner: auto (where one can be made), required, or off")
		turnProcs   = fs.Int64("turn-procs", 0, "processes one turn may hold at once (cgroup pids.max, else RLIMIT_NPROC; default --owner-procs)")
		ownerProcs  = fs.Int64("owner-procs", 0, "processes one owner may hold across turns (default: half the container's pids limit, else 256)")
		mounts      multiFlag
		turnMemory  sizeFlag
		ownerMemory sizeFlag
		turnDisk    sizeFlag
		userDisk    sizeFlag
		scratchSize sizeFlag
		callMemory  sizeFlag
		outBudget   = sizeFlag(server.DefaultOutputBudget)
		memLimit    = sizeFlag(64 << 20)
	)
	fs.Var(&turnMemory, "turn-memory", "memory of one turn, all its processes together (cgroup; default --call-memory)")
	fs.Var(&ownerMemory, "owner-memory", "memory of one owner across turns (cgroup; default twice --turn-memory)")
	fs.Var(&mounts, "mount", "a read-only data directory calls may read (repeatable)")
	fs.Var(&turnDisk, "turn-disk", "disk limit of one turn (default scratch size / 8)")
	fs.Var(&userDisk, "user-disk", "disk limit of one user across turns (default scratch size / 4, so two users at their limits leave half)")
	fs.Var(&scratchSize, "scratch-size", "size of the scratch filesystem (default: measured)")
	fs.Var(&memLimit, "memory-limit", "soft limit of sandboxd's own memory, for the Go runtime (GOMEMLIMIT wins when set)")
	fs.Var(&outBudget, "output-budget", "call output sandboxd holds at once, all calls together")
	fs.Var(&callMemory, "call-memory", "address-space limit of each process of a call, the agent's memory (default: none)")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits, as with the global flag set
	if *agent == "" || *pkg == "" || *scratch == "" || *toolsJSON == "" {
		fs.Usage()
		return errors.New("--agent, --package, --tools and --scratch are required")
	}
	zl, _, err := telemetry.NewLogger(*logLevel)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	zl = zl.With(zap.String(telemetry.FieldAgent, *agent))
	defer func() { _ = zl.Sync() }()
	// Off unless the OTEL_* variables ask for it; the confined calls never
	// see those variables (their environment is built, not inherited).
	tr, err := telemetry.StartTracing(context.Background(), "sandboxd", zl)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer tr.Stop(zl)
	logf := zl.Sugar().Infof
	if os.Getenv("GOMEMLIMIT") == "" && memLimit > 0 {
		// Output floods make garbage fast: collect before it piles up.
		debug.SetMemoryLimit(int64(memLimit))
	}

	tier, err := confine.ParseTier(*tierFlag)
	if err != nil {
		return fmt.Errorf("--tier: %w", err)
	}
	abi, err := kernel.CheckTier(tier)
	if err != nil {
		return fmt.Errorf("refusing to start, calls cannot be confined: %w", err)
	}
	filter, err := buildFilter()
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	token, err := readToken()
	if err != nil {
		return err
	}
	pkgDir, err := canonical(*pkg)
	if err != nil {
		return fmt.Errorf("--package: %w", err)
	}
	toolSet, err := toolset.Parse(*toolsJSON)
	if err != nil {
		return fmt.Errorf("--tools: %w", err)
	}
	var mountDirs []string
	for _, m := range mounts {
		d, err := canonical(m)
		if err != nil {
			return fmt.Errorf("--mount: %w", err)
		}
		mountDirs = append(mountDirs, d)
	}
	uids, err := workspace.ParseUIDRange(*uidRange)
	if err != nil {
		return fmt.Errorf("--uid-range: %w", err)
	}
	if err := canSwitchUsers(); err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	// Before anything runs as a uid of the range: it must be ours alone.
	res, err := uidlock.Reserve(*uidLockDir, uids.First, uids.Count)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	defer res.Release()
	caps := turnCaps{turnProcs: *turnProcs, ownerProcs: *ownerProcs, turnMemory: int64(turnMemory),
		ownerMemory: int64(ownerMemory), callMemory: int64(callMemory)}
	cgTree, turnLim, ownerLim, err := openCgroups(*cgroupMode, treeName(*agent, *scratch), uids, caps, logf)
	if err != nil {
		return fmt.Errorf("refusing to start: %w", err)
	}
	if cgTree != nil {
		// On the way out (a refused start too) nothing of ours stays.
		defer func() { _ = cgTree.Kill(); _ = cgTree.Remove() }()
	} else if turnLim.Procs > 0 && uint64(turnLim.Procs) < *nproc {
		// No cgroup: the turn's cap is its uid's RLIMIT_NPROC, and the
		// owner's is checked with the disk (workspace.Config.OwnerCaps).
		*nproc = uint64(turnLim.Procs)
	}
	// Listen before the slow part (the workspaces, the confined self-test),
	// so a busy address is reported at once.
	ln, err := listenTCP("--listen", *listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	var httpLn net.Listener
	if *httpListen != "" {
		if httpLn, err = listenTCP("--http-listen", *httpListen); err != nil {
			return err
		}
		defer httpLn.Close()
	}
	if err := os.MkdirAll(*scratch, 0o711); err != nil {
		return fmt.Errorf("--scratch: %w", err)
	}
	size := int64(scratchSize)
	if size <= 0 {
		var st unix.Statfs_t
		if err := unix.Statfs(*scratch, &st); err != nil {
			return fmt.Errorf("measuring --scratch: %w", err)
		}
		size = int64(st.Blocks) * st.Bsize
	}
	if turnDisk <= 0 {
		turnDisk = sizeFlag(size / 8)
	}
	if userDisk <= 0 {
		userDisk = sizeFlag(size / 4)
	}
	wm, err := workspace.New(workspace.Config{Scratch: *scratch, TurnLimit: int64(turnDisk), UserLimit: int64(userDisk),
		TTL: *turnTTL, UIDs: uids, CallProcs: *callProcs, Cgroups: cgTree, TurnCaps: turnLim, OwnerCaps: ownerLim})
	if err != nil {
		return err
	}
	reg := telemetry.NewRegistry()
	var auditW *audit.Writer
	if *auditLog != "" {
		rlo, err := rotlog.OptionsFromEnv(os.Getenv)
		if err != nil {
			return err
		}
		if auditW, err = audit.Open(*auditLog, "sandboxd", version, rlo); err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer auditW.Close()
	}
	server.RegisterTier(reg, tier)
	srv, err := server.New(server.Config{
		Agent: *agent, Fingerprint: *fingerprint, Version: version, LandlockABI: abi, Tier: tier,
		PackageDir: pkgDir, Mounts: mountDirs, Tools: toolSet, Token: token, Filter: filter,
		Workspaces: wm, DefaultTimeout: *callTimeout, NProc: *nproc, CallMemory: uint64(callMemory),
		OutputBudget: int64(outBudget), Logf: logf, Logger: zl, Metrics: server.NewMetrics(reg, wm), Audit: auditW,
	})
	if err != nil {
		return err
	}
	if f := os.Getenv("VESSEL_SANDBOX_TOKEN_FILE"); f != "" {
		if real, err := filepath.EvalSymlinks(f); err == nil {
			if tree, bad := srv.ReadableByCalls(real); bad {
				return fmt.Errorf("refusing to start: the token file %s lies in %s, which tool calls can read; "+
					"keep it elsewhere (Compose mounts it under /run/secrets)", real, tree)
			}
		}
	}
	if *auditLog != "" {
		if real, err := filepath.EvalSymlinks(filepath.Dir(*auditLog)); err == nil {
			if tree, bad := srv.ReadableByCalls(real); bad {
				return fmt.Errorf("refusing to start: the audit log %s lies in %s, which tool calls can read; keep it elsewhere", *auditLog, tree)
			}
		}
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
	ms, err := telemetry.ServeMetrics(*metricsAddr, reg, zl)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	defer ms.Close()
	zl.Info("confined calls, listening", zap.String("tier", tier), zap.Int("landlock_abi", abi), zap.String("addr", ln.Addr().String()),
		zap.String("http_addr", addrOf(httpLn)),
		zap.Int64("turn_disk", int64(turnDisk)), zap.Int64("user_disk", int64(userDisk)))
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
