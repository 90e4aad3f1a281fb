package confine

import (
	"context"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Launchers in flight are waited for by their Process; the reaper must
// not take their exit status. startMu makes "started and recorded" atomic
// for the reaper.
var (
	reaping atomic.Bool
	startMu sync.Mutex
	ownMu   sync.Mutex
	own     = map[int]bool{}
)

// EnableReaper makes starts safe for the reaper; main calls it before the
// first call starts.
func EnableReaper() { reaping.Store(true) }

func track(pid int) {
	ownMu.Lock()
	own[pid] = true
	ownMu.Unlock()
}

func untrack(pid int) {
	ownMu.Lock()
	delete(own, pid)
	ownMu.Unlock()
}

func tracked(pid int) bool {
	ownMu.Lock()
	defer ownMu.Unlock()
	return own[pid]
}

// Reap collects orphans that were reparented to this process. It is
// needed when sandboxd is PID 1 of its container: processes of a killed
// call group are re-parented to it and would stay zombies, using up the
// container's pid limit. It runs until ctx ends.
// Call EnableReaper before serving, then run Reap.
func Reap(ctx context.Context) {
	EnableReaper()
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, syscall.SIGCHLD)
	defer signal.Stop(sig)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
		case <-tick.C:
		}
		reapOrphans()
	}
}

func reapOrphans() {
	startMu.Lock()
	defer startMu.Unlock()
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || tracked(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] != "Z" || f[1] != strconv.Itoa(self) {
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}
