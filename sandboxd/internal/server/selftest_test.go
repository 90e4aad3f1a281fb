package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/server"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
)

// selfTestServer builds a server (not listening) around filter, with a
// package and scratch the call user can reach.
func selfTestServer(t *testing.T, filter []byte) *server.Server {
	t.Helper()
	abi := requireKernel(t)
	base, err := os.MkdirTemp("", "sandboxd-selftest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	_ = os.Chmod(base, 0o755)
	pkg := filepath.Join(base, "pkg")
	if err := os.Mkdir(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	wm, err := workspace.New(workspace.Config{Scratch: filepath.Join(base, "scratch"), TurnLimit: 1 << 20,
		UserLimit: 1 << 20, UIDs: testUIDs()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Agent: "test", LandlockABI: abi, PackageDir: pkg, Token: testToken,
		Filter: filter, Workspaces: wm, DefaultTimeout: 20 * time.Second, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestSelfTestFailsWithoutConfinement: when the launcher cannot confine
// the test call, SelfTest fails (so sandboxd refuses to start) and says
// what is missing and how to fix it. The seccomp failure is real: the
// kernel refuses a filter it cannot load at the very step that installs
// it. Failures the host cannot produce on demand (a container profile
// blocking the syscalls, Landlock ABI below 6) are covered with fake
// kernel answers in cmd/sandboxd's TestStartRefusesWithoutConfinement.
func TestSelfTestFailsWithoutConfinement(t *testing.T) {
	t.Run("control: the real filter passes", func(t *testing.T) {
		filter, err := confine.BuildFilter()
		if err != nil {
			t.Fatal(err)
		}
		if err := selfTestServer(t, filter).SelfTest(context.Background()); err != nil {
			t.Fatalf("self-test with the real filter: %v", err)
		}
	})
	t.Run("seccomp filter install fails", func(t *testing.T) {
		// One instruction with an opcode classic BPF does not have: the
		// kernel's filter check refuses it with EINVAL.
		bad := []byte{0xff, 0xff, 0, 0, 0, 0, 0, 0}
		err := selfTestServer(t, bad).SelfTest(context.Background())
		if err == nil {
			t.Fatal("self-test passed although the seccomp filter could not be installed")
		}
		for _, want := range []string{
			"calls cannot be confined", // what it means
			confine.StepSeccomp,        // the step that failed
			"invalid argument",         // the kernel's answer
			"CONFIG_SECCOMP_FILTER=y",  // how to fix it
			"libseccomp for this architecture",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("self-test error lacks %q:\n%v", want, err)
			}
		}
	})
}
