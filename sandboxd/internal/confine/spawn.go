package confine

/*
#include <stdlib.h>
#include "spawn.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// workspaceAccess is what a call may do in its workspace: everything but
// making sockets, FIFOs and device nodes.
const workspaceAccess = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
	ll.AccessFSReadDir | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir | ll.AccessFSMakeReg |
	ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate)

// deviceAccess is what a call may do with the granted device files.
const deviceAccess = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate)

// Names of the launcher's confinement steps, as StepError reports them.
const (
	StepNoNewPrivs = "setting no_new_privs"
	StepLandlock   = "enforcing Landlock"
	StepSeccomp    = "installing the seccomp filter"
)

var stepNames = map[int32]string{
	C.SBX_STEP_SIGNALS: "resetting signals", C.SBX_STEP_SETPGID: "making the process group",
	C.SBX_STEP_STDIO: "setting up stdio", C.SBX_STEP_CHDIR: "entering the workspace",
	C.SBX_STEP_RLIMIT: "setting resource limits", C.SBX_STEP_USER: "switching user",
	C.SBX_STEP_PDEATHSIG: "setting the parent-death signal", C.SBX_STEP_NNP: StepNoNewPrivs,
	C.SBX_STEP_LANDLOCK: StepLandlock, C.SBX_STEP_SECCOMP: StepSeccomp,
	C.SBX_STEP_CLOSE: "closing descriptors", C.SBX_STEP_EXEC: "exec",
	C.SBX_STEP_CGROUP: StepCgroup,
}

// StepCgroup names the join of the turn's cgroup; EAGAIN there means the
// turn's or its owner's process cap is reached.
const StepCgroup = "joining the turn's cgroup"

// StepError is a step of the launcher that failed in the child before it
// could exec the program, so callers can say what the failure means.
type StepError struct {
	Step  string
	Errno unix.Errno
}

func (e *StepError) Error() string { return e.Step + ": " + e.Errno.Error() }

func (e *StepError) Unwrap() error { return e.Errno }

// ruleset builds the call's Landlock ruleset. The V6 config is exact: on
// an older kernel it fails instead of degrading.
// With s.Grants, the read-only trees and devices come from its held
// descriptors instead of s.ReadOnly and s.Devices.
func ruleset(s *Spec) (int, uint32, error) {
	if s.NoLandlock {
		return -1, 0, nil
	}
	rules := []landlock.Rule{landlock.PathAccess(workspaceAccess, s.ReadWrite...)}
	if s.Grants == nil {
		rules = append(rules, landlock.RODirs(s.ReadOnly...), landlock.PathAccess(deviceAccess, s.Devices...))
	}
	fd, flags, err := landlock.V6.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return -1, 0, fmt.Errorf("the Landlock ruleset is empty")
	}
	if s.Grants != nil {
		if err := s.Grants.addTo(fd); err != nil {
			unix.Close(fd)
			return -1, 0, fmt.Errorf("building the Landlock ruleset: %w", err)
		}
	}
	return fd, flags, nil
}

// Ruleset is a Landlock ruleset built once from a Spec's paths and used by
// many starts (the calls of one turn), which saves opening every granted
// path and adding its rule on each call. Each start enforces it through a
// duplicate descriptor, so Close never pulls it from under a start.
type Ruleset struct {
	mu    sync.Mutex
	fd    int // -1 once closed
	flags uint32
}

// NewRuleset builds the ruleset of s's ReadOnly, ReadWrite and Devices.
func NewRuleset(s *Spec) (*Ruleset, error) {
	fd, flags, err := ruleset(s)
	if err != nil {
		return nil, err
	}
	return &Ruleset{fd: fd, flags: flags}, nil
}

// dup returns a descriptor of the ruleset for one start; ok is false once
// it has been closed.
func (r *Ruleset) dup() (fd int, flags uint32, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return -1, 0, false
	}
	fd, err := unix.FcntlInt(uintptr(r.fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return -1, 0, false
	}
	return fd, r.flags, true
}

// Close releases the ruleset; later starts build their own.
func (r *Ruleset) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// cStrings copies strs into a NULL-terminated C array; free with freeStrings.
func cStrings(strs []string) **C.char {
	arr := (**C.char)(C.calloc(C.size_t(len(strs)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	view := unsafe.Slice(arr, len(strs)+1)
	for i, s := range strs {
		view[i] = C.CString(s)
	}
	return arr
}

func freeStrings(arr **C.char, n int) {
	for _, p := range unsafe.Slice(arr, n+1) {
		if p != nil {
			C.free(unsafe.Pointer(p))
		}
	}
	C.free(unsafe.Pointer(arr))
}

// spawn starts the confined program with stdin, stdout and stderr as its
// descriptors 0 to 2 and returns its pid, which is also its process group,
// and a pidfd of it (-1 if the kernel gave none).
func spawn(opts *Options, stdin, stdout, stderr int) (int, int, error) {
	s := &opts.Spec
	if s.Path == "" || len(s.Argv) == 0 || len(s.Filter) == 0 || len(s.Filter)%8 != 0 {
		return 0, -1, fmt.Errorf("spec needs a path, argv and a filter")
	}
	rfd, rflags, ok := -1, uint32(0), false
	if opts.Ruleset != nil {
		rfd, rflags, ok = opts.Ruleset.dup()
	}
	if !ok {
		var err error
		if rfd, rflags, err = ruleset(s); err != nil {
			return 0, -1, err
		}
	}
	if rfd >= 0 {
		defer unix.Close(rfd)
	}
	// The report pipe is read once the child has exec'd or exited, when
	// its write ends are closed or about to be (another start's child
	// holds a copy only until its own exec): a plain blocking descriptor,
	// with no poller registration.
	var report [2]int
	if err := unix.Pipe2(report[:], unix.O_CLOEXEC); err != nil {
		return 0, -1, fmt.Errorf("report pipe: %w", err)
	}
	reportR, reportW := report[0], report[1]
	defer unix.Close(reportR)
	reportOpen := true
	defer func() {
		if reportOpen {
			unix.Close(reportW)
		}
	}()

	cs := (*C.struct_sbx_spawn)(C.calloc(1, C.sizeof_struct_sbx_spawn))
	defer C.free(unsafe.Pointer(cs))
	cs.path = C.CString(s.Path)
	defer C.free(unsafe.Pointer(cs.path))
	cs.dir = C.CString(opts.Dir)
	defer C.free(unsafe.Pointer(cs.dir))
	cs.argv = cStrings(s.Argv)
	defer freeStrings(cs.argv, len(s.Argv))
	cs.envp = cStrings(s.Env)
	defer freeStrings(cs.envp, len(s.Env))
	cs.filter = (*C.struct_sock_filter)(C.CBytes(s.Filter))
	defer C.free(unsafe.Pointer(cs.filter))
	cs.filter_len = C.ushort(len(s.Filter) / 8)
	// The child's ends are blocking descriptors, as the program expects.
	cs.stdin_fd = C.int(stdin)
	cs.stdout_fd = C.int(stdout)
	cs.stderr_fd = C.int(stderr)
	cs.report_fd = C.int(reportW)
	for i, v := range []uint64{s.Limits.NoFile, s.Limits.FileSize, s.Limits.NProc, s.Limits.CPUSecs, 0, s.Limits.AddressSpace} {
		if v == 0 {
			v = uint64(C.SBX_UNSET)
		}
		cs.limits[i] = C.uint64_t(v)
	}
	cs.limits[4] = 0 // no core dumps
	if c := opts.Credential; c != nil {
		cs.set_user = 1
		cs.uid, cs.gid = C.uint32_t(c.Uid), C.uint32_t(c.Gid)
	}
	cs.cgroup_fds[0], cs.cgroup_fds[1] = -1, -1
	if len(opts.Cgroup) > len(cs.cgroup_fds) {
		return 0, -1, fmt.Errorf("at most %d cgroup files", len(cs.cgroup_fds))
	}
	for i, f := range opts.Cgroup {
		cs.cgroup_fds[i] = C.int(f.Fd())
	}
	if !s.NoLandlock {
		cs.landlock = 1
	}
	cs.ruleset_fd = C.int(rfd)
	cs.ruleset_flags = C.uint32_t(rflags)

	locked := reaping.Load()
	if locked {
		startMu.Lock()
	}
	// The fork happens on a spawner thread, which never exits: the call's
	// parent-death signal follows the thread that forked it (spawner.go).
	var pid int
	onSpawnerThread(func() { pid = int(C.sbx_spawn(cs)) })
	runtime.KeepAlive(opts.Cgroup)
	if pid > 0 {
		track(pid)
	}
	if locked {
		startMu.Unlock()
	}
	unix.Close(reportW)
	reportOpen = false
	if pid < 0 {
		return 0, -1, fmt.Errorf("spawning the call: %w", unix.Errno(-pid))
	}
	pidfd := int(cs.pidfd)
	// The child has exec'd (closing the report pipe) or failed and said why.
	var msg [8]byte
	if readFull(reportR, msg[:]) == len(msg) {
		step := int32(binary.NativeEndian.Uint32(msg[:4]))
		errno := unix.Errno(binary.NativeEndian.Uint32(msg[4:]))
		if pidfd >= 0 {
			unix.Close(pidfd)
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		untrack(pid)
		if step == C.SBX_STEP_EXEC {
			return 0, -1, fmt.Errorf("%s: %w", s.Path, errno)
		}
		return 0, -1, &StepError{Step: stepNames[step], Errno: errno}
	}
	return pid, pidfd, nil
}

// readFull reads fd until buf is full or the end (or an error); it
// returns how much it read.
func readFull(fd int, buf []byte) int {
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	return n
}

// KillUser sends SIGKILL to every process of uid, from a short-lived
// process that switches to uid first (kill(-1) reaches exactly the
// processes a user may signal). A turn's uid is its own, so this ends
// whatever the turn left, wherever it went, before the uid is handed to
// another turn. It needs CAP_SETUID and CAP_SETGID, and root's uid is
// refused.
func KillUser(uid, gid uint32) error {
	if uid == 0 || gid == 0 {
		return fmt.Errorf("refusing to sweep uid %d gid %d", uid, gid)
	}
	locked := reaping.Load()
	if locked {
		startMu.Lock()
	}
	pid := int(C.sbx_kill_user(C.uint32_t(uid), C.uint32_t(gid)))
	if pid > 0 {
		track(pid)
	}
	if locked {
		startMu.Unlock()
	}
	if pid < 0 {
		return fmt.Errorf("sweeping uid %d: %w", uid, unix.Errno(-pid))
	}
	var ws unix.WaitStatus
	var err error
	for {
		if _, err = unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	untrack(pid)
	if err != nil {
		return fmt.Errorf("waiting for the sweep of uid %d: %w", uid, err)
	}
	switch {
	case ws.Signaled():
		// The sweeper runs as uid: only a sweep of another sandboxd using
		// the same uid (or a process of that uid) can kill it.
		return fmt.Errorf("sweeping uid %d: the sweeper was killed by %s, so another process runs as this uid "+
			"(another sandboxd with an overlapping --uid-range?)", uid, unix.SignalName(ws.Signal()))
	case ws.ExitStatus() != 0:
		return fmt.Errorf("sweeping uid %d: could not switch to it (exit %d; CAP_SETUID and CAP_SETGID are needed)", uid, ws.ExitStatus())
	}
	return nil
}
