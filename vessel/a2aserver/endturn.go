package a2aserver

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// EndTurnBackoff are the waits between the attempts to end a turn's
// workspace: five attempts in about 2 s, within the loop's
// loop.EndTurnTimeout.
var EndTurnBackoff = []time.Duration{50 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond, 1200 * time.Millisecond}

// EndTurnAttempt bounds one attempt.
const EndTurnAttempt = 5 * time.Second

// retryingEnder ends a turn's workspace on its sandbox, trying again with
// backoff when the sandbox is busy or unreachable: a workspace left behind
// would hold its user's disk until the sweep (SweepTurns) or the sandbox's
// idle expiry. Each retry counts in vessel_turn_end_retries_total, each
// turn given up on in vessel_turn_end_failures_total, with a log line
// naming what is left.
type retryingEnder struct {
	inner    tools.TurnEnder
	backoff  []time.Duration
	retries  prometheus.Counter
	failures prometheus.Counter
	log      *zap.Logger
}

// EndTurn implements tools.TurnEnder.
func (e *retryingEnder) EndTurn(ctx context.Context, turnID string) error {
	var err error
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, EndTurnAttempt)
		err = e.inner.EndTurn(actx, turnID)
		cancel()
		if err == nil {
			if attempt > 0 {
				e.log.Info("ended the turn's workspace after retries", zap.String(telemetry.FieldTask, turnID), zap.Int("retries", attempt))
			}
			return nil
		}
		if attempt >= len(e.backoff) || !retryable(err) || !sleep(ctx, e.backoff[attempt]) {
			break
		}
		e.retries.Inc()
	}
	e.failures.Inc()
	e.log.Warn("could not end the turn's workspace; it stays on the sandbox until the turn sweep or the sandbox's idle expiry removes it",
		zap.String(telemetry.FieldTask, turnID), zap.Error(err))
	return err
}

// retryable says whether another attempt may succeed: not for a request
// the sandbox refused as such (bad id, wrong token).
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied, codes.Unimplemented:
		return false
	}
	return true
}

// sleep waits d, or reports false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
