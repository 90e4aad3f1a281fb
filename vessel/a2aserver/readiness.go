package a2aserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Start polls every sandbox's status (and re-reads the deployment from
// disk) until Close; it checks once before returning.
func (s *Server) Start(ctx context.Context) {
	s.CheckHealth(ctx)
	s.every(ctx, s.cfg.ReadyInterval, s.CheckHealth)
	s.CheckReadiness(ctx)
	s.every(ctx, s.cfg.ReadyInterval, s.CheckReadiness)
	// An agent out of service is checked far more often, so it is back
	// within a moment of its sandbox.
	s.every(ctx, s.cfg.UnreadyInterval, s.checkUnready)
	// Turns a crashed or restarted vessel left behind are ended within a
	// TurnSweep of start (they must have been idle StaleTurnIdle first).
	s.every(ctx, s.cfg.TurnSweep, s.SweepTurns)
}

// every runs f every d until Close or ctx ends.
func (s *Server) every(ctx context.Context, d time.Duration, f func(context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				f(ctx)
			}
		}
	}()
}

// StatusTimeout bounds one Status call; a sandbox busy with many calls may
// be slow to answer.
const StatusTimeout = 10 * time.Second

// MaxSilentChecks is how many checks in a row a ready sandbox may fail to
// answer before its agent is taken out of service: a busy sandbox that
// misses a poll is not a broken one. Every other problem (not confined,
// another fingerprint, an edited deployment) counts at once.
const MaxSilentChecks = 3

// CheckReadiness updates every agent's readiness once, checking the agents
// concurrently. An agent is served only while its sandbox answers,
// reports confinement and the agent's id, and reports the fingerprint the
// vessel computed at start, and while the deployment on disk still gives
// that fingerprint.
func (s *Server) CheckReadiness(ctx context.Context) {
	var disk *settings.Deployment
	var diskErr error
	if s.cfg.Reload != nil {
		disk, diskErr = s.cfg.Reload()
	}
	var wg sync.WaitGroup
	for _, id := range s.order {
		a := s.agents[id]
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.checkAgent(ctx, a, disk, diskErr)
		}()
	}
	wg.Wait()
}

// checkUnready checks again the agents out of service.
func (s *Server) checkUnready(ctx context.Context) {
	var disk *settings.Deployment
	var diskErr error
	loaded := false
	for _, id := range s.order {
		a := s.agents[id]
		if a.ready.Load() || a.sandbox == nil {
			continue
		}
		if !loaded && s.cfg.Reload != nil {
			disk, diskErr = s.cfg.Reload()
			loaded = true
		}
		s.checkAgent(ctx, a, disk, diskErr)
	}
}

func (s *Server) checkAgent(ctx context.Context, a *agent, disk *settings.Deployment, diskErr error) {
	why, silent := s.agentProblem(ctx, a, disk, diskErr)
	was := a.ready.Load()
	if silent && was {
		if n := a.silent.Add(1); n < MaxSilentChecks {
			s.log.Warn("sandbox did not answer a status check", zap.String("agent", a.conf.ID), zap.Int32("in_a_row", n))
			return
		}
	}
	if !silent {
		a.silent.Store(0)
	}
	if s.draining.Load() {
		return // Drain has taken every agent out of service for good
	}
	s.setReady(a, why)
	if s.draining.Load() { // Drain ran meanwhile: undo
		s.setReady(a, ShuttingDown)
		return
	}
	if was != (why == "") {
		if why == "" {
			s.log.Info("agent ready", zap.String("agent", a.conf.ID))
		} else {
			s.log.Warn("agent unavailable", zap.String("agent", a.conf.ID), zap.String("reason", why))
		}
	}
}

// agentProblem says why an agent cannot be served ("" when it can), and
// whether the reason is only that the sandbox did not answer.
func (s *Server) agentProblem(ctx context.Context, a *agent, disk *settings.Deployment, diskErr error) (string, bool) {
	if a.sandbox == nil {
		return "no sandbox is configured", false
	}
	if why := s.criticalProblem(); why != "" {
		return why, false
	}
	if diskErr != nil {
		return "the deployment on disk no longer loads; redeploy", false
	}
	if disk != nil {
		fp, err := s.cfg.Fingerprint(disk, a.conf.ID)
		if err != nil {
			return "the agent is no longer in the deployment on disk; redeploy", false
		}
		if fp != a.fp {
			return "the agent's files changed since the vessel started; redeploy", false
		}
	}
	cctx, cancel := context.WithTimeout(ctx, StatusTimeout)
	defer cancel()
	st, err := a.sandbox.Status(cctx)
	if err != nil {
		if refused(err) {
			// Nothing listens: the sandbox is down, not busy.
			return "the sandbox refuses connections", false
		}
		return "the sandbox does not answer", true
	}
	switch {
	case !st.GetConfined():
		return "the sandbox is not confined", false
	case st.GetAgent() != "" && st.GetAgent() != a.conf.ID:
		return fmt.Sprintf("the sandbox serves agent %q", st.GetAgent()), false
	case st.GetFingerprint() != a.fp:
		return "the sandbox was started from a different profile fingerprint; redeploy", false
	case sandboxTier(st) != a.conf.Sandbox.Tier():
		// A gvisor agent on the host kernel (or the reverse) would run its
		// calls with other guarantees than the deployment promised.
		return fmt.Sprintf("the sandbox runs in the %s tier but the deployment asks for %s ([agents.sandbox] runtime); "+
			"fix the sandbox's runtime and redeploy", sandboxTier(st), a.conf.Sandbox.Tier()), false
	}
	return "", false
}

// sandboxTier is the isolation tier a sandbox reports; sandboxd from
// before tiers reports none and ran only the confined one.
func sandboxTier(st *sandboxv1.StatusResponse) string {
	if t := st.GetTier(); t != "" {
		return t
	}
	return vesseldefaults.RuntimeConfined
}

// refused reports a connection the sandbox's host refused (gRPC reports it
// as Unavailable with the dial error in its message).
func refused(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	st, ok := status.FromError(errors.Unwrap(err))
	if !ok {
		st, ok = status.FromError(err)
	}
	return ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "connection refused")
}

// ShuttingDown is why every agent is unavailable while the vessel stops.
const ShuttingDown = "the vessel is shutting down"

// Drain prepares the vessel to stop. Readiness goes false at once (health
// shows every agent unavailable; new calls get 503 with Retry-After, so a
// load balancer sends them elsewhere); turns in flight may finish within
// grace; the rest are then stopped with loop.ErrShutdown and end with
// turn.finished status shutdown, their tasks failed. Drain returns once no
// turn is running, or when ctx is done; it reports how many turns were
// running when it began and how many it stopped.
func (s *Server) Drain(ctx context.Context, grace time.Duration) (running, stopped int) {
	s.draining.Store(true)
	for _, id := range s.order {
		s.setReady(s.agents[id], ShuttingDown)
	}
	count := func() int {
		n := 0
		for _, id := range s.order {
			n += s.agents[id].exec.runningTurns()
		}
		return n
	}
	running = count()
	// Turns paused for approval cannot wait out the grace period: their
	// state is in this process. They end now, failed with status shutdown.
	for _, id := range s.order {
		s.agents[id].exec.endPaused()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	graceOver := time.NewTimer(grace)
	defer graceOver.Stop()
	for count() > 0 && grace > 0 {
		select {
		case <-ctx.Done():
			return running, 0
		case <-graceOver.C:
			grace = 0
		case <-tick.C:
		}
	}
	// Stop what is left, again at each tick: a call that passed the
	// readiness check just before Drain may start a turn late.
	done := map[*run]bool{}
	for {
		for _, id := range s.order {
			stopped += s.agents[id].exec.stopAll(loop.ErrShutdown, done)
		}
		if count() == 0 {
			return running, stopped
		}
		select {
		case <-ctx.Done():
			return running, stopped
		case <-tick.C:
		}
	}
}

// setReady records an agent's readiness (why == "": ready) and exports it:
// vessel_agent_ready, and vessel_agent_unavailable by cause.
func (s *Server) setReady(a *agent, why string) {
	a.why.Store(why)
	a.ready.Store(why == "")
	if s.cfg.Metrics == nil {
		return
	}
	ready, cause := 0.0, ""
	if why == "" {
		ready = 1
	} else {
		cause = unavailableCause(why)
	}
	s.cfg.Metrics.agentReady.WithLabelValues(a.conf.ID).Set(ready)
	for _, c := range unavailableCauses {
		v := 0.0
		if c == cause {
			v = 1
		}
		s.cfg.Metrics.agentUnavailable.WithLabelValues(a.conf.ID, c).Set(v)
	}
}

// The causes of vessel_agent_unavailable, a fixed list.
var unavailableCauses = []string{"sandbox", "egress", "task_store", "deployment", "shutdown"}

// unavailableCause sorts a reason an agent is out of service into one of
// unavailableCauses.
func unavailableCause(why string) string {
	switch {
	case why == ShuttingDown:
		return "shutdown"
	case strings.HasPrefix(why, "the egress "):
		return "egress"
	case strings.HasPrefix(why, "the task store "):
		return "task_store"
	case strings.Contains(why, "redeploy"):
		return "deployment"
	}
	return "sandbox"
}

// applyCritical takes every ready agent out of service at once while a
// critical check fails, so a failing egress or task store shows within one
// health interval instead of at the next readiness round; agents come back
// through checkUnready once the check passes.
func (s *Server) applyCritical() {
	why := s.criticalProblem()
	if why == "" || s.draining.Load() {
		return
	}
	for _, id := range s.order {
		a := s.agents[id]
		if !a.ready.Load() {
			continue
		}
		s.setReady(a, why)
		if s.draining.Load() {
			s.setReady(a, ShuttingDown)
			return
		}
		s.log.Warn("agent unavailable", zap.String("agent", id), zap.String("reason", why))
	}
}
