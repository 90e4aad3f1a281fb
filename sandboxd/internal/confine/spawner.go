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
//
// The pool is small and fixed, not one thread per CPU: each thread is a
// task for good and counts against the container's pids limit, which the
// calls share (with no CPU limit GOMAXPROCS is the host's CPU count, 64
// or more on a big node). A fork blocks its thread until the child has
// exec'd or failed (CLONE_VFORK), which takes well under a millisecond.
// As PID 1 of a container, sandboxd serialises starts anyway (startMu,
// for the reaper), so only one thread forks at a time; the second lets
// two starts overlap when sandboxd is not PID 1 (tests, a local run).
//
// A child that hangs before its exec keeps its spawner thread blocked
// for as long as it hangs. Under the reaper its start also holds startMu,
// so every later start waits behind it, as it did before spawner threads
// (the start held startMu through the fork then too); without the reaper
// later starts wait once both threads are held that way.
var spawners struct {
	once sync.Once
	jobs chan func()
}

// spawnerThreads is the size of the pool.
const spawnerThreads = 2

// onSpawnerThread runs f on a spawner thread and returns once it has run.
func onSpawnerThread(f func()) {
	spawners.once.Do(func() {
		spawners.jobs = make(chan func())
		for range spawnerThreads {
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
