package workspace

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// openFiles adds what the turn's processes hold open under its workspace
// but the walk did not count: files deleted while open (they use disk until
// closed) and files in places the walk could not see. sandboxd may read
// /proc of its own children even though calls cannot.
func openFiles(t *Turn, seen map[fileID]bool) int64 {
	groups := map[int]bool{}
	for _, g := range t.pgids() {
		groups[g] = true
	}
	if len(groups) == 0 {
		return 0
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || !groups[pgidOf(pid)] {
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
			var st syscall.Stat_t
			if err := syscall.Stat(link, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				continue
			}
			id := fileID{uint64(st.Dev), st.Ino}
			if seen[id] {
				continue
			}
			seen[id] = true
			total += st.Size + PerEntry
		}
	}
	return total
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
