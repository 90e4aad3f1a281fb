package a2aserver

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

type stubSandbox struct {
	fail     atomic.Bool
	confined atomic.Bool
}

func (s *stubSandbox) Status(context.Context) (*sandboxv1.StatusResponse, error) {
	if s.fail.Load() {
		return nil, errors.New("busy")
	}
	return &sandboxv1.StatusResponse{Confined: s.confined.Load(), Fingerprint: "fp", Agent: "a"}, nil
}

func (s *stubSandbox) EndTurn(context.Context, string) error { return nil }

func TestReadinessToleratesSilentSandbox(t *testing.T) {
	b, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "t.sqlite"), store.Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sb := &stubSandbox{}
	sb.confined.Store(true)
	srv, err := New(Config{
		Deployment:  &settings.Deployment{Agents: []settings.Agent{{ID: "a", PackageDir: t.TempDir(), Manifest: &settings.Manifest{Name: "A"}}}},
		Fingerprint: func(*settings.Deployment, string) (string, error) { return "fp", nil },
		Sandboxes:   map[string]AgentSandbox{"a": sb},
		Auth:        auth.Chain{},
		Store:       b,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv.CheckReadiness(ctx)
	if ok, why := srv.Ready("a"); !ok {
		t.Fatalf("not ready: %s", why)
	}
	sb.fail.Store(true)
	for i := 1; i < MaxSilentChecks; i++ {
		srv.CheckReadiness(ctx)
		if ok, _ := srv.Ready("a"); !ok {
			t.Fatalf("unavailable after %d silent checks", i)
		}
	}
	srv.CheckReadiness(ctx)
	if ok, _ := srv.Ready("a"); ok {
		t.Fatal("still ready after MaxSilentChecks silent checks")
	}
	sb.fail.Store(false)
	srv.CheckReadiness(ctx)
	if ok, _ := srv.Ready("a"); !ok {
		t.Fatal("not ready again after the sandbox answered")
	}
	// A definite problem counts at once.
	sb.confined.Store(false)
	srv.CheckReadiness(ctx)
	if ok, why := srv.Ready("a"); ok || why != "the sandbox is not confined" {
		t.Fatalf("unconfined: %v %q", ok, why)
	}
}
