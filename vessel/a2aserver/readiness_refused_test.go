package a2aserver_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// serveFake serves a fake sandbox on addr ("127.0.0.1:0" for a new port).
func serveFake(t *testing.T, addr string) (*grpc.Server, string) {
	t.Helper()
	return serveFakeTier(t, addr, "")
}

// serveFakeTier is serveFake with a sandbox that reports tier on /status.
func serveFakeTier(t *testing.T, addr, tier string) (*grpc.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	sandboxv1.RegisterRunServiceServer(gs, &fakeSandbox{agent: "a", confined: true, token: "tok", tier: tier})
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return gs, ln.Addr().String()
}

// oneAgentServer starts a vessel server of one agent "a" whose sandbox
// listens at addr, on a fresh SQLite store; cfg adjusts its Config.
func oneAgentServer(t *testing.T, addr string, cfg func(*a2aserver.Config)) (*a2aserver.Server, *tools.Sandbox, store.Backend) {
	t.Helper()
	sb, err := tools.DialSandbox("http://"+addr, "tok")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	b, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "t.sqlite"), store.Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	c := a2aserver.Config{
		Deployment:  &settings.Deployment{Agents: []settings.Agent{{ID: "a", PackageDir: t.TempDir(), Manifest: &settings.Manifest{Name: "A"}}}},
		Fingerprint: func(*settings.Deployment, string) (string, error) { return testFP, nil },
		Sandboxes:   map[string]a2aserver.AgentSandbox{"a": sb},
		Auth:        auth.Chain{},
		Store:       b,
		Logger:      zap.NewNop(),
	}
	cfg(&c)
	srv, err := a2aserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv.Start(ctx)
	t.Cleanup(srv.Close)
	return srv, sb, b
}

// Issue 21 (6): a sandbox that refuses connections takes its agent out of
// service at the first check, not after MaxSilentChecks; once it is back,
// the agent is served again long before the next regular check.
func TestDeadSandboxOutAtOnceAndBackSoon(t *testing.T) {
	gs, addr := serveFake(t, "127.0.0.1:0")
	srv, sb, _ := oneAgentServer(t, addr, func(c *a2aserver.Config) {
		// Only the quick recheck of agents out of service can bring it back.
		c.ReadyInterval, c.UnreadyInterval = time.Hour, 50*time.Millisecond
	})
	ctx := context.Background()
	if ok, why := srv.Ready("a"); !ok {
		t.Fatalf("not ready at start: %s", why)
	}
	gs.Stop()
	// The client learns of the closed connection asynchronously; from then
	// on every dial is refused, and one check must be enough.
	for i := 0; ; i++ {
		_, err := sb.Status(ctx)
		if err != nil && strings.Contains(err.Error(), "connection refused") {
			break
		}
		if i > 500 {
			t.Fatalf("the stopped sandbox is not refused: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.CheckReadiness(ctx)
	if ok, why := srv.Ready("a"); ok || why != "the sandbox refuses connections" {
		t.Fatalf("after one check of a stopped sandbox: ready %v (%q)", ok, why)
	}
	serveFake(t, addr)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ok, _ := srv.Ready("a"); ok {
			break
		}
		if time.Now().After(deadline) {
			_, why := srv.Ready("a")
			t.Fatalf("not served again after the sandbox came back: %s", why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 33: the vessel serves an agent only in the isolation tier its
// deployment asked for. A sandbox on the host kernel (confined) behind a
// gvisor agent, or a gvisor one behind a confined agent, keeps the agent
// out of service with the reason on /health; the matching tier serves.
func TestSandboxInAnotherTierKeepsAgentOut(t *testing.T) {
	for _, tc := range []struct {
		asked, reported string
		ready           bool
	}{
		{vesseldefaults.RuntimeGVisor, "", false},
		{vesseldefaults.RuntimeGVisor, vesseldefaults.RuntimeConfined, false},
		{"", vesseldefaults.RuntimeGVisor, false},
		{vesseldefaults.RuntimeGVisor, vesseldefaults.RuntimeGVisor, true},
		{"", "", true},
	} {
		_, addr := serveFakeTier(t, "127.0.0.1:0", tc.reported)
		srv, _, _ := oneAgentServer(t, addr, func(c *a2aserver.Config) {
			c.ReadyInterval, c.UnreadyInterval = time.Hour, time.Hour
			c.Deployment.Agents[0].Sandbox.Runtime = tc.asked
		})
		srv.CheckReadiness(context.Background())
		ok, why := srv.Ready("a")
		if ok != tc.ready {
			t.Errorf("asked %q, sandbox reports %q: ready %v (%q), want %v", tc.asked, tc.reported, ok, why, tc.ready)
			continue
		}
		if ok {
			continue
		}
		if !strings.Contains(why, "tier") || !strings.Contains(why, "runtime") {
			t.Errorf("asked %q, sandbox reports %q: reason %q does not name the tier", tc.asked, tc.reported, why)
		}
		health := string(httpGet(t, srv, "/health"))
		if !strings.Contains(health, `"a":false`) || !strings.Contains(health, "the deployment asks for") {
			t.Errorf("/health with a sandbox in another tier: %s", health)
		}
	}
}
