package workspace

import (
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
	// sandbox container does not have): this thread takes the turn's.
	runtime.LockOSThread()
	fsuid := asFSUser{}
	defer fsuid.restore()
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
	return out, counts
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

// asFSUser switches the locked thread's file-system uid (setfsuid, which
// needs CAP_SETUID and changes nothing else) and restores it once done.
type asFSUser struct {
	uid     int
	changed bool
}

// become takes uid's file-system identity (-1: keep sandboxd's); false
// when it cannot.
func (a *asFSUser) become(uid int) bool {
	if uid < 0 || (a.changed && a.uid == uid) {
		return true
	}
	_ = unix.Setfsuid(uid)
	a.changed = true
	// setfsuid(-1) changes nothing and reports the current value.
	cur, _ := unix.SetfsuidRetUid(-1)
	if cur != uid {
		return false
	}
	a.uid = uid
	return true
}

// restore gives the thread back sandboxd's identity; a thread that cannot
// be restored stays locked and dies with its goroutine.
func (a *asFSUser) restore() {
	if a.changed {
		_ = unix.Setfsuid(os.Geteuid())
		if cur, _ := unix.SetfsuidRetUid(-1); cur != os.Geteuid() {
			return
		}
	}
	runtime.UnlockOSThread()
}
