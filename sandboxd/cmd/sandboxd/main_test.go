package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildBinary builds sandboxd once per test run and copies it into dir.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	buildOnce.Do(func() {
		d, err := os.MkdirTemp("", "sandboxd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(d, "sandboxd")
		if out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	b, err := os.ReadFile(builtBin)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandboxd")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

func requireKernel(t *testing.T) {
	if _, err := confine.Check(); err != nil {
		testenv.Require(t, false, "kernel features missing: "+err.Error())
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// testTools is the --tools of agentDir's package: bash only, as its
// vessel.toml says.
const testTools = `{"tools":{"enabled":["bash"]},"output":{"files":[]}}`

func agentDir(t *testing.T) (base, pkg string) {
	base, err := os.MkdirTemp("", "sandboxd-main-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	pkg = filepath.Join(base, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := "name = \"T\"\ndescription = \"t\"\n[model]\nname = \"m\"\n[tools]\nenabled = [\"bash\"]\n"
	_ = os.WriteFile(filepath.Join(pkg, "vessel.toml"), []byte(manifest), 0o644)
	_ = os.WriteFile(filepath.Join(pkg, "prompt.md"), []byte("p\n"), 0o644)
	_ = os.Chmod(base, 0o777) // the scratch dir is created by an unprivileged sandboxd
	return base, pkg
}

func TestRefusesWithoutToken(t *testing.T) {
	requireKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	cmd := exec.Command(bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "VESSEL_SANDBOX_TOKEN_FILE") {
		t.Fatalf("want a refusal naming the token variable: %v\n%s", err, out)
	}
}

// containerCaps is the sandbox container's cap_add list, as setpriv names them.
const containerCaps = "+setuid,+setgid,+chown,+kill,+dac_override"

// TestRefusesWithoutRoot: an unprivileged sandboxd cannot give turns uids
// of their own, and says so instead of running every call as itself.
func TestRefusesWithoutRoot(t *testing.T) {
	requireKernel(t)
	setpriv := needSetpriv(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	_ = os.Chmod(bin, 0o755)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--nnp",
		"--inh-caps=-all", "--bounding-set=-all", bin, "--agent", "a", "--package", pkg, "--tools", testTools,
		"--scratch", filepath.Join(base, "scratch"), "--listen", freeAddr(t))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=x"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "need a uid of their own") || !strings.Contains(string(out), "cap_add") {
		t.Fatalf("want a refusal that says what is missing: %v\n%s", err, out)
	}
}

// TestRefusesWithoutCapabilities: root missing one of the five
// capabilities names it.
func TestRefusesWithoutCapabilities(t *testing.T) {
	requireKernel(t)
	setpriv := needSetpriv(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	cmd := exec.Command(setpriv, "--inh-caps=-all", "--bounding-set=-all,+setuid,+setgid,+chown,+dac_override",
		bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"), "--listen", freeAddr(t))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=x"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "without CAP_KILL") {
		t.Fatalf("want a refusal naming CAP_KILL: %v\n%s", err, out)
	}
}

func needSetpriv(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to set up the user and capabilities with setpriv")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatal("setpriv (util-linux) is needed for this test")
	}
	return setpriv
}

// TestContainerLayout starts the real binary as the sandbox container
// runs it: root with only the five capabilities of its cap_add list and
// no_new_privs, and runs a confined call through HTTP/JSON, which runs as
// a uid of the turn's own from --uid-range.
func TestContainerLayout(t *testing.T) {
	requireKernel(t)
	setpriv := needSetpriv(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	_ = os.Chmod(bin, 0o755)
	tokenFile := filepath.Join(base, "token")
	_ = os.WriteFile(tokenFile, []byte("tok\n"), 0o644)
	addr, httpAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, setpriv, "--clear-groups", "--nnp",
		"--inh-caps=-all", "--bounding-set=-all,"+containerCaps, bin, "--agent", "a", "--package", pkg, "--tools", testTools,
		"--scratch", filepath.Join(base, "scratch"), "--listen", addr, "--http-listen", httpAddr, "--fingerprint", "sha256:fp",
		"--uid-range", "510000:16", "--turn-disk", "4MiB", "--tier", "confined")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN_FILE=" + tokenFile}
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopSandboxd(cmd)
	var status map[string]any
	for i := 0; ; i++ {
		req, _ := http.NewRequest("GET", "http://"+httpAddr+"/status", nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&status)
			resp.Body.Close()
			break
		}
		if i > 200 {
			t.Fatalf("sandboxd did not come up: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// This host's kernel is not gVisor's: the confined tier it asked for.
	if status["confined"] != true || status["fingerprint"] != "sha256:fp" || status["tier"] != "confined" {
		t.Fatalf("status %v", status)
	}
	run := func(turn, command string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"command": command})
		body, _ := json.Marshal(map[string]string{"turn_id": turn, "owner": "o", "tool": "bash", "arguments_json": string(args)})
		req, _ := http.NewRequest("POST", "http://"+httpAddr+"/run", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out strings.Builder
		dec := json.NewDecoder(resp.Body)
		for {
			var msg struct {
				Result struct {
					Stdout []byte         `json:"stdout"`
					Exit   map[string]any `json:"exit"`
				} `json:"result"`
			}
			if err := dec.Decode(&msg); err != nil {
				break
			}
			out.Write(msg.Result.Stdout)
			if msg.Result.Exit != nil {
				fmt.Fprintf(&out, "exit=%v stopped=%v", msg.Result.Exit["code"], msg.Result.Exit["stopped"])
			}
		}
		return out.String()
	}
	// /proc is not granted, so the second command fails: the call runs as
	// the turn's uid and exits with grep's status.
	out := run("t", "id -u; cat /proc/self/status | grep NoNewPrivs")
	first, _, _ := strings.Cut(out, "\n")
	if uid, err := strconv.Atoi(first); err != nil || uid < 510000 || uid >= 510016 || strings.Contains(out, "NoNewPrivs") {
		t.Fatalf("call output %q\n%s", out, logs.String())
	}
	// Without CAP_SYS_PTRACE sandboxd still finds a deleted file the call
	// holds open (through the turn's file-system uid) and stops the call.
	out = run("t2", "exec 3>big; head -c 6M /dev/zero >&3; rm big; echo held; sleep 20")
	if !strings.Contains(out, "held") || !strings.Contains(out, "stopped=disk_limit") {
		t.Fatalf("a deleted 6 MiB file held open under a 4 MiB turn limit: %q\n%s", out, logs.String())
	}
}

func TestRefusesPackageTheCallUserCannotRead(t *testing.T) {
	requireKernel(t)
	if os.Geteuid() != 0 {
		t.Skip("only a root sandboxd runs calls as another user")
	}
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	_ = os.Chmod(pkg, 0o700)
	cmd := exec.Command(bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
		"--listen", freeAddr(t), "--uid-range", "510016:16")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=x"}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot read "+pkg) {
		t.Fatalf("want a refusal naming the package: %v\n%s", err, out)
	}
}

func TestRefusesTokenFileCallsCanRead(t *testing.T) {
	requireKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	tok := filepath.Join(pkg, "token")
	_ = os.WriteFile(tok, []byte("secret\n"), 0o600)
	cmd := exec.Command(bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
		"--listen", freeAddr(t), "--uid-range", "510032:16")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN_FILE=" + tok}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "which tool calls can read") {
		t.Fatalf("want a refusal: %v\n%s", err, out)
	}
}

// TestBusyListenAddress: another process holds --listen. sandboxd says so
// in one plain line, before it sets up workspaces or runs its self-test.
func TestBusyListenAddress(t *testing.T) {
	requireKernel(t)
	if os.Geteuid() != 0 {
		t.Skip("sandboxd refuses to start without root before it listens")
	}
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	scratch := filepath.Join(base, "scratch")
	for _, c := range []struct{ flag, listen, http string }{
		{"--listen", addr, ""},
		{"--http-listen", freeAddr(t), addr},
	} {
		args := []string{"--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", scratch, "--listen", c.listen, "--uid-range", "510160:16"}
		if c.http != "" {
			args = append(args, "--http-listen", c.http)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=x"}
		out, err := cmd.CombinedOutput()
		want := "sandboxd: " + addr + " is already in use (another process listens there): stop that process or pass " + c.flag + " with another address\n"
		if err == nil || string(out) != want {
			t.Fatalf("%v\n%q\nwant %q", err, out, want)
		}
	}
	if _, err := os.Stat(scratch); err == nil {
		t.Error("the scratch folder was set up before listening")
	}
}
