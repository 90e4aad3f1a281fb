package outbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
)

type worker struct {
	river.WorkerDefaults[Args]
	o *Outbox
}

func (w *worker) Timeout(*river.Job[Args]) time.Duration { return w.o.cfg.Timeout }

// Work delivers one job: after every earlier job of its key is done, to
// the config as it is now, if its owner's grant still allows it.
func (w *worker) Work(ctx context.Context, job *river.Job[Args]) error {
	cfg := &w.o.cfg
	a := job.Args
	log := cfg.Log.With(zap.String("agent", a.Agent), zap.String("task", a.Task), zap.String("push_config", a.Config),
		zap.String("delivery_id", a.DeliveryID), zap.Int("attempt", job.Attempt))
	if age := time.Since(job.CreatedAt); age > cfg.MaxAge {
		log.Error("push delivery given up: older than the maximum age", zap.Duration("age", age))
		cfg.Observe("dead")
		return river.JobCancel(fmt.Errorf("older than the maximum age %s", cfg.MaxAge))
	}
	// In order per key: wait a little for an earlier delivery to end
	// (they are fetched first), else snooze and come back.
	for wait := time.Duration(0); ; wait += cfg.OrderSnooze / 4 {
		earlier, err := w.o.list(ctx, river.NewJobListParams().Kinds(Kind).
			States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
				rivertype.JobStateRunning, rivertype.JobStateScheduled).
			Where("args ->> 'key' = @key AND id < @id", river.NamedArgs{"key": a.Key, "id": job.ID}).First(1))
		if err != nil {
			return fmt.Errorf("look for earlier deliveries: %w", err)
		}
		if len(earlier.Jobs) == 0 {
			break
		}
		if wait >= cfg.OrderSnooze || earlier.Jobs[0].State != rivertype.JobStateRunning {
			return river.JobSnooze(cfg.OrderSnooze)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(cfg.OrderSnooze / 4):
		}
	}
	pc, owner, err := cfg.Configs(a.Agent).Lookup(ctx, a2a.TaskID(a.Task), a.Config)
	if err != nil {
		if isNotFound(err) {
			log.Info("push delivery dropped: the config was deleted")
			cfg.Observe("dropped")
			return river.JobCancel(fmt.Errorf("%w: %w", ErrGone, err))
		}
		return fmt.Errorf("read push config: %w", err)
	}
	pol, err := cfg.Policy(owner)
	if err != nil {
		cfg.Observe("dead")
		log.Error("push delivery given up: the owner has no webhook grant now", zap.Error(err))
		return river.JobCancel(err)
	}
	route, err := pol.Check(pc.URL)
	if err != nil {
		cfg.Observe("dead")
		log.Error("push delivery given up: the webhook is outside the owner's grant now", zap.Error(err))
		return river.JobCancel(err)
	}
	err = cfg.Deliver(ctx, route, pc, a, job.Attempt)
	switch {
	case err == nil:
		cfg.Observe("delivered")
		return nil
	case errors.Is(err, dest.ErrRefused) || errors.Is(err, ErrPermanent):
		cfg.Observe("dead")
		log.Error("push delivery given up", zap.Error(err))
		return river.JobCancel(err)
	case job.Attempt >= job.MaxAttempts:
		cfg.Observe("dead")
		log.Error("push delivery given up: out of attempts", zap.Error(err))
		return err
	default:
		cfg.Observe("retry")
		log.Warn("push delivery failed; retrying", zap.Error(err))
		return err
	}
}

func isNotFound(err error) bool {
	return errors.Is(err, push.ErrPushConfigNotFound)
}
