package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/stress/internal/stack"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// testBin returns the folder of binaries the e2e tests share:
// VESSEL_STRESS_BIN or VESSEL_BIN_DIR (make build's output), or else one
// build of this repository for the whole run. Binaries missing from the
// given folder are built into it.
func testBin(t *testing.T) string {
	t.Helper()
	for _, env := range []string{"VESSEL_STRESS_BIN", "VESSEL_BIN_DIR"} {
		if dir := os.Getenv(env); dir != "" {
			return dir
		}
	}
	binOnce.Do(func() {
		binPath, binErr = os.MkdirTemp("", "stress-bin-")
		if binErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		binErr = stack.Build(ctx, "", binPath, nil)
	})
	if binErr != nil {
		t.Fatalf("build the stack: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Clean(binPath))
	}
	os.Exit(code)
}

// TestLocalStackShortLoad is CI's load run: a few users against the real stack
// (scripted model, sandboxd, vessel as processes). It fails on any failed
// turn or any scratch left behind. It needs the whole stack, so it runs only
// with VESSEL_E2E_LOCAL=1. VESSEL_STRESS_BIN or VESSEL_BIN_DIR may name a
// folder of prebuilt binaries; otherwise they are built from this repository.
func TestLocalStackShortLoad(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the load test against the local stack")
	}
	shortLoad(t, 1, "")
}

// TestLocalStackShortLoadTwoReplicas is the same run on two vessel replicas sharing a
// PostgreSQL task store (VESSEL_TEST_POSTGRES, from deploy/postgres-test.sh);
// every cancel is sent to the replica not running the turn.
func TestLocalStackShortLoadTwoReplicas(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the load test against the local stack")
	}
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	shortLoad(t, 2, dsn)
}

func shortLoad(t *testing.T, replicas int, dsn string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Not t.TempDir(): its folders are 0700, and sandboxd runs tool calls as
	// an unprivileged user who must reach the agent package and scratch.
	out, err := os.MkdirTemp("", "stress-ci-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(out) })
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, Options{
		Users: 3, Turns: 2, History: 100, Pieces: 50, Cancels: 1, Replicas: replicas, Postgres: dsn,
		Out: out, BinDir: testBin(t), TurnTimeout: 2 * time.Minute,
		Command: "go test -run " + t.Name(), Log: testLog{t},
		// Set by TestLocalStackShortLoadLoopbackOnly's inner run: any lookup fails it.
		DNSTrap: os.Getenv("VESSEL_STRESS_DNS_TRAP"),
	})
	if rep != nil {
		t.Log("\n" + rep.Markdown())
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.TurnsFailed > 0 {
		t.Errorf("%d of %d turns failed", rep.TurnsFailed, rep.TurnsTotal)
	}
	if rep.TurnsOK != 6 || rep.CancelledOK != 1 {
		t.Errorf("turns ok %d (cancelled %d), want 6 (1)", rep.TurnsOK, rep.CancelledOK)
	}
	if rep.ScratchEntries > 0 {
		t.Errorf("%d entries (%d bytes) left in the sandbox scratch", rep.ScratchEntries, rep.ScratchBytes)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(string(p))
	return len(p), nil
}

func TestCommandLineHidesPasswords(t *testing.T) {
	got := commandLine([]string{"stress", "--postgres", "postgres://u:secret@127.0.0.1:5432/db?sslmode=disable", "--out", "a b"})
	want := `stress --postgres postgres://u:***@127.0.0.1:5432/db?sslmode=disable --out "a b"`
	if got != want {
		t.Fatalf("commandLine = %s, want %s", got, want)
	}
}
