package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLocalStackModelKeyOnlyInEgress starts the local stack with a real
// upstream (the scripted model on loopback, started here) and a marked model
// key, runs a turn through it, and then reads the environment of every
// process the stack started and every log it wrote: the key is in the
// egress's environment and nowhere else. Like TestLocalStack it runs only
// with VESSEL_E2E_LOCAL=1.
func TestLocalStackModelKeyOnlyInEgress(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	rnd := make([]byte, 12)
	_, _ = rand.Read(rnd)
	key := "sk-audit-" + hex.EncodeToString(rnd)

	modelAddr := startModel(t, bin) // the upstream model, on loopback
	// The conformance deployment, allowed a plain-HTTP upstream (the model
	// here is on loopback).
	dep, env := upstreamDeployment(t)
	env = append(env, "VESSEL_UPSTREAM_MODEL_URL=http://"+modelAddr+"/v1", "VESSEL_MODEL_KEY="+key)
	info := startUp(t, bin, env, dep)

	// A turn, so the key has been used on the way to the model.
	if code, b := helloTurn(t, info, "audit"); code != http.StatusOK || !strings.Contains(string(b), "TASK_STATE_COMPLETED") {
		t.Fatalf("turn through the real upstream path: HTTP %d %.400s", code, b)
	}

	// Every process the stack started, by name.
	holders := map[string]bool{}
	cardKeyHolders := map[string]bool{} // the card-signing key's path
	seen := map[string]bool{}
	for _, pid := range children(t, info.pid) {
		name := procName(pid)
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue // exited meanwhile
		}
		seen[name] = true
		if bytes.Contains(environ, []byte(key)) {
			holders[name] = true
		}
		if bytes.Contains(environ, []byte("card-signing.jwks")) {
			cardKeyHolders[name] = true
		}
	}
	if len(cardKeyHolders) != 1 || !cardKeyHolders["vessel"] {
		t.Errorf("the card-signing key is given to %v, want the vessel only", cardKeyHolders)
	}
	for _, want := range []string{"egress", "vessel", "sandboxd"} {
		if !seen[want] {
			t.Fatalf("no %s process found among the stack's children (saw %v)", want, seen)
		}
	}
	if !holders["egress"] {
		t.Fatal("the egress does not hold the model key; the check proves nothing")
	}
	for name := range holders {
		if name != "egress" {
			t.Errorf("the %s process holds the model key in its environment", name)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(info.state, "logs", "*"))
	for _, f := range append(logs, info.log) {
		if c, err := os.ReadFile(f); err == nil && bytes.Contains(c, []byte(key)) {
			t.Errorf("the model key is in %s", f)
		}
	}
}

// productBins returns VESSEL_BIN_DIR or builds the product's binaries.
func productBins(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("VESSEL_BIN_DIR"); bin != "" {
		return bin
	}
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", bin+"/", "./deployer/cmd/astralvessel", "./vessel/cmd/vessel",
		"./vessel/cmd/scripted-model", "./sandboxd/cmd/sandboxd", "./egress/cmd/egress", "./deployer/cmd/otlp-sink")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the product: %v\n%s", err, out)
	}
	return bin
}

// children lists the pids whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name (which may hold spaces): state ppid ...
		i := bytes.LastIndexByte(st, ')')
		f := strings.Fields(string(st[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// procName is the base name of a process's executable.
func procName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return ""
	}
	return filepath.Base(string(bytes.SplitN(b, []byte{0}, 2)[0]))
}

func waitTCP(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never listened: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
