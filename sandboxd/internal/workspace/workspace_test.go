package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func FuzzValidTurnID(f *testing.F) {
	for _, s := range []string{"t1", ".", "..", "a/b", "x:y-z.1", strings.Repeat("a", 129), "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !ValidTurnID(id) {
			return
		}
		dir := filepath.Join("/scratch", "t-"+id)
		if filepath.Dir(dir) != "/scratch" || !filepath.IsLocal("t-"+id) {
			t.Fatalf("turn id %q leaves the scratch directory", id)
		}
	})
}

func TestUsageCountsEntries(t *testing.T) {
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "a"), make([]byte, 5000), 0o644)
	_ = os.Mkdir(filepath.Join(dir, "d"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "d", "b"), nil, 0o644)
	_ = os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "d", "hard"))
	// Allocated blocks, not sizes: each inode's once, each name PerEntry.
	blocks := func(p string) int64 {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, p), &st); err != nil {
			t.Fatal(err)
		}
		return st.Blocks * 512
	}
	want := blocks("a") + blocks("d") + blocks("d/b") + 4*PerEntry
	u := dirUsage(dir, 0)
	if u.total != want {
		t.Fatalf("usage %d, want %d", u.total, want)
	}
	// Three inodes: a (also named d/hard), d, d/b.
	if len(u.seen) != 3 {
		t.Fatalf("%d inodes counted, want 3", len(u.seen))
	}
}

func TestLimitsEmptyTurns(t *testing.T) {
	m, err := New(Config{Scratch: t.TempDir(), TurnLimit: 10_000, UserLimit: 15_000})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.Acquire("a", "u1")
	b, _ := m.Acquire("b", "u1")
	c, _ := m.Acquire("c", "u2")
	if _, err := m.Acquire("a", "u2"); err != ErrOwner {
		t.Fatalf("owner check: %v", err)
	}
	_ = os.WriteFile(filepath.Join(a.Dir, "f"), make([]byte, 8000), 0o644)
	_ = os.WriteFile(filepath.Join(c.Dir, "f"), make([]byte, 12000), 0o644)
	var killed []string
	call, _ := b.Begin(func(r string) { killed = append(killed, r) })
	_ = os.WriteFile(filepath.Join(b.Dir, "f"), make([]byte, 8000), 0o644)
	m.Check(t.Logf)
	// c is over the turn limit; u1's total is over the user limit, and b
	// (with a running call) is the most recent.
	for _, tc := range []struct {
		t    *Turn
		left int
	}{{a, 1}, {b, 0}, {c, 0}} {
		entries, _ := os.ReadDir(tc.t.Dir)
		if len(entries) != tc.left {
			t.Errorf("turn %s has %d entries, want %d", tc.t.ID, len(entries), tc.left)
		}
	}
	if len(killed) != 1 || killed[0] != ReasonDiskLimit {
		t.Fatalf("killed %v", killed)
	}
	b.Done(call)
	if ok, err := m.End("a"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := os.Stat(a.Dir); !os.IsNotExist(err) {
		t.Fatal("workspace left after End")
	}
}

func TestSweepIdle(t *testing.T) {
	m, err := New(Config{Scratch: t.TempDir(), TurnLimit: 1 << 20, UserLimit: 1 << 20, TTL: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.Acquire("a", "u")
	m.Check(t.Logf)
	if m.Count() != 0 {
		t.Fatal("idle turn kept")
	}
	if _, err := os.Stat(a.Dir); !os.IsNotExist(err) {
		t.Fatal("idle workspace kept")
	}
}

// A range of one uid serves one live turn at a time; the uid comes back
// when the turn ends, and a failed start does not lose it.
func TestUIDsAreHeldPerTurn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hand workspaces to other uids")
	}
	scratch := t.TempDir()
	m, err := New(Config{Scratch: scratch, TurnLimit: 1 << 20, UserLimit: 1 << 20, UIDs: UIDRange{First: 520000, Count: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Acquire("a", "u")
	if err != nil || a.UID != 520000 {
		t.Fatalf("first turn: uid %d, %v", a.UID, err)
	}
	if _, err := m.Acquire("b", "u"); err == nil || !strings.Contains(err.Error(), "held by live turns") {
		t.Fatalf("second turn with no uid left: %v", err)
	}
	if _, err := m.End("a"); err != nil {
		t.Fatal(err)
	}
	// A start that fails after taking the uid gives it back: here the
	// scratch root has gone.
	if err := os.Rename(scratch, scratch+".gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire("c", "u"); err == nil {
		t.Fatal("a turn started without a scratch root")
	}
	if err := os.Rename(scratch+".gone", scratch); err != nil {
		t.Fatal(err)
	}
	b, err := m.Acquire("b", "u")
	if err != nil || b.UID != 520000 {
		t.Fatalf("the uid did not come back: %d, %v", b.UID, err)
	}
}

// TestListReportsInodes: each check counts the inodes a turn's workspace
// holds, and List reports them (sandboxd_workspace_inodes).
func TestListReportsInodes(t *testing.T) {
	m, err := New(Config{Scratch: t.TempDir(), TurnLimit: 1 << 30, UserLimit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Acquire("a", "u")
	if err != nil {
		t.Fatal(err)
	}
	m.Check(t.Logf)
	before := m.List()[0].Inodes
	if err := os.Mkdir(filepath.Join(a.Dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"x", "y", "d/z"} {
		if err := os.WriteFile(filepath.Join(a.Dir, n), []byte("1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(a.Dir, "x"), filepath.Join(a.Dir, "d", "x2")); err != nil {
		t.Fatal(err)
	}
	m.Check(t.Logf)
	if got := m.List()[0].Inodes - before; got != 4 {
		t.Fatalf("%d new inodes counted, want 4 (d, x, y, d/z; d/x2 is x)", got)
	}
}
