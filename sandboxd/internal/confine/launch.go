package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// LaunchArg is the argument that turns sandboxd into the launcher.
const LaunchArg = "__launch"

// specFD is where the launcher reads its Spec.
const specFD = 3

// Spec is everything the launcher needs to confine and exec one call.
type Spec struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	// ReadOnly are directory trees the call may read and execute.
	ReadOnly []string `json:"read_only"`
	// ReadWrite is the turn's workspace: the only tree it may change.
	ReadWrite []string `json:"read_write"`
	// Devices are device files it may read and write (/dev/null).
	Devices []string `json:"devices"`
	Limits  Limits   `json:"limits"`
	// Filter is the seccomp BPF program from BuildFilter.
	Filter []byte `json:"filter"`
}

// Limits are the call's resource limits.
type Limits struct {
	NoFile   uint64 `json:"nofile"`
	FileSize uint64 `json:"fsize"`
	NProc    uint64 `json:"nproc"`
	CPUSecs  uint64 `json:"cpu"`
}

// workspaceAccess is what a call may do in its workspace: everything but
// making sockets, FIFOs and device nodes.
const workspaceAccess = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSReadDir | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
	ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate)

const deviceAccess = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate)

// IsLauncher tells main whether this process was started as the launcher.
func IsLauncher(args []string) bool {
	return len(args) > 1 && args[1] == LaunchArg
}

// Launch runs in the launcher process: it reads the Spec, confines this
// thread and execs the call's program. It returns only on failure.
func Launch() error {
	// Landlock, no_new_privs and seccomp are set on this thread, which must
	// be the one that calls execve.
	runtime.LockOSThread()
	f := os.NewFile(specFD, "spec")
	if f == nil {
		return errors.New("no spec on fd 3")
	}
	var spec Spec
	err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&spec)
	f.Close()
	if err != nil {
		return fmt.Errorf("reading spec: %w", err)
	}
	if len(spec.Argv) == 0 {
		return errors.New("empty argv")
	}
	path, err := lookPath(spec.Argv[0], spec.Env)
	if err != nil {
		return err
	}
	if err := setLimits(spec.Limits); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if err := restrictLandlock(&spec); err != nil {
		return err
	}
	if err := installFilter(spec.Filter); err != nil {
		return err
	}
	err = syscall.Exec(path, spec.Argv, spec.Env)
	return fmt.Errorf("exec %s: %w", path, err)
}

func setLimits(l Limits) error {
	set := func(res int, v uint64, name string) error {
		if v == 0 {
			return nil
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setting %s limit to %d: %w", name, v, err)
		}
		return nil
	}
	if err := set(unix.RLIMIT_NOFILE, l.NoFile, "open files"); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_FSIZE, l.FileSize, "file size"); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_NPROC, l.NProc, "process"); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_CPU, l.CPUSecs, "CPU time"); err != nil {
		return err
	}
	return unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
}

// restrictLandlock enforces the call's Landlock domain on this thread. The
// V6 config is exact: on an older kernel it fails instead of degrading.
func restrictLandlock(spec *Spec) error {
	rules := []landlock.Rule{
		landlock.RODirs(spec.ReadOnly...),
		landlock.PathAccess(workspaceAccess, spec.ReadWrite...),
		landlock.PathAccess(deviceAccess, spec.Devices...),
	}
	fd, flags, err := landlock.V6.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock ruleset is empty")
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("enforcing Landlock: %w", err)
	}
	return nil
}

// installFilter loads the BPF program on this thread.
func installFilter(bpf []byte) error {
	const insnSize = 8
	if len(bpf) == 0 || len(bpf)%insnSize != 0 {
		return fmt.Errorf("seccomp program has a bad length %d", len(bpf))
	}
	prog := unix.SockFprog{
		Len:    uint16(len(bpf) / insnSize),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&bpf[0])),
	}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(bpf)
	if errno != 0 {
		return fmt.Errorf("installing seccomp filter: %w", errno)
	}
	return nil
}

// lookPath finds name on the call's own PATH, not the server's.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found on PATH %q", name, path)
}
