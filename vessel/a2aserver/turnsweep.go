package a2aserver

import (
	"context"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/uuid"
	"go.uber.org/zap"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TurnLister is a sandbox that lists its live turns (tools.Sandbox is).
type TurnLister interface {
	ListTurns(ctx context.Context) ([]*sandboxv1.TurnInfo, error)
}

// StaleTurnIdle is how long a turn with no running call must have been
// idle before the sweep looks at its task: long enough that a turn whose
// task is still being created is never taken for an abandoned one.
const StaleTurnIdle = 30 * time.Second

// DefaultTurnSweep is how often the sandboxes' turns are swept.
const DefaultTurnSweep = time.Minute

// SweepTurns ends, on every sandbox, the turns that no vessel runs any
// more: those whose task is finished or unknown, left by a vessel that
// crashed or restarted before it could end them. Their workspaces would
// otherwise count against their users' disk limits until the sandbox's
// idle TTL. A turn this vessel runs, one with a running call, one idle for
// less than StaleTurnIdle, one not named like a task, or one whose task
// cannot be read, is kept.
func (s *Server) SweepTurns(ctx context.Context) {
	for _, id := range s.order {
		a := s.agents[id]
		lister, ok := a.sandbox.(TurnLister)
		if !ok {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, StatusTimeout)
		turns, err := lister.ListTurns(lctx)
		cancel()
		if err != nil {
			s.log.Debug("could not list the sandbox's turns", zap.String("agent", id), zap.Error(err))
			continue
		}
		for _, ti := range turns {
			if !s.abandoned(ctx, a, ti) {
				continue
			}
			ectx, cancel := context.WithTimeout(ctx, StatusTimeout)
			err := a.sandbox.EndTurn(ectx, ti.GetTurnId())
			cancel()
			log := s.log.With(zap.String("agent", id), zap.String(telemetry.FieldTask, ti.GetTurnId()),
				zap.String("owner", ti.GetOwner()), zap.Int64("usage_bytes", ti.GetUsageBytes()))
			if err != nil {
				log.Warn("could not end an abandoned turn on its sandbox", zap.Error(err))
				continue
			}
			log.Info("ended an abandoned turn on its sandbox")
		}
	}
}

// abandoned reports whether no vessel runs the turn any more.
func (s *Server) abandoned(ctx context.Context, a *agent, ti *sandboxv1.TurnInfo) bool {
	if ti.GetRunningCalls() > 0 || time.Duration(ti.GetIdleMs())*time.Millisecond < StaleTurnIdle {
		return false
	}
	// A vessel's turns are its tasks, whose ids the SDK makes as UUIDs; a
	// turn named otherwise (an operator's probe) is none of its business.
	if u, err := uuid.Parse(ti.GetTurnId()); err != nil || u.String() != ti.GetTurnId() {
		return false
	}
	// Running here, or paused here for approval: its workspace is kept
	// (the pause is bounded by the approval timeout).
	if a.exec.holds(ti.GetTurnId()) {
		return false
	}
	// Tasks are bound to their owners: read it as the turn's owner.
	octx, cc := a2asrv.NewCallContext(ctx, nil)
	cc.User = a2asrv.NewAuthenticatedUser(ti.GetOwner(), nil)
	st, err := s.cfg.Store.Agent(a.conf.ID).Get(octx, a2a.TaskID(ti.GetTurnId()))
	switch {
	case errors.Is(err, a2a.ErrTaskNotFound):
		return true
	case err != nil:
		return false // the store cannot tell: keep it
	}
	return st.Task.Status.State.Terminal()
}
