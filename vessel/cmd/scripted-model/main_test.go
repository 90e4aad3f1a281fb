package main

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
)

// The real binary on a busy address: one plain line, exit 1.
func TestBusyListenAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "scripted-model")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "--listen", addr)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	want := "scripted-model: " + addr + " is already in use (another process listens there): stop that process or pass --listen with another address\n"
	if stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("stderr %q\nwant %q\nstdout %q", stderr.String(), want, stdout.String())
	}
}
