// Package outbox delivers push notifications at least once. Each status
// change a config wants becomes a River job in the task store (SQLite or
// PostgreSQL), inserted by the store in the transaction that writes the
// status (EnqueueTx, store.PushQueuing); workers POST it to the
// webhook with exponential backoff and jitter, a per-attempt timeout and a
// maximum age, in order per task and config. Jobs survive a restart, and
// across replicas River hands each job to one worker at a time. A job that
// runs out of time or attempts stays in River's table as cancelled or
// discarded: the dead letters (Dead).
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/vessel/internal/backoff"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// Kind is the River job kind of a delivery.
const Kind = "vessel_push_delivery"

// Queue is the River queue deliveries run on.
const Queue = "vessel_push"

// Defaults.
const (
	DefaultTimeout     = 15 * time.Second
	MinTimeout         = 10 * time.Second
	MaxTimeout         = 30 * time.Second
	DefaultMaxAge      = 24 * time.Hour
	DefaultMaxAttempts = 100
	DefaultWorkers     = 16
	DefaultBackoffBase = time.Second
	DefaultBackoffCap  = 10 * time.Minute
)

// Args is one delivery: the StreamResponse JSON of an event for one
// config of one task.
type Args struct {
	Agent  string `json:"agent"`
	Task   string `json:"task"`
	Config string `json:"config"`
	// Key orders deliveries: one key per agent, task and config.
	Key string `json:"key"`
	// DeliveryID is sent as DeliveryIDHeader on every attempt.
	DeliveryID string `json:"delivery_id"`
	// State is the task state the event reports.
	State string          `json:"state"`
	Body  json.RawMessage `json:"body"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return Kind }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (Args) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Queue} }

// Config configures an Outbox.
type Config struct {
	// Configs gives an agent's push config store (the delivery reads the
	// config again: a deleted config is not delivered to).
	Configs func(agent string) store.PushConfigStore
	// Policy gives where the owner's webhooks may point now (the grant
	// is checked again on delivery).
	Policy func(owner string) (dest.Policy, error)
	// Deliver sends one attempt (Deliverer.Deliver).
	Deliver func(ctx context.Context, route dest.Route, cfg *a2a.PushConfig, a Args, attempt int) error
	// Timeout bounds each attempt; clamped to 10–30 s.
	Timeout time.Duration
	// MaxAge is how long a delivery is tried; default 24 h.
	MaxAge      time.Duration
	MaxAttempts int
	Workers     int
	// BackoffBase and BackoffCap shape the retry delays: base·2^(n-1),
	// at most the cap, with ±25% jitter.
	BackoffBase, BackoffCap time.Duration
	// OrderSnooze is how long a delivery waits for an earlier one of its
	// key; default 1 s.
	OrderSnooze time.Duration
	// RescueAfter is when a job left running by a replica that died is
	// run again; default twice the timeout plus a minute.
	RescueAfter time.Duration
	// PollInterval is how often River polls for jobs (SQLite has no
	// notifications); default 1 s.
	PollInterval time.Duration
	Log          *zap.Logger
	// Observe is told of each attempt's outcome ("delivered", "retry",
	// "dead", "dropped"); nil ignores them.
	Observe func(outcome string)
}

func (c *Config) defaults() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	c.Timeout = min(max(c.Timeout, MinTimeout), MaxTimeout)
	if c.MaxAge <= 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffCap <= 0 {
		c.BackoffCap = DefaultBackoffCap
	}
	if c.OrderSnooze <= 0 {
		c.OrderSnooze = time.Second
	}
	if c.RescueAfter <= 0 {
		c.RescueAfter = 2*c.Timeout + time.Minute
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	if c.Observe == nil {
		c.Observe = func(string) {}
	}
}

// Backoff is the delay before retry number attempt (1 = the first retry):
// exponential from base up to limit, with ±25% jitter.
func Backoff(attempt int, base, limit time.Duration) time.Duration {
	return backoff.Delay(attempt, base, limit)
}

type retryPolicy struct{ base, limit time.Duration }

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(Backoff(job.Attempt, p.base, p.limit))
}

// Dead is a delivery that was given up.
type Dead struct {
	JobID      int64
	Agent      string
	Task       string
	Config     string
	DeliveryID string
	State      string
	Attempts   int
	Created    time.Time
	Finalized  time.Time
	LastError  string
}

// Outbox is the running delivery queue.
type Outbox struct {
	cfg    Config
	insert func(ctx context.Context, a Args) error
	// insertTx inserts in a transaction of the driver's kind.
	insertTx func(ctx context.Context, tx any, as []Args) error
	start    func(ctx context.Context) error
	stop     func(ctx context.Context) error
	list     func(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error)
	done     doneKeys // per key, the jobs that ended here (order.go)
}

// ErrGone means the config or its grant is gone: the delivery is dropped.
var ErrGone = errors.New("push config gone")

// Start begins delivering.
func (o *Outbox) Start(ctx context.Context) error {
	if err := o.start(ctx); err != nil {
		return fmt.Errorf("push outbox: start: %w", err)
	}
	return nil
}

// Stop stops delivering, letting attempts in flight end (bounded by ctx).
func (o *Outbox) Stop(ctx context.Context) error {
	if err := o.stop(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("push outbox: stop: %w", err)
	}
	return nil
}

// EnqueueTx implements store.PushQueue: it inserts in tx, the task
// store's own transaction writing the status (a *sql.Tx on SQLite, a
// pgx.Tx on PostgreSQL), one delivery of the event for each config, so
// that the status and its notifications are committed together or not at
// all. Each delivery gets a new id.
func (o *Outbox) EnqueueTx(ctx context.Context, tx any, agent string, cfgs []*a2a.PushConfig, p store.Push) error {
	if len(cfgs) == 0 {
		return nil
	}
	body, err := json.Marshal(a2a.StreamResponse{Event: p.Event})
	if err != nil {
		return fmt.Errorf("push outbox: encode event: %w", err)
	}
	as := make([]Args, 0, len(cfgs))
	for _, cfg := range cfgs {
		as = append(as, Args{Agent: agent, Task: string(cfg.TaskID), Config: cfg.ID, Key: orderKey(agent, string(cfg.TaskID), cfg.ID),
			DeliveryID: uuid.NewString(), State: string(p.State), Body: body})
	}
	if err := o.insertTx(ctx, tx, as); err != nil {
		return fmt.Errorf("push outbox: enqueue: %w", err)
	}
	return nil
}

// EnqueueSelfFailed enqueues, for each task the store failed itself (no
// turn told its configs: store.SelfFailures), the failed status to every
// config of the task, as SendPush does for a turn's end, then drops the
// task's mark. Its delivery ids are derived from the task, config and
// state, so a crash between the enqueue and the drop repeats a delivery
// only with the same id. It returns how many deliveries it enqueued.
func (o *Outbox) EnqueueSelfFailed(ctx context.Context, src store.SelfFailures) (int, error) {
	n := 0
	for {
		batch, err := src.SelfFailed(ctx, 100)
		if err != nil {
			return n, fmt.Errorf("push outbox: %w", err)
		}
		if len(batch) == 0 {
			return n, nil
		}
		for _, f := range batch {
			cfgs, err := o.cfg.Configs(f.Agent).List(ctx, f.Task.ID)
			if err != nil {
				return n, fmt.Errorf("push outbox: configs of self-failed task %s: %w", f.Task.ID, err)
			}
			ev := &a2a.TaskStatusUpdateEvent{TaskID: f.Task.ID, ContextID: f.Task.ContextID, Status: f.Task.Status}
			body, err := json.Marshal(a2a.StreamResponse{Event: ev})
			if err != nil {
				return n, fmt.Errorf("push outbox: encode self-failed task %s: %w", f.Task.ID, err)
			}
			for _, cfg := range cfgs {
				key := orderKey(f.Agent, string(f.Task.ID), cfg.ID)
				a := Args{Agent: f.Agent, Task: string(f.Task.ID), Config: cfg.ID, Key: key,
					DeliveryID: uuid.NewSHA1(selfFailedSpace, []byte(key+string(ev.Status.State))).String(),
					State:      string(ev.Status.State), Body: body}
				if err := o.insert(ctx, a); err != nil {
					return n, fmt.Errorf("push outbox: enqueue: %w", err)
				}
				n++
			}
			if err := src.SelfFailedDone(ctx, f.Agent, f.Task.ID); err != nil {
				return n, fmt.Errorf("push outbox: %w", err)
			}
		}
	}
}

// selfFailedSpace names the delivery ids of EnqueueSelfFailed.
var selfFailedSpace = uuid.MustParse("6f1d0c3e-9a55-4f7e-8b1e-3c2a8d4b5e60")

// Pending counts deliveries not yet done (waiting, retrying or running).
func (o *Outbox) Pending(ctx context.Context) (int, error) {
	n := 0
	p := river.NewJobListParams().Kinds(Kind).States(rivertype.JobStateAvailable, rivertype.JobStatePending,
		rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled).First(10000)
	for {
		res, err := o.list(ctx, p)
		if err != nil {
			return 0, fmt.Errorf("push outbox: list: %w", err)
		}
		n += len(res.Jobs)
		if len(res.Jobs) == 0 || res.LastCursor == nil {
			return n, nil
		}
		p = p.After(res.LastCursor)
	}
}

// Dead lists deliveries given up (cancelled: too old, or refused for good;
// discarded: out of attempts), newest first, at most limit.
func (o *Outbox) Dead(ctx context.Context, limit int) ([]Dead, error) {
	if limit <= 0 {
		limit = 100
	}
	res, err := o.list(ctx, river.NewJobListParams().Kinds(Kind).
		States(rivertype.JobStateCancelled, rivertype.JobStateDiscarded).
		OrderBy(river.JobListOrderByFinalizedAt, river.SortOrderDesc).First(limit))
	if err != nil {
		return nil, fmt.Errorf("push outbox: list dead letters: %w", err)
	}
	out := make([]Dead, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		var a Args
		_ = json.Unmarshal(j.EncodedArgs, &a)
		d := Dead{JobID: j.ID, Agent: a.Agent, Task: a.Task, Config: a.Config, DeliveryID: a.DeliveryID, State: a.State,
			Attempts: j.Attempt, Created: j.CreatedAt}
		if j.FinalizedAt != nil {
			d.Finalized = *j.FinalizedAt
		}
		if n := len(j.Errors); n > 0 {
			d.LastError = j.Errors[n-1].Error
		}
		out = append(out, d)
	}
	return out, nil
}

// orderKey names an agent, task and config unambiguously (length
// prefixed; PostgreSQL's jsonb holds no NUL to separate them with).
func orderKey(agent, task, config string) string {
	return fmt.Sprintf("%d:%s%d:%s%s", len(agent), agent, len(task), task, config)
}
