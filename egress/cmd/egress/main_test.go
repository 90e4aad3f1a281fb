package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigErrors(t *testing.T) {
	for name, m := range map[string]map[string]string{
		"no upstream":   {"VESSEL_EGRESS_TOKEN": "t"},
		"no token":      {"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1"},
		"bad cidr":      {"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1", "VESSEL_EGRESS_TOKEN": "t", "VESSEL_EGRESS_ALLOW_CIDRS": "10.0.0.0/99"},
		"bad port":      {"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1", "VESSEL_EGRESS_TOKEN": "t", "VESSEL_EGRESS_ALLOW_PORTS": "x"},
		"bad allowhttp": {"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1", "VESSEL_EGRESS_TOKEN": "t", "VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM": "yes"},
	} {
		if _, err := loadConfig(nil, env(m)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	err := run(context.Background(), []string{"--model-listen", "127.0.0.1:0", "--proxy-listen", "127.0.0.1:0"},
		env(map[string]string{"VESSEL_UPSTREAM_MODEL_URL": "http://m.test/v1", "VESSEL_EGRESS_TOKEN": "t"}), zap.NewNop(), nil)
	if err == nil || !strings.Contains(err.Error(), "VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM") {
		t.Fatalf("plain HTTP upstream: %v", err)
	}
}

// The binary's wiring end to end on loopback: token file, model passthrough
// to a loopback upstream, and the proxy refusing loopback by default.
func TestRunServes(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
	}))
	defer up.Close()
	tok := filepath.Join(t.TempDir(), "egress.token")
	if err := os.WriteFile(tok, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--model-listen", "127.0.0.1:0", "--proxy-listen", "127.0.0.1:0"}, env(map[string]string{
			"VESSEL_UPSTREAM_MODEL_URL":         up.URL + "/v1",
			"VESSEL_UPSTREAM_MODEL_KEY":         "real-key",
			"VESSEL_EGRESS_TOKEN_FILE":          tok,
			"VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM": "1",
		}), zap.NewNop(), func(m, p string) { addrs <- [2]string{m, p} })
	}()
	var a [2]string
	select {
	case a = <-addrs:
	case err := <-done:
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", "http://"+a[0]+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer tok-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "Bearer real-key" {
		t.Fatalf("upstream saw %q", b)
	}
	// The proxy refuses the loopback upstream: loopback is not public.
	pc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: a[1]})}}
	presp, err := pc.Get(up.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	presp.Body.Close()
	if presp.StatusCode != http.StatusForbidden {
		t.Fatalf("proxy to loopback: %d", presp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The real binary on a busy address: one plain line naming the flag, exit 1.
func TestBusyListenAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "egress")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	cmd := exec.Command(bin, "--model-listen", "127.0.0.1:0", "--proxy-listen", addr)
	cmd.Env = []string{"VESSEL_UPSTREAM_MODEL_URL=https://m.example.test/v1", "VESSEL_EGRESS_TOKEN=t"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	want := "egress: " + addr + " is already in use (another process listens there): stop that process or pass --proxy-listen with another address\n"
	if stderr.String() != want || stdout.Len() != 0 {
		t.Errorf("stderr %q\nwant %q\nstdout %q", stderr.String(), want, stdout.String())
	}
}
