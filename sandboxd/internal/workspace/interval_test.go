package workspace

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDefaultIntervalIsHalfASecond pins the promise that disk usage is
// measured twice a second when sandboxd sets no interval (it sets none).
func TestDefaultIntervalIsHalfASecond(t *testing.T) {
	if DefaultInterval != 500*time.Millisecond {
		t.Fatalf("DefaultInterval = %v, docs/sandbox.md promises twice a second", DefaultInterval)
	}
	m, err := New(Config{Scratch: t.TempDir(), TurnLimit: 1, UserLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.cfg.Interval != 500*time.Millisecond {
		t.Fatalf("configured interval %v, want 500ms", m.cfg.Interval)
	}
	// Run must start its clock with that interval.
	clock := newFakeClock(m)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx, t.Logf); close(done) }()
	if got := <-clock.started; got != 500*time.Millisecond {
		t.Fatalf("Run ticks every %v, want 500ms", got)
	}
	cancel()
	<-done
	if !clock.stopped() {
		t.Fatal("Run left its ticker running")
	}
}

// TestOneTickOverLimitKillsAndEmpties drives Run with a fake clock: a
// single tick that finds a turn over its limit stops the turn's running
// call with disk_limit and empties the workspace.
func TestOneTickOverLimitKillsAndEmpties(t *testing.T) {
	m, err := New(Config{Scratch: t.TempDir(), TurnLimit: 10_000, UserLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock(m)
	turn, err := m.Acquire("t1", "u")
	if err != nil {
		t.Fatal(err)
	}
	killed := make(chan string, 4)
	call, err := turn.Begin(func(reason string) { killed <- reason })
	if err != nil {
		t.Fatal(err)
	}
	defer turn.Done(call)
	if err := os.WriteFile(filepath.Join(turn.Dir, "under"), make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx, t.Logf); close(done) }()
	defer func() { cancel(); <-done }()
	<-clock.started

	// Under the limit: a tick measures and keeps everything. The tick
	// channel is unbuffered, so the second send returns only once Run
	// has finished the check of the first.
	clock.tick()
	clock.tick()
	if len(killed) != 0 {
		t.Fatalf("a turn under its limit was stopped: %v", <-killed)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(turn.Dir, "under"), &st); err != nil {
		t.Fatal(err)
	}
	if u, want := turn.Usage(), st.Blocks*512+PerEntry; u != want {
		t.Fatalf("usage after one tick %d, want %d", u, want)
	}

	if err := os.WriteFile(filepath.Join(turn.Dir, "over"), make([]byte, 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	clock.tick() // one tick over the limit
	clock.tick() // returns once the first has been handled
	if len(killed) != 1 {
		t.Fatalf("%d kills after one tick over the limit, want 1", len(killed))
	}
	if r := <-killed; r != ReasonDiskLimit {
		t.Fatalf("stopped with %q, want %q", r, ReasonDiskLimit)
	}
	entries, err := os.ReadDir(turn.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("workspace not emptied: %d entries left", len(entries))
	}
	if turn.Usage() != 0 {
		t.Fatalf("usage %d after emptying", turn.Usage())
	}
	if _, ok := m.Lookup("t1"); !ok {
		t.Fatal("the turn itself must survive; only its contents go")
	}
}

// fakeClock replaces Run's ticker with one the test drives.
type fakeClock struct {
	started chan time.Duration
	c       chan time.Time
	stop    chan struct{}
}

func newFakeClock(m *Manager) *fakeClock {
	f := &fakeClock{started: make(chan time.Duration, 1), c: make(chan time.Time), stop: make(chan struct{})}
	m.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		f.started <- d
		return f.c, func() { close(f.stop) }
	}
	return f
}

func (f *fakeClock) tick() { f.c <- time.Now() }

func (f *fakeClock) stopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}
