package workspace

import (
	"os"
	"strconv"
	"testing"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
)

// BenchmarkTurnLifecycle is one turn made and ended with a uid of its own
// (docs/performance.md): on a tmpfs, as deployed, and on the disk of /tmp.
func BenchmarkTurnLifecycle(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: a uid per turn")
	}
	for _, dir := range []string{"/dev/shm", os.TempDir()} {
		b.Run(dir, func(b *testing.B) {
			scratch, err := os.MkdirTemp(dir, "sandboxd-bench-")
			if err != nil {
				b.Skip(err)
			}
			defer os.RemoveAll(scratch)
			m, err := New(Config{Scratch: scratch, TurnLimit: 1 << 20, UserLimit: 1 << 20, UIDs: UIDRange{First: 530000, Count: 64}})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				id := "t" + strconv.Itoa(i)
				if _, err := m.Acquire(id, "o"); err != nil {
					b.Fatal(err)
				}
				if _, err := m.End(id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKillUser is the end-of-turn sweep of a uid with no process.
func BenchmarkKillUser(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	for b.Loop() {
		if err := confine.KillUser(530100, 530100); err != nil {
			b.Fatal(err)
		}
	}
}
