package a2aserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// Issue 21 (7): /health reports the task store, the egress and each
// sandbox by name; a failing task store takes the agents out of service.
func TestHealthReportsEachDependency(t *testing.T) {
	_, addr := serveFake(t, "127.0.0.1:0")
	var storeDown, egressDown atomic.Bool
	var pinger store.Pinger
	srv, _, _ := oneAgentServer(t, addr, func(c *a2aserver.Config) {
		c.ReadyInterval = time.Hour
		c.HealthChecks = []a2aserver.HealthCheck{
			{Name: "task store", Critical: true, Check: func(ctx context.Context) error {
				if storeDown.Load() {
					return errors.New("disk full")
				}
				return pinger.Ping(ctx)
			}},
			{Name: "egress", Check: func(context.Context) error {
				if egressDown.Load() {
					return errors.New("egress health: HTTP 502")
				}
				return nil
			}},
		}
		pinger = c.Store.(store.Pinger)
	})
	ctx := context.Background()
	type check struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	health := func() (ok bool, agents map[string]bool, checks map[string]check) {
		t.Helper()
		rec := httpGet(t, srv, "/health")
		var v struct {
			OK     bool             `json:"ok"`
			Agents map[string]bool  `json:"agents"`
			Checks map[string]check `json:"checks"`
		}
		if err := json.Unmarshal(rec, &v); err != nil {
			t.Fatalf("health %s: %v", rec, err)
		}
		return v.OK, v.Agents, v.Checks
	}
	ok, agents, checks := health()
	if !ok || !agents["a"] || !checks["task store"].OK || !checks["egress"].OK || !checks["sandbox a"].OK {
		t.Fatalf("healthy: ok %v agents %v checks %v", ok, agents, checks)
	}
	egressDown.Store(true)
	srv.CheckHealth(ctx)
	srv.CheckReadiness(ctx)
	ok, agents, checks = health()
	if ok || checks["egress"].OK || checks["egress"].Error != "egress health: HTTP 502" || !agents["a"] {
		t.Fatalf("egress down: ok %v agents %v checks %v", ok, agents, checks)
	}
	storeDown.Store(true)
	srv.CheckHealth(ctx)
	srv.CheckReadiness(ctx)
	ok, agents, checks = health()
	if ok || checks["task store"].OK || agents["a"] || checks["sandbox a"].Error != "the task store is failing: disk full" {
		t.Fatalf("store down: ok %v agents %v checks %v", ok, agents, checks)
	}
	storeDown.Store(false)
	egressDown.Store(false)
	srv.CheckHealth(ctx)
	srv.CheckReadiness(ctx)
	if ok, agents, _ := health(); !ok || !agents["a"] {
		t.Fatalf("not healthy again: %v %v", ok, agents)
	}
}

// httpGet serves one GET through h and returns the body.
func httpGet(t *testing.T, h http.Handler, path string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.Bytes()
}
