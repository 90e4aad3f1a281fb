package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/stress/internal/load"
)

// TestLocalStackShortLoadTwoAtOnce runs two short loads on one host at once, each
// with a stack of its own project (issue 31: two deployments on one host):
// both stacks come up first, then both loads start together, every shell
// command held a second so calls of the two overlap. Each run must end with
// 0 failed turns and 0 cross-kills (a shell command ended by a signal its
// turn did not ask for: another sandbox's sweep reaching a uid not its
// own). Needs the local stack (VESSEL_E2E_LOCAL=1) and root, as sandboxd does.
func TestLocalStackShortLoadTwoAtOnce(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the load test against the local stack")
	}
	bin := testBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := os.MkdirTemp("", "stress-two-") // not t.TempDir(): 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(out) })
	reps, err := RunTwice(ctx, Options{
		Users: 3, Turns: 2, History: 100, Pieces: 50, Cancels: 1, Replicas: 1,
		Out: out, BinDir: bin, TurnTimeout: 2 * time.Minute, ToolHold: time.Second,
		Command: "go test -run " + t.Name(), Log: testLog{t},
	})
	if err != nil {
		t.Error(err)
	}
	for i, rep := range reps {
		if rep == nil {
			continue
		}
		t.Logf("run %d (project %s):\n%s", i, rep.Project, rep.Markdown())
		if rep.ToolKills > 0 {
			t.Errorf("run %d: %d shell commands were killed by a signal their turn did not ask for", i, rep.ToolKills)
		}
		if rep.TurnsFailed > 0 || rep.TurnsOK != 6 || rep.CancelledOK != 1 {
			t.Errorf("run %d: turns ok %d (cancelled %d), failed %d; want 6 (1), 0", i, rep.TurnsOK, rep.CancelledOK, rep.TurnsFailed)
		}
		if rep.ScratchEntries > 0 {
			t.Errorf("run %d: %d entries left in the sandbox scratch", i, rep.ScratchEntries)
		}
	}
}

func TestProblemsNameEveryFailure(t *testing.T) {
	if p := problems(&load.Report{TurnsOK: 150}); len(p) != 0 {
		t.Errorf("a clean run: %q", p)
	}
	p := problems(&load.Report{TurnsFailed: 2, ScratchEntries: 3, ToolKills: 1})
	if len(p) != 3 || !strings.Contains(p[2], "1 shell commands ended by a signal") {
		t.Errorf("problems = %q", p)
	}
}

func TestPrefixedMarksEveryLine(t *testing.T) {
	var b strings.Builder
	w := prefixed{w: &b, prefix: "[a] "}
	if n, err := w.Write([]byte("one\ntwo\n")); n != 8 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	_, _ = w.Write([]byte("three"))
	if got, want := b.String(), "[a] one\n[a] two\n[a] three"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// RunTwice's folder holds both runs' agent packages and scratch, which the
// calls' uids must pass through: a 0700 temporary folder (as os.MkdirTemp
// makes) is opened up, as run does for its own.
func TestRunTwiceOpensItsFolder(t *testing.T) {
	out := filepath.Join(t.TempDir(), "two")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	reps, err := RunTwice(context.Background(), Options{Out: out, Scratch: "neither"})
	if err == nil || reps[0] != nil || reps[1] != nil || !strings.Contains(err.Error(), "run a") || !strings.Contains(err.Error(), "run b") {
		t.Fatalf("RunTwice with a bad --scratch = %v, %v", reps, err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", fi.Mode().Perm())
	}
}
