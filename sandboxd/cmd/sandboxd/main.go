// Command sandboxd is one agent's sandbox: it runs the agent's file, shell
// and command tools as confined processes and serves the sandbox API (gRPC
// and HTTP/JSON on one port).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/server"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
	"golang.org/x/sys/unix"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
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
	b, err := spec.ParseByteSize(v)
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
		scratch     = fs.String("scratch", "", "directory for turn workspaces, ideally a tmpfs (required)")
		listen      = fs.String("listen", "0.0.0.0:8600", "address for gRPC and HTTP/JSON")
		fingerprint = fs.String("fingerprint", "", "the profile fingerprint set at deploy time, reported on /status")
		runAs       = fs.String("run-as", "", "UID:GID that calls run as; default 65534:65534 when sandboxd runs as root, else sandboxd's own user")
		callTimeout = fs.Duration("call-timeout", 2*time.Minute, "default wall-clock limit of one call")
		turnTTL     = fs.Duration("turn-ttl", 30*time.Minute, "idle time after which a turn the vessel never ended is deleted")
		nproc       = fs.Uint64("max-procs", 512, "RLIMIT_NPROC of calls (counted per user across the sandbox)")
		callProcs   = fs.Int("call-procs", 128, "stop a call whose process group holds more processes (checked twice a second; 0: off)")
		mounts      multiFlag
		turnDisk    sizeFlag
		userDisk    sizeFlag
		scratchSize sizeFlag
	)
	fs.Var(&mounts, "mount", "a read-only data directory calls may read (repeatable)")
	fs.Var(&turnDisk, "turn-disk", "disk limit of one turn (default scratch size / 4)")
	fs.Var(&userDisk, "user-disk", "disk limit of one user across turns (default scratch size / 2)")
	fs.Var(&scratchSize, "scratch-size", "size of the scratch filesystem (default: measured)")
	_ = fs.Parse(args) // ExitOnError: a bad flag exits, as with the global flag set
	if *agent == "" || *pkg == "" || *scratch == "" {
		fs.Usage()
		return errors.New("--agent, --package and --scratch are required")
	}
	logger := log.New(os.Stderr, "sandboxd: ", log.LstdFlags|log.LUTC)

	abi, err := kernel.Check()
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
	manifest, err := spec.LoadPackage(pkgDir, os.LookupEnv)
	if err != nil {
		return fmt.Errorf("loading the agent package %s: %w", pkgDir, err)
	}
	var mountDirs []string
	for _, m := range mounts {
		d, err := canonical(m)
		if err != nil {
			return fmt.Errorf("--mount: %w", err)
		}
		mountDirs = append(mountDirs, d)
	}
	cred, err := credential(*runAs)
	if err != nil {
		return err
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
		turnDisk = sizeFlag(size / 4)
	}
	if userDisk <= 0 {
		userDisk = sizeFlag(size / 2)
	}
	uid, gid := -1, -1
	if cred != nil {
		uid, gid = int(cred.Uid), int(cred.Gid)
	}
	wm, err := workspace.New(workspace.Config{Scratch: *scratch, TurnLimit: int64(turnDisk), UserLimit: int64(userDisk),
		TTL: *turnTTL, UID: uid, GID: gid, CallProcs: *callProcs})
	if err != nil {
		return err
	}
	srv, err := server.New(server.Config{
		Agent: *agent, Fingerprint: *fingerprint, Version: version, LandlockABI: abi,
		PackageDir: pkgDir, Mounts: mountDirs, Manifest: manifest, Token: token, Filter: filter,
		Workspaces: wm, RunAs: cred, DefaultTimeout: *callTimeout, NProc: *nproc, Logf: logger.Printf,
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
	if err := srv.SelfTest(context.Background()); err != nil {
		return fmt.Errorf("refusing to start, a confined test call failed: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go wm.Run(ctx, logger.Printf)
	if os.Getpid() == 1 {
		// PID 1 of a container: orphans of killed calls come to us.
		confine.EnableReaper()
		go confine.Reap(ctx)
	}
	api, err := srv.NewAPI(ctx)
	if err != nil {
		return fmt.Errorf("setting up the API: %w", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		api.Close()
		return fmt.Errorf("--listen: %w", err)
	}
	logger.Printf("agent %s: confined calls (Landlock ABI %d, seccomp), listening on %s, turn disk %d, user disk %d",
		*agent, abi, ln.Addr(), turnDisk, userDisk)
	errc := make(chan error, 1)
	go func() { errc <- api.Serve(ln) }()
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

// credential picks the user calls run as: root's calls would be exempt
// from RLIMIT_NPROC and could raise their own limits, so root hands them
// to nobody.
func credential(flagVal string) (*syscall.Credential, error) {
	if flagVal == "" {
		if os.Geteuid() != 0 {
			return nil, nil
		}
		flagVal = "65534:65534"
	}
	u, g, ok := strings.Cut(flagVal, ":")
	uid, err1 := strconv.ParseUint(u, 10, 32)
	gid, err2 := strconv.ParseUint(g, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("--run-as %q: want UID:GID", flagVal)
	}
	if uid == 0 {
		return nil, errors.New("--run-as: calls may not run as root")
	}
	if os.Geteuid() != 0 && int(uid) != os.Geteuid() {
		return nil, errors.New("--run-as: only a root sandboxd can run calls as another user")
	}
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if !hasCapSetuid() {
		return nil, errors.New("sandboxd runs as root without CAP_SETUID, so calls would run as root, which " +
			"RLIMIT_NPROC does not limit: run the container as a non-root user (for example user: 65534:65534)")
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// hasCapSetuid reads CapEff from /proc/self/status.
func hasCapSetuid() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SETUID) != 0 && caps&(1<<unix.CAP_SETGID) != 0
		}
	}
	return false
}
