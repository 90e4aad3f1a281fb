package workspace

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// deletedOpen finds files that calls deleted but still hold open: they use
// disk until closed, so each turn is charged for those under its workspace.
// sandboxd may read /proc of its own children even though calls cannot.
func deletedOpen(turns []*Turn) map[*Turn]int64 {
	byPgid := map[int]*Turn{}
	for _, t := range turns {
		for _, g := range t.pgids() {
			byPgid[g] = t
		}
	}
	out := map[*Turn]int64{}
	if len(byPgid) == 0 {
		return out
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	type key struct{ dev, ino uint64 }
	seen := map[key]bool{}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		t := byPgid[pgidOf(pid)]
		if t == nil {
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
			if err != nil || !strings.HasSuffix(target, " (deleted)") || !strings.HasPrefix(target, t.Dir+"/") {
				continue
			}
			var st syscall.Stat_t
			if err := syscall.Stat(link, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				continue
			}
			k := key{st.Dev, st.Ino}
			if seen[k] {
				continue
			}
			seen[k] = true
			out[t] += st.Size + PerEntry
		}
	}
	return out
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
