package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/google/uuid"

	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// MaxPushConfigsPerTask is how many push configs one task may have.
const MaxPushConfigsPerTask = 10

// ErrTooManyPushConfigs is returned by Save beyond MaxPushConfigsPerTask.
var ErrTooManyPushConfigs = fmt.Errorf("a task may have at most %d push notification configs: %w", MaxPushConfigsPerTask, a2a.ErrInvalidParams)

// PushConfigStore keeps an agent's push configs (push.ConfigStore), bound
// to the caller as tasks are: a call with an owner sees only its own
// configs. Lookup serves the delivery, which runs on no caller's behalf.
type PushConfigStore interface {
	push.ConfigStore
	// SaveWith is Save with the vessel's own options, kept beside the
	// config (Get and List return the A2A config alone).
	SaveWith(ctx context.Context, taskID a2a.TaskID, c *a2a.PushConfig, opt SaveOptions) (*a2a.PushConfig, error)
	// Lookup returns a config and its owner; push.ErrPushConfigNotFound
	// when it is gone.
	Lookup(ctx context.Context, taskID a2a.TaskID, configID string) (*a2a.PushConfig, string, error)
}

// PushBackend is a backend that keeps push configs (both do).
type PushBackend interface {
	PushConfigs(agentID string) PushConfigStore
}

// SelfFailed is a task the store failed itself, with no turn to tell its
// push configs: one left unfinished at a restart (SQLite), or one of a
// dead replica failed by the lease reaper (PostgreSQL).
type SelfFailed struct {
	Agent string
	Task  *a2a.Task
}

// SelfFailures is a backend that keeps a mark, written with the failure,
// on each task it failed itself that has push configs, until the push
// outbox took its notifications (outbox.Outbox.EnqueueSelfFailed).
type SelfFailures interface {
	// SelfFailed returns up to limit marked tasks, oldest first; a mark
	// whose task is gone (expired) is dropped.
	SelfFailed(ctx context.Context, limit int) ([]SelfFailed, error)
	// SelfFailedDone removes a task's mark once its pushes are enqueued.
	SelfFailedDone(ctx context.Context, agent string, taskID a2a.TaskID) error
}

// SelfFailed implements SelfFailures.
func (b *sqliteBackend) SelfFailed(ctx context.Context, limit int) ([]SelfFailed, error) {
	rows, err := sqldb.SQL(b.db).Query(ctx, `SELECT m.agent_id, m.task_id, t.task FROM vessel_self_failed m
		LEFT JOIN vessel_tasks t ON t.agent_id = m.agent_id AND t.id = m.task_id
		ORDER BY m.created_at, m.agent_id, m.task_id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list self-failed tasks: %w", err)
	}
	out, err := sqldb.Collect(rows, ScanSelfFailedMark)
	if err != nil {
		return nil, fmt.Errorf("list self-failed tasks: %w", err)
	}
	return ResolveSelfFailed(ctx, out, slog.Default().With("component", "store/sqlite"), b.SelfFailedDone)
}

// SelfFailedDone implements SelfFailures.
func (b *sqliteBackend) SelfFailedDone(ctx context.Context, agent string, taskID a2a.TaskID) error {
	if _, err := b.db.ExecContext(ctx, `DELETE FROM vessel_self_failed WHERE agent_id=? AND task_id=?`, agent, string(taskID)); err != nil {
		return fmt.Errorf("drop self-failed mark of %s of %s: %w", taskID, agent, err)
	}
	return nil
}

// DB gives the SQLite backend's database (the push outbox lives in it).
type DB interface {
	SQLDB() *sql.DB
	Path() string
}

// PushConfigs implements PushBackend.
func (b *sqliteBackend) PushConfigs(agentID string) PushConfigStore {
	return NewPushConfigs(sqldb.SQL(b.db), agentID, PushConfigHooks{
		// One writer at a time (_txlock=immediate) keeps the limit.
		CreatedAt: func() any { return b.opt.Now().UnixNano() },
		SavedWorking: func(ctx context.Context, taskID a2a.TaskID) {
			if st, err := b.open(ctx, agentID); err == nil {
				st.WantWorking(taskID, b.opt.Now())
			}
		},
	})
}

// SQLDB implements DB.
func (b *sqliteBackend) SQLDB() *sql.DB { return b.db }

// Path implements DB.
func (b *sqliteBackend) Path() string { return b.path }

// PushWorkingURI is the A2A extension a client requests (A2A-Extensions)
// when it registers a push config to be told of every WORKING status
// update of the task too, not only of its terminal and interrupted states.
const PushWorkingURI = webhook.WorkingExtension

// PushWorkingExtension is the extension as the agent card declares it.
func PushWorkingExtension() a2a.AgentExtension {
	return a2a.AgentExtension{
		URI: PushWorkingURI,
		Description: "Push notification configs registered with this extension requested (CreateTaskPushNotificationConfig, " +
			"or SendMessage with configuration.pushNotificationConfig) are also sent every WORKING status update of the task, " +
			"in order, besides its terminal and interrupted states.",
		Required: false,
	}
}

// MaxWorkingPushesPerTurn bounds the WORKING status updates pushed per
// task between two other states (a turn): later ones are not pushed until
// the task leaves WORKING; terminal and interrupted states always are.
const MaxWorkingPushesPerTurn = 1000

// SaveOptions are the vessel's own settings of a push config.
type SaveOptions struct {
	// Working: the config is sent every WORKING status update too (the
	// PushWorkingURI extension).
	Working bool
}

// WorkingMember is the stored config's own member holding SaveOptions.Working
// (an A2A PushConfig has no such field; decoding into one drops it).
const WorkingMember = "vesselWorkingUpdates"

// EncodePushConfigWith is the stored form of a config with its options.
func EncodePushConfigWith(c *a2a.PushConfig, opt SaveOptions) ([]byte, error) {
	b, err := EncodePushConfig(c)
	if err != nil || !opt.Working {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("encode push config: %w", err)
	}
	m[WorkingMember] = json.RawMessage("true")
	if b, err = json.Marshal(m); err != nil {
		return nil, fmt.Errorf("encode push config: %w", err)
	}
	return b, nil
}

// DecodePushConfigWith reads EncodePushConfigWith's form.
func DecodePushConfigWith(raw []byte) (*a2a.PushConfig, SaveOptions, error) {
	c, err := DecodePushConfig(raw)
	if err != nil {
		return nil, SaveOptions{}, err
	}
	// The member is written by EncodePushConfigWith as is, never escaped:
	// a config without it needs no second read (this runs for each config
	// on each WORKING update of a task that wants them).
	if !bytes.Contains(raw, []byte(WorkingMember)) {
		return c, SaveOptions{}, nil
	}
	var o struct {
		Working bool `json:"vesselWorkingUpdates"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, SaveOptions{}, fmt.Errorf("decode push config: %w", err)
	}
	return c, SaveOptions{Working: o.Working}, nil
}

// StoredPushConfig is a config as the store holds it.
type StoredPushConfig struct {
	Config *a2a.PushConfig
	SaveOptions
}

// PushTargets are the configs a push goes to: all of them for a terminal
// or interrupted state, those with Working for a WORKING update.
func PushTargets(cfgs []StoredPushConfig, p Push) []*a2a.PushConfig {
	out := make([]*a2a.PushConfig, 0, len(cfgs))
	for _, c := range cfgs {
		if p.State != a2a.TaskStateWorking || c.Working {
			out = append(out, c.Config)
		}
	}
	return out
}

// AnyWorking reports whether a config wants WORKING updates.
func AnyWorking(cfgs []StoredPushConfig) bool {
	for _, c := range cfgs {
		if c.Working {
			return true
		}
	}
	return false
}

// WorkingPush is the push of a WORKING status update stored in a WORKING
// task, nil for any other event: what configs with Working are sent
// besides PushOf's.
func WorkingPush(event a2a.Event, task *a2a.Task) *Push {
	e, ok := event.(*a2a.TaskStatusUpdateEvent)
	if !ok || task == nil || e.Status.State != a2a.TaskStateWorking || task.Status.State != a2a.TaskStateWorking {
		return nil
	}
	return &Push{State: a2a.TaskStateWorking, Event: e}
}

// WantTTL is how long a config wanting WORKING updates waits for its task
// to be running in a store (SendMessage saves the config before the task
// exists; a refused message never creates it).
const WantTTL = 10 * time.Minute

// WorkingWants are the tasks not running in a store yet that were given a
// config wanting WORKING updates, each for WantTTL. The store's mutex
// guards it. Old entries are dropped at most once a minute, so a note costs
// O(1) however many there are.
type WorkingWants struct {
	at     map[a2a.TaskID]time.Time
	pruned time.Time
}

// Add notes that task id was given such a config at now.
func (w *WorkingWants) Add(id a2a.TaskID, now time.Time) {
	if w.at == nil {
		w.at = map[a2a.TaskID]time.Time{}
	}
	if now.Sub(w.pruned) >= time.Minute {
		w.pruned = now
		for t, at := range w.at {
			if now.Sub(at) > WantTTL {
				delete(w.at, t)
			}
		}
	}
	w.at[id] = now
}

// Take reports, and forgets, whether task id was given such a config
// within WantTTL of now.
func (w *WorkingWants) Take(id a2a.TaskID, now time.Time) bool {
	at, ok := w.at[id]
	if ok {
		delete(w.at, id)
	}
	return ok && now.Sub(at) <= WantTTL
}

// Len is how many are noted (the tests read it).
func (w *WorkingWants) Len() int { return len(w.at) }

// WorkingTurn tracks, for a task running in a store, whether its configs
// want WORKING updates and how many were pushed in the current turn.
type WorkingTurn struct {
	on   bool // a config with Working is (or was, until the next write with pushes) there
	sent int  // WORKING pushes in this turn
	capd bool // the cap was logged
}

// Next returns, for an update, the WORKING push it is worth (nil for none: no config wants it, not a WORKING status update,
// or the turn's cap reached), and counts it. A state other than WORKING
// starts a new turn.
func (w *WorkingTurn) Next(event a2a.Event, task *a2a.Task, agent string) *Push {
	if task != nil && task.Status.State != a2a.TaskStateWorking {
		w.sent, w.capd = 0, false
	}
	if !w.on {
		return nil
	}
	p := WorkingPush(event, task)
	if p == nil {
		return nil
	}
	if w.sent >= MaxWorkingPushesPerTurn {
		if !w.capd {
			w.capd = true
			slog.Default().Warn("working updates of this turn are no longer pushed: the cap per turn is reached; its end will be",
				"component", "store", "agent", agent, "task", string(task.ID), "cap", MaxWorkingPushesPerTurn)
		}
		return nil
	}
	w.sent++
	return p
}

// On marks that a config wants WORKING updates.
func (w *WorkingTurn) On() { w.on = true }

// Seen records what a write with pushes found among the task's configs.
func (w *WorkingTurn) Seen(s PushSeen) {
	if s.Known {
		w.on = s.Working
	}
}

// PushSeen is what a write with pushes found: Known once the task's
// configs were read, Working when one of them wants WORKING updates.
type PushSeen struct{ Known, Working bool }

// EncodePushConfig is the stored form of a config (task id and id are in
// their own columns too).
func EncodePushConfig(c *a2a.PushConfig) ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode push config: %w", err)
	}
	return b, nil
}

// DecodePushConfig reads EncodePushConfig's form.
func DecodePushConfig(raw []byte) (*a2a.PushConfig, error) {
	var c a2a.PushConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("decode push config: %w", err)
	}
	return &c, nil
}

// PreparePushConfig copies c for storing under taskID, giving it an id
// when it has none.
func PreparePushConfig(taskID a2a.TaskID, c *a2a.PushConfig) (*a2a.PushConfig, error) {
	if c == nil {
		return nil, fmt.Errorf("no push config: %w", a2a.ErrInvalidParams)
	}
	if taskID == "" {
		return nil, fmt.Errorf("push config without a task id: %w", a2a.ErrInvalidParams)
	}
	cp := *c
	cp.TaskID = taskID
	if cp.ID == "" {
		cp.ID = uuid.NewString()
	}
	if len(cp.ID) > 256 {
		return nil, fmt.Errorf("push config id is %d bytes, longer than 256: %w", len(cp.ID), a2a.ErrInvalidParams)
	}
	return &cp, nil
}

// PushWorthy reports whether an event is pushed to its task's configs,
// and the state it reports: every status change to a terminal or
// interrupted state (input or auth required), and a task snapshot in such
// a state. Working updates (text pieces, tool events) are not pushed by
// this rule: WorkingPush is the one for configs that want them.
func PushWorthy(event a2a.Event) (a2a.TaskState, bool) {
	var st a2a.TaskState
	switch e := event.(type) {
	case *a2a.TaskStatusUpdateEvent:
		st = e.Status.State
	case *a2a.Task:
		st = e.Status.State
	default:
		return "", false
	}
	return st, st.Terminal() || st == a2a.TaskStateInputRequired || st == a2a.TaskStateAuthRequired
}

// Push is an event a task's push configs are told of.
type Push struct {
	State a2a.TaskState
	// Event is sent as the body's StreamResponse.
	Event a2a.Event
}

// PushQueue inserts push deliveries inside a task store's own
// transaction (the push outbox, outbox.Outbox), so that a status and the
// notifications of it are stored together or not at all.
type PushQueue interface {
	// EnqueueTx inserts in tx one delivery of p for each config. tx is the
	// store's transaction: a *sql.Tx (SQLite) or a pgx.Tx (PostgreSQL).
	EnqueueTx(ctx context.Context, tx any, agent string, cfgs []*a2a.PushConfig, p Push) error
}

// PushQueuing is a backend that enqueues, in the transaction writing a
// task's status, the pushes the status change is worth (both backends).
// Until SetPushQueue is called nothing is enqueued.
type PushQueuing interface {
	SetPushQueue(q PushQueue)
}

// PushOf is the push a stored update is worth, nil for none: the event
// when it is push-worthy and reports the state the task is stored in;
// otherwise, when the task reached a terminal state through no event of
// its own (the SDK fails a task whose event it could not process or
// store, handing on that event or none), a status update of the stored
// status. The event is not copied: it must not change afterwards (the SDK
// hands events to subscribers read-only).
func PushOf(event a2a.Event, task *a2a.Task) *Push {
	if task == nil {
		return nil
	}
	st := task.Status.State
	if est, ok := PushWorthy(event); ok && est == st {
		return &Push{State: st, Event: event}
	}
	if !st.Terminal() {
		return nil
	}
	return &Push{State: st, Event: &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: task.Status}}
}

// TimeoutPushTx bounds a transaction that stores a status with its
// pushes. It runs without the caller's cancellation: a turn cancelled
// while its end is being stored still has it stored and told.
const TimeoutPushTx = 30 * time.Second

// PushTxContext is the context of such a transaction.
func PushTxContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), TimeoutPushTx)
}

// SetPushQueue implements PushQueuing.
func (b *sqliteBackend) SetPushQueue(q PushQueue) { b.queue.Store(&q) }

// pushQueue is the queue set, nil before.
func (b *sqliteBackend) pushQueue() PushQueue {
	if q := b.queue.Load(); q != nil {
		return *q
	}
	return nil
}

// sqliteListConfigs lists a task's push configs in the order they were
// created (sqliteBackend.listConfigs).
const sqliteListConfigs = `SELECT config FROM vessel_push_configs WHERE agent_id=? AND task_id=? ORDER BY created_at, id`

// enqueueTx enqueues, in tx, the pushes of a task to its configs as they
// are in tx, and tells what it found in seen (nil: not wanted).
func (b *sqliteBackend) enqueueTx(ctx context.Context, tx *sql.Tx, agent string, taskID a2a.TaskID, pushes []Push, seen *PushSeen) error {
	q := b.pushQueue()
	if q == nil || len(pushes) == 0 {
		return nil
	}
	rows, err := tx.StmtContext(ctx, b.listConfigs).QueryContext(ctx, agent, string(taskID))
	if err != nil {
		return fmt.Errorf("list push configs: %w", err)
	}
	raws, err := sqldb.Collect(sqldb.SQLRows(rows), sqldb.Bytes)
	if err != nil {
		return fmt.Errorf("list push configs: %w", err)
	}
	return EnqueueStored(ctx, q, tx, agent, taskID, raws, pushes, seen)
}

// EnqueueStored enqueues, in tx, each push to those of a task's configs
// (raws, as stored, in order) that want it, and tells what it found in
// seen (nil: not wanted): what both backends do once they read the rows.
func EnqueueStored(ctx context.Context, q PushQueue, tx any, agent string, taskID a2a.TaskID, raws [][]byte, pushes []Push, seen *PushSeen) error {
	cfgs := make([]StoredPushConfig, 0, len(raws))
	for _, raw := range raws {
		c, opt, err := DecodePushConfigWith(raw)
		if err != nil {
			return err
		}
		cfgs = append(cfgs, StoredPushConfig{Config: c, SaveOptions: opt})
	}
	if seen != nil {
		*seen = PushSeen{Known: true, Working: AnyWorking(cfgs)}
	}
	for _, p := range pushes {
		to := PushTargets(cfgs, p)
		if len(to) == 0 {
			continue
		}
		if err := q.EnqueueTx(ctx, tx, agent, to, p); err != nil {
			return fmt.Errorf("enqueue push of task %s: %w", taskID, err)
		}
	}
	return nil
}
