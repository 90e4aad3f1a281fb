package workspace

import (
	"os"
	"strconv"
	"strings"
	"syscall"
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
			var st syscall.Stat_t
			if err := syscall.Stat(link, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				continue
			}
			id := fileID{uint64(st.Dev), st.Ino}
			if seen[t] == nil {
				seen[t] = map[fileID]bool{}
			}
			if seen[t][id] {
				continue
			}
			seen[t][id] = true
			out[t] += st.Size + PerEntry
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
