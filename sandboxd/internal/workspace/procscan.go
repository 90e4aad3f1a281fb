package workspace

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openFiles adds, per turn, what the turn's processes hold open under its
// workspace but the walk did not count (seen): files deleted while open
// (they use disk until closed) and files in places the walk could not
// see. One pass over /proc serves every turn; sandboxd may read /proc of
// its own children even though calls cannot.
// It also counts the processes of each call's group.
func openFiles(turns []*Turn, seen map[*Turn]map[fileID]bool) (map[*Turn]int64, map[int]int) {
	byGroup := map[int]*Turn{}
	for _, t := range turns {
		for _, g := range t.pgids() {
			byGroup[g] = t
		}
	}
	out := map[*Turn]int64{}
	counts := map[int]int{}
	if len(byGroup) == 0 {
		return out, counts
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out, counts
	}
	// The descriptors of another user's process are readable only with
	// that user's file-system identity (or CAP_SYS_PTRACE, which the
	// sandbox container does not have): a goroutine of its own, locked to
	// its thread, takes the turn's. Should the thread's identity not come
	// back, the goroutine ends still locked and the runtime drops the thread
	// (harmless to calls: none is forked on it, see confine/spawner.go).
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if onScanThread != nil {
			onScanThread()
		}
		fsuid := asFSUser{}
		defer fsuid.restore()
		scanProcs(procs, byGroup, seen, out, counts, &fsuid)
	}()
	<-done
	return out, counts
}

// scanProcs is openFiles' pass over /proc, on the locked thread.
func scanProcs(procs []os.DirEntry, byGroup map[int]*Turn, seen map[*Turn]map[fileID]bool, out map[*Turn]int64,
	counts map[int]int, fsuid *asFSUser) {
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		g := pgidOf(pid)
		t := byGroup[g]
		if t == nil {
			continue
		}
		counts[g]++
		if !fsuid.become(t.UID) {
			continue
		}
		fdDir := "/proc/" + p.Name() + "/fd"
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link := fdDir + "/" + fd.Name()
			target, err := os.Readlink(link)
			if err != nil || !strings.HasPrefix(target, t.Dir+"/") {
				continue
			}
			var st unix.Stat_t
			if err := unix.Stat(link, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			id := fileID{st.Dev, st.Ino}
			if seen[t] == nil {
				seen[t] = map[fileID]bool{}
			}
			if seen[t][id] {
				continue
			}
			seen[t][id] = true
			out[t] += cost(&st)
		}
	}
}

// pgidOf reads the process group from /proc/<pid>/stat; 0 when unknown.
func pgidOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may contain spaces and parentheses: fields after
	// the last ')' are state, ppid, pgrp.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(f[2])
	return g
}

// Seams for tests: how restore gives the thread back sandboxd's ids, and
// a hook run first on the scan's locked thread.
var (
	restoreIDs = func() {
		_ = unix.Setfsuid(os.Geteuid())
		_ = unix.Setfsgid(os.Getegid())
	}
	onScanThread func()
)

// asFSUser switches the locked thread's file-system uid and gid (setfsuid
// and setfsgid, which need CAP_SETUID and CAP_SETGID and change nothing
// else; the kernel compares both with the target's ids before it shows a
// process's descriptors) and restores them once done.
type asFSUser struct {
	uid     int
	changed bool
	// gVisor has no setfsuid or setfsgid (ENOSYS): nothing can change, so
	// the thread needs no restoring and is never dropped (dropping it
	// would cost a new thread at every scan).
	unsupported bool
}

// become takes the identity of a turn, whose gid equals its uid (-1: keep
// sandboxd's); false when it cannot.
func (a *asFSUser) become(uid int) bool {
	if uid < 0 || (a.changed && a.uid == uid) {
		return true
	}
	if a.unsupported {
		return false
	}
	if _, err := unix.SetfsuidRetUid(-1); errors.Is(err, unix.ENOSYS) {
		a.unsupported = true
		return false
	}
	a.changed = true
	_ = unix.Setfsgid(uid)
	_ = unix.Setfsuid(uid)
	// setfs[ug]id(-1) changes nothing and reports the current value.
	gid, _ := unix.SetfsgidRetGid(-1)
	cur, _ := unix.SetfsuidRetUid(-1)
	if cur != uid || gid != uid {
		a.uid = -1
		return false
	}
	a.uid = uid
	return true
}

// restore gives the thread back sandboxd's identity and unlocks it; a
// thread whose identity cannot be restored stays locked, so the runtime
// drops it when its goroutine ends.
func (a *asFSUser) restore() {
	if a.changed {
		restoreIDs()
		gid, _ := unix.SetfsgidRetGid(-1)
		if uid, _ := unix.SetfsuidRetUid(-1); uid != os.Geteuid() || gid != os.Getegid() {
			return
		}
	}
	runtime.UnlockOSThread()
}
