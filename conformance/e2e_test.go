package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/conformance/suite"
)

// TestLocalStack builds the product (or takes it from VESSEL_BIN_DIR), starts the local stack with
// `astralvessel up` (vessel, one sandboxd per agent, egress, scripted model)
// and runs every conformance check against each agent. It needs the whole
// source tree, root (sandboxd confines calls with Landlock and seccomp) and
// a few seconds, so it runs only when VESSEL_E2E_LOCAL=1 (the Makefile's
// `make test` sets it).
func TestLocalStack(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end conformance test")
	}
	bin := productBins(t)
	dep, _ := filepath.Abs("testdata/deployment.toml")
	info := startUp(t, bin, nil, "--scripted", dep)
	key, err := os.ReadFile(info.AppKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"field-guide", "field-guide-reader"} {
		t.Run(agent, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			results := suite.Run(ctx, suite.Config{URL: info.URL, Key: strings.TrimSpace(string(key)), Agent: agent,
				OtherAgent: "field-guide-locked", Timeout: 90 * time.Second}, nil)
			for _, r := range results {
				switch r.Status {
				case "FAIL":
					t.Errorf("%s", r)
				default:
					t.Logf("%s", r)
				}
			}
			sum := suite.Summarize(results)
			t.Log(sum)
			if sum.Passed < 25 {
				t.Errorf("only %d checks passed; want at least 25", sum.Passed)
			}
		})
	}
}

// startUp runs `astralvessel up` with args on a free loopback address (env,
// when not nil, replaces its environment), waits until the stack reports
// ready, and stops it when the test ends, printing its logs on failure.
func startUp(t *testing.T, bin string, env []string, args ...string) *localUp {
	t.Helper()
	state := t.TempDir()
	up := exec.Command(filepath.Join(bin, "astralvessel"),
		append([]string{"up", "--bin", bin, "--state", state, "--listen", freeAddr(t), "--grpc-listen", freeAddr(t)}, args...)...)
	up.Env = env
	logPath := filepath.Join(state, "up.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	up.Stdout, up.Stderr = logf, logf
	if err := up.Start(); err != nil {
		t.Fatalf("astralvessel up: %v", err)
	}
	// exited reports the exit to waitStack; done tells the cleanup, which
	// must not wait on exited: waitStack may have taken its one value.
	exited, done := make(chan error, 1), make(chan struct{})
	go func() { exited <- up.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = up.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = up.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			dumpLogs(t, state, logPath)
		}
	})
	return &localUp{stackInfo: waitStack(t, state, exited), pid: up.Process.Pid, state: state, log: logPath}
}

// localUp is a running `astralvessel up`.
type localUp struct {
	*stackInfo
	pid   int    // the up process
	state string // its state folder (logs/ holds every service's log)
	log   string // its own log
}

type stackInfo struct {
	URL        string   `json:"url"`
	Agents     []string `json:"agents"`
	AppKeyFile string   `json:"app_key_file"`
}

func waitStack(t *testing.T, state string, exited <-chan error) *stackInfo {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	for {
		if b, err := os.ReadFile(filepath.Join(state, "stack.json")); err == nil {
			var i stackInfo
			if err := json.Unmarshal(b, &i); err != nil {
				t.Fatalf("stack.json: %v", err)
			}
			return &i
		}
		select {
		case err := <-exited:
			t.Fatalf("astralvessel up exited before the stack was ready: %v", err)
		case <-deadline:
			t.Fatal("the local stack was not ready within 3 minutes")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func dumpLogs(t *testing.T, state, upLog string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(state, "logs", "*.log"))
	for _, f := range append([]string{upLog}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		t.Logf("==== %s (tail)\n%s", filepath.Base(f), b)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work")); err != nil {
		t.Fatalf("the source tree (go.work) is not at %s: %v", dir, err)
	}
	return dir
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
