package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHealthSubcommand: `sandboxd health ADDR` against a real sandboxd
// exits 0 with the container's token, 1 with a wrong one or nothing
// listening, 2 for bad arguments.
func TestHealthSubcommand(t *testing.T) {
	requireKernel(t)
	if os.Geteuid() != 0 {
		t.Fatal("sandboxd needs root")
	}
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
		"--listen", addr, "--uid-range", "510128:64")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=tok"}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopSandboxd(cmd)
	health := func(token string, args ...string) (int, string) {
		h := exec.Command(bin, append([]string{"health"}, args...)...)
		h.Env = []string{"VESSEL_SANDBOX_TOKEN=" + token}
		out, err := h.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	for i := 0; ; i++ {
		code, out := health("tok", addr)
		if code == 0 {
			break
		}
		if i > 200 {
			t.Fatalf("never healthy: %d %s\n%s", code, out, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, out := health("wrong", addr); code != 1 || !strings.Contains(out, "unhealthy") {
		t.Errorf("wrong token: %d %s", code, out)
	}
	if code, out := health("tok", freeAddr(t)); code != 1 {
		t.Errorf("nothing listening: %d %s", code, out)
	}
	if code, _ := health("tok", "--url", addr); code != 2 {
		t.Errorf("a flag: exit %d", code)
	}
}
