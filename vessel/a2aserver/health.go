package a2aserver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// HealthCheck is a dependency of the vessel that /health reports by name:
// the task store, the egress.
type HealthCheck struct {
	Name  string
	Check func(ctx context.Context) error
	// Critical takes every agent out of service while the check fails: with
	// the task store failing, no turn could be kept.
	Critical bool
}

// HealthTimeout bounds one health check.
const HealthTimeout = 5 * time.Second

// healthState is the last result of each check.
type healthState struct {
	mu      sync.Mutex
	results map[string]string // "" when the check passed
	checked bool
}

// CheckHealth runs every health check once, concurrently, and logs changes.
func (s *Server) CheckHealth(ctx context.Context) {
	type result struct{ name, why string }
	out := make(chan result, len(s.cfg.HealthChecks))
	for _, hc := range s.cfg.HealthChecks {
		go func() {
			cctx, cancel := context.WithTimeout(ctx, HealthTimeout)
			defer cancel()
			why := ""
			if err := hc.Check(cctx); err != nil {
				why = err.Error()
			}
			out <- result{hc.Name, why}
		}()
	}
	s.health.mu.Lock()
	if s.health.results == nil {
		s.health.results = map[string]string{}
	}
	for range s.cfg.HealthChecks {
		r := <-out
		prev, seen := s.health.results[r.name]
		s.health.results[r.name] = r.why
		switch {
		case r.why != "" && (!seen || prev == ""):
			s.log.Warn("health check failing", zap.String("check", r.name), zap.String("reason", r.why))
		case r.why == "" && seen && prev != "":
			s.log.Info("health check passing again", zap.String("check", r.name))
		}
	}
	s.health.checked = true
	s.health.mu.Unlock()
	s.applyCritical()
}

// criticalProblem names a failing critical check ("" when none fails).
func (s *Server) criticalProblem() string {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	for _, hc := range s.cfg.HealthChecks {
		if why := s.health.results[hc.Name]; hc.Critical && why != "" {
			return "the " + hc.Name + " is failing: " + why
		}
	}
	return ""
}

// healthHandler answers /health: ok when every dependency check passes, each
// agent's readiness, and each check (sandboxes included) by name.
func (s *Server) healthHandler(w http.ResponseWriter, r *http.Request) {
	agents := map[string]bool{}
	checks := map[string]any{}
	for _, id := range s.order {
		a := s.agents[id]
		ready := a.ready.Load()
		agents[id] = ready
		c := map[string]any{"ok": ready}
		if why, _ := a.why.Load().(string); !ready && why != "" {
			c["error"] = why
		}
		checks["sandbox "+id] = c
	}
	ok := true
	s.health.mu.Lock()
	for _, hc := range s.cfg.HealthChecks {
		why, ran := s.health.results[hc.Name]
		c := map[string]any{"ok": ran && why == ""}
		switch {
		case !ran:
			c["error"] = "not checked yet"
		case why != "":
			c["error"] = why
		}
		if !ran || why != "" {
			ok = false
		}
		checks[hc.Name] = c
	}
	s.health.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"ok": ok, "agents": agents, "checks": checks})
}
