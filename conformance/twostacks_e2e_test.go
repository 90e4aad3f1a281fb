package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/conformance/suite"
)

// TestLocalStackTwoAtOnce runs two local stacks of different projects on
// one host at once (issue 31): each gets its own call uids (derived from
// its project), both pass the conformance checks run against them at the
// same time, and a third stack of the first's project, whose uids overlap
// the running one's, refuses to start and says which process holds them.
// Like TestLocalStack it runs only with VESSEL_E2E_LOCAL=1.
func TestLocalStackTwoAtOnce(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	depA, depB := projectDeployment(t, "two-a"), projectDeployment(t, "two-b")
	stacks := []*localUp{startUp(t, bin, nil, "--scripted", depA), startUp(t, bin, nil, "--scripted", depB)}

	var wg sync.WaitGroup
	results := make([][]suite.Result, len(stacks))
	for i, s := range stacks {
		key, err := os.ReadFile(s.AppKeyFile)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			results[i] = suite.Run(ctx, suite.Config{URL: s.URL, Key: strings.TrimSpace(string(key)), Agent: "field-guide",
				OtherAgent: "field-guide-locked", Timeout: 90 * time.Second}, nil)
		}()
	}
	wg.Wait()
	for i, rs := range results {
		sum := suite.Summarize(rs)
		for _, r := range rs {
			if r.Status == "FAIL" {
				t.Errorf("stack %d: %s", i, r)
			}
		}
		if sum.Passed < 25 {
			t.Errorf("stack %d: only %d checks passed next to the other stack; want at least 25", i, sum.Passed)
		}
	}

	// A second stack of project two-a: the same uids, refused.
	state := t.TempDir()
	up := exec.Command(filepath.Join(bin, "astralvessel"), "up", "--bin", bin, "--state", state,
		"--listen", freeAddr(t), "--grpc-listen", freeAddr(t), "--scripted", depA)
	out, err := runWithin(up, 2*time.Minute)
	if err == nil {
		t.Fatalf("a second stack of the same project started beside the first:\n%s", out)
	}
	logs, _ := filepath.Glob(filepath.Join(state, "logs", "*.log"))
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		out += string(b)
	}
	if !strings.Contains(out, "overlaps") || !strings.Contains(out, "which pid") {
		t.Fatalf("the refused stack does not say whose uids it met:\n%s", out)
	}
}

// projectDeployment is the conformance deployment under another project
// name, its package paths made absolute (writeDeployment).
func projectDeployment(t *testing.T, project string) string {
	t.Helper()
	return writeDeployment(t, func(text string) string {
		return strings.Replace(text, `project = "conformance"`, `project = "`+project+`"`, 1)
	})
}

// runWithin runs cmd to its end (killing it after d) and returns its
// combined output.
func runWithin(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t := time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
	defer t.Stop()
	err := cmd.Wait()
	return out.String(), err
}
