package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// open makes a tree for the test, failing under CI when the kernel or
// the layout offers none.
func open(t *testing.T) *Tree {
	t.Helper()
	testenv.Require(t, os.Geteuid() == 0, "cgroup tests need root")
	tr, err := Open("astralvessel-test-" + strconv.Itoa(os.Getpid()))
	if errors.Is(err, ErrUnavailable) {
		testenv.Require(t, false, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = tr.Kill()
		if err := tr.Remove(); err != nil {
			t.Error(err)
		}
	})
	return tr
}

// join starts a shell in g (by writing its pid, as the launcher writes 0)
// that runs script.
func join(t *testing.T, g *Group, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "read x; "+script)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	files, err := g.OpenJoin()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := f.WriteString(strconv.Itoa(cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	_, _ = in.Write([]byte("go\n"))
	return cmd
}

// Killing one turn's group ends its processes, children included, and
// leaves a sibling turn's running.
func TestKillIsPerGroup(t *testing.T) {
	tr := open(t)
	owner, err := tr.Group("o-a", Limits{Procs: 64})
	if err != nil {
		t.Fatal(err)
	}
	a, err := owner.Child("t-1", Limits{Procs: 32})
	if err != nil {
		t.Fatal(err)
	}
	b, err := owner.Child("t-2", Limits{Procs: 32})
	if err != nil {
		t.Fatal(err)
	}
	join(t, a, "(sleep 300 &); sleep 300")
	cb := join(t, b, "sleep 300")
	waitProcs(t, a, 3)
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if n := len(a.Procs()); n != 0 {
		t.Fatalf("%d processes left in the killed group", n)
	}
	if err := a.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(cb.Process.Pid, 0); err != nil {
		t.Fatalf("the sibling turn's process died: %v", err)
	}
	if n := len(b.Procs()); n != 2 {
		t.Fatalf("sibling group holds %d processes, want its shell and sleep", n)
	}
}

// A group's pids.max stops forks beyond it.
func TestProcessCap(t *testing.T) {
	tr := open(t)
	g, err := tr.Group("o-b", Limits{Procs: 4})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	join(t, g, "for i in 1 2 3 4 5 6 7 8; do sleep 300 & done 2>"+out+"; sleep 300")
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(out)
		if strings.Contains(string(b), "fork") || strings.Contains(string(b), "Resource temporarily unavailable") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no fork failure reported at the cap: %q", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(g.Procs()); n > 4 {
		t.Fatalf("%d processes in a group capped at 4", n)
	}
	if !g.AtProcCap() {
		t.Fatal("AtProcCap false at the cap")
	}
}

func waitProcs(t *testing.T, g *Group, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(g.Procs()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("group holds %d processes, want %d", len(g.Procs()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
