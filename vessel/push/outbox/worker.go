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
	// (they are fetched first), woken when one ends here, else snooze and
	// come back. Whatever this job's end, every job of its key up to it
	// has then ended (doneKeys).
	k := w.o.done.acquire(a.Key)
	defer w.o.done.release(a.Key, k)
	poll := firstOrderPoll
	for waited := time.Duration(0); ; {
		upTo, wake := w.o.done.state(k)
		earlier, err := w.o.list(ctx, river.NewJobListParams().Kinds(Kind).
			States(rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
				rivertype.JobStateRunning, rivertype.JobStateScheduled).
			Where("args ->> 'key' = @key AND id < @id AND id > @upto", river.NamedArgs{"key": a.Key, "id": job.ID, "upto": upTo}).First(1))
		if err != nil {
			return fmt.Errorf("look for earlier deliveries: %w", err)
		}
		if len(earlier.Jobs) == 0 {
			break
		}
		if e := earlier.Jobs[0]; waited >= cfg.OrderSnooze || e.State != rivertype.JobStateRunning {
			return river.JobSnooze(orderSnooze(e, cfg.OrderSnooze, time.Now()))
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-time.After(poll):
			poll = min(2*poll, cfg.OrderSnooze/4)
		}
		waited += time.Since(start)
	}
	err := w.deliver(ctx, job, log)
	if !isRetry(err) {
		w.o.done.ended(k, job.ID)
	}
	return err
}

// isRetry reports whether Work's result makes River try the job again:
// an error that is not a cancel (a snooze never reaches here).
func isRetry(err error) bool {
	var cancel *rivertype.JobCancelError
	return err != nil && !errors.As(err, &cancel)
}

// deliver sends one job once its turn in the key's order has come.
func (w *worker) deliver(ctx context.Context, job *river.Job[Args], log *zap.Logger) error {
	cfg := &w.o.cfg
	a := job.Args
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
