package confine

import (
	"runtime"
	"sync"
)

// Calls are forked only on spawner threads: threads locked by goroutines
// that never unlock them and never return, so the threads live as long as
// sandboxd does.
//
// The invariant matters because a call's parent-death signal (SIGKILL,
// set in the child) is tied to the thread that forked it, not to the
// process: when that thread exits, the kernel kills the call. A Go thread
// exits when a goroutine ends while locked to it (runtime.LockOSThread),
// which code does on purpose with a thread whose state it could not undo:
// the disk monitor drops a thread whose file-system uid it could not
// restore. Had any goroutine forked a call on that thread earlier, the
// call would die with it. No goroutine that may end locked ever forks.
// (KillUser's sweeper needs no spawner thread: it sets no parent-death
// signal and has exited by the time its clone returns.)
var spawners struct {
	once sync.Once
	jobs chan func()
}

// onSpawnerThread runs f on a spawner thread and returns once it has run.
func onSpawnerThread(f func()) {
	spawners.once.Do(func() {
		spawners.jobs = make(chan func())
		// A fork blocks its thread until the child has exec'd
		// (CLONE_VFORK): one thread per CPU keeps starts in parallel.
		for range max(2, runtime.GOMAXPROCS(0)) {
			go spawnerLoop(spawners.jobs)
		}
	})
	done := make(chan struct{})
	spawners.jobs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// spawnerLoop runs jobs on its goroutine's thread, locked for good.
func spawnerLoop(jobs <-chan func()) {
	runtime.LockOSThread() // never unlocked, and the loop never ends
	for f := range jobs {
		f()
	}
}
