package a2aserver

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// Start polls every sandbox's status (and re-reads the deployment from
// disk) until Close; it checks once before returning.
func (s *Server) Start(ctx context.Context) {
	s.CheckReadiness(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.cfg.ReadyInterval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				s.CheckReadiness(ctx)
			}
		}
	}()
}

// CheckReadiness updates every agent's readiness once. An agent is served
// only while its sandbox answers, reports confinement and the agent's id,
// and reports the fingerprint the vessel computed at start, and while the
// deployment on disk still gives that fingerprint.
func (s *Server) CheckReadiness(ctx context.Context) {
	var disk *spec.Deployment
	var diskErr error
	if s.cfg.Reload != nil {
		disk, diskErr = s.cfg.Reload()
	}
	for _, id := range s.order {
		a := s.agents[id]
		why := s.agentProblem(ctx, a, disk, diskErr)
		was := a.ready.Load()
		a.why.Store(why)
		a.ready.Store(why == "")
		if was != (why == "") {
			if why == "" {
				s.log.Info("agent ready", zap.String("agent", id))
			} else {
				s.log.Warn("agent unavailable", zap.String("agent", id), zap.String("reason", why))
			}
		}
	}
}

func (s *Server) agentProblem(ctx context.Context, a *agent, disk *spec.Deployment, diskErr error) string {
	if a.sandbox == nil {
		return "no sandbox is configured"
	}
	if diskErr != nil {
		return "the deployment on disk no longer loads; redeploy"
	}
	if disk != nil {
		fp, err := s.cfg.Fingerprint(disk, a.spec.ID)
		if err != nil {
			return "the agent is no longer in the deployment on disk; redeploy"
		}
		if fp != a.fp {
			return "the agent's files changed since the vessel started; redeploy"
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := a.sandbox.Status(cctx)
	if err != nil {
		return "the sandbox does not answer"
	}
	switch {
	case !st.GetConfined():
		return "the sandbox is not confined"
	case st.GetAgent() != "" && st.GetAgent() != a.spec.ID:
		return fmt.Sprintf("the sandbox serves agent %q", st.GetAgent())
	case st.GetFingerprint() != a.fp:
		return "the sandbox was started from a different profile fingerprint; redeploy"
	}
	return ""
}
