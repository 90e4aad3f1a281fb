package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// TestDNSTrapRecordsLookups: the trap sees a lookup made through Go's own
// resolver (UDP, then TCP) and answers it at once with a refusal.
func TestDNSTrapRecordsLookups(t *testing.T) {
	trap, err := startDNSTrap("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer trap.Close()
	if trap.Err() != nil {
		t.Fatal("a fresh trap reports lookups")
	}
	addr := trap.udp.LocalAddr().String()
	for _, network := range []string{"udp", "tcp"} {
		// The TCP listener has its own port; dial what the trap serves.
		target := addr
		if network == "tcp" {
			target = trap.tcp.Addr().String()
		}
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, target)
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := r.LookupHost(ctx, "egress-"+network)
		cancel()
		if err == nil {
			t.Fatalf("%s: the trap answered a lookup", network)
		}
	}
	names := trap.Names()
	if !slices.Contains(names, "egress-udp.") || !slices.Contains(names, "egress-tcp.") || trap.Err() == nil ||
		!strings.Contains(trap.Err().Error(), "egress-udp.") {
		t.Fatalf("names %v, err %v", names, trap.Err())
	}
	if _, err := startDNSTrap("192.0.2.1:53"); err == nil {
		t.Fatal("a trap beyond loopback accepted")
	}
}

// innerEnv marks the copy of the test binary that runs inside the
// loopback-only namespace.
const innerEnv = "VESSEL_STRESS_LOOPBACK_INNER"

// TestLocalStackShortLoadLoopbackOnly runs the short load in a network namespace
// with only loopback (as make load does), the resolver pointed at a DNS
// trap on loopback: the run must succeed, no name may be looked up (the
// Compose-only "egress" included), and the namespace has no interface
// beyond loopback, so no connect can leave it. The test binary runs itself
// again under unshare --net --mount; needs root.
func TestLocalStackShortLoadLoopbackOnly(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the load test against the local stack")
	}
	if os.Getenv(innerEnv) == "1" {
		loopbackInner(t)
		return
	}
	unshare, err := exec.LookPath("unshare")
	testenv.Require(t, err == nil && os.Geteuid() == 0,
		fmt.Sprintf("needs root and unshare for a loopback-only network namespace (euid %d, %v)", os.Geteuid(), err))
	bin := testBin(t) // built out here: the namespace has no network
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "--net", "--mount", "--propagation", "private", "--",
		os.Args[0], "-test.run", "^TestLocalStackShortLoadLoopbackOnly$", "-test.v", "-test.count", "1")
	cmd.Env = append(os.Environ(), innerEnv+"=1", "VESSEL_STRESS_BIN="+bin)
	out, err := cmd.CombinedOutput()
	t.Log(string(out))
	if err != nil {
		t.Fatalf("the run in the loopback-only namespace failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestLocalStackShortLoadLoopbackOnly") {
		t.Fatal("the inner run did not pass")
	}
}

// loopbackInner is the namespace's side: loopback up, resolv.conf naming
// the trap, a check that the trap catches a lookup, then the short load.
func loopbackInner(t *testing.T) {
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v %s", err, out)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			t.Fatalf("the namespace has interface %s beyond loopback", i.Name)
		}
	}
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(conf, []byte("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A private mount namespace: the bind is seen by this process and the
	// stack it starts, nowhere else.
	if err := syscall.Mount(conf, "/etc/resolv.conf", "", syscall.MS_BIND, ""); err != nil {
		t.Fatalf("bind the trap's resolv.conf: %v", err)
	}
	trap, err := startDNSTrap("127.0.0.1:53")
	if err != nil {
		t.Fatal(err)
	}
	// The trap is what the system resolver asks here: a lookup shows.
	if _, err := net.LookupHost("egress"); err == nil {
		t.Fatal("egress resolved inside the namespace")
	}
	if !slices.ContainsFunc(trap.Names(), func(n string) bool { return strings.HasPrefix(n, "egress.") }) {
		t.Fatalf("the trap did not see the control lookup: %v", trap.Names())
	}
	trap.Close()
	t.Setenv("VESSEL_STRESS_DNS_TRAP", "127.0.0.1:53")
	shortLoad(t, 1, "")
}
