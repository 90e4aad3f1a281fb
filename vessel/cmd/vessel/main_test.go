package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// The real binary on an address another process holds: one plain line on
// stderr, exit 1, before anything else starts.
func TestBusyListenAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "vessel")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	files := map[string]string{
		"deployment.toml": "[egress]\nupstream_url = \"https://models.example.test/v1\"\n\n" +
			"[[apps]]\nid = \"web\"\nkey_sha256 = \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"\nagents = [\"a\"]\n\n" +
			"[[agents]]\nid = \"a\"\npackage = \"agent\"\n",
		"agent/vessel.toml": "name = \"A\"\ndescription = \"Reads things.\"\n[model]\nname = \"m\"\n[tools]\nenabled = [\"read\"]\n",
		"agent/prompt.md":   "You are a.\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	cmd := exec.Command(bin, "--deployment", filepath.Join(dir, "deployment.toml"), "--listen", addr)
	// A task store the test would see created if the vessel went on.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "VESSEL_SANDBOX_MASTER_TOKEN=m", "VESSEL_DATA_DIR=" + filepath.Join(dir, "data")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	want := "vessel: " + addr + " is already in use (another process listens there): stop that process or pass --listen with another address\n"
	if stderr.String() != want || strings.Contains(stdout.String(), "stacktrace") {
		t.Errorf("stderr %q\nwant %q\nstdout %q", stderr.String(), want, stdout.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("the task store was opened before listening")
	}
}

// listenGRPC: the flag's address, the card address from --public-url's host
// and the port listened on (the local stack) or else the deployment's
// grpc_public_address; "off" opens nothing; a busy address is an error
// naming --grpc-listen.
func TestListenGRPC(t *testing.T) {
	d := &settings.Deployment{Vessel: settings.Vessel{GRPCPort: 8701, GRPCPublicAddress: "vessel.example.org:8701"}}
	ln, public, err := listenGRPC(d, "127.0.0.1:0", "127.0.0.1:18700", "http://127.0.0.1:18700")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if public != ln.Addr().String() {
		t.Errorf("card address %q, want the listener %q", public, ln.Addr())
	}
	ln2, public, err := listenGRPC(d, "127.0.0.1:0", "127.0.0.1:18700", "")
	if err != nil {
		t.Fatal(err)
	}
	ln2.Close()
	if public != "vessel.example.org:8701" {
		t.Errorf("card address %q, want grpc_public_address", public)
	}
	// No flag: --listen's host with grpc_port.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	d2 := &settings.Deployment{Vessel: settings.Vessel{GRPCPort: port}}
	ln3, _, err := listenGRPC(d2, "", "127.0.0.1:18700", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := ln3.Addr().String(); got != net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) {
		t.Errorf("default gRPC address %s, want --listen's host with grpc_port %d", got, port)
	}
	ln3.Close()
	if ln, public, err := listenGRPC(d, "off", "127.0.0.1:18700", "http://127.0.0.1:18700"); ln != nil || public != "" || err != nil {
		t.Errorf("off: %v %q %v", ln, public, err)
	}
	if _, _, err := listenGRPC(d, ln.Addr().String(), "127.0.0.1:18700", ""); err == nil || !strings.Contains(err.Error(), "--grpc-listen") {
		t.Errorf("busy address: %v", err)
	}
}
