package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// PushConfigs implements store.PushBackend with the store's shared
// implementation. A config wanting WORKING updates is known at once to this
// replica's store and announced to the others on commit (workingChannel);
// should the announcement miss, a replica running the task learns of it at
// the task's next write with pushes (a pause) or when it takes the task up.
func (db *DB) PushConfigs(agentID string) vstore.PushConfigStore {
	return vstore.NewPushConfigs(newPoolDB(db.pool), agentID, vstore.PushConfigHooks{
		// One config saver per task at a time, so the limit holds.
		LockTask: func(ctx context.Context, tx sqldb.Tx, agent string, taskID a2a.TaskID) error {
			_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(? || '/' || ?))`, agent, string(taskID))
			return err
		},
		// The replica running the task learns of the config at once (sent
		// on commit), not only at its next write with pushes.
		AnnounceWorking: func(ctx context.Context, tx sqldb.Tx, agent string, taskID a2a.TaskID) error {
			payload, ok := workingPayload(agent, taskID)
			if !ok {
				return nil
			}
			_, err := tx.Exec(ctx, `SELECT pg_notify(?, ?)`, workingChannel, payload)
			return err
		},
		SavedWorking: func(_ context.Context, taskID a2a.TaskID) { db.agentStore(agentID).WantWorking(taskID, time.Now()) },
	})
}

// Pool is the connection pool (the push outbox uses it).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// querier is the pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SetPushQueue implements store.PushQueuing.
func (db *DB) SetPushQueue(q vstore.PushQueue) { db.queue.Store(&q) }

// pushOf is the push of a write, nil for none or when none are enqueued.
func (db *DB) pushOf(event a2a.Event, task *a2a.Task) *vstore.Push {
	if db.queue.Load() == nil {
		return nil
	}
	return vstore.PushOf(event, task)
}

// withPush runs write, which reports whether it wrote the task's row.
// With a push, it runs in a transaction that, when the row was written,
// also enqueues the push for each of the task's configs it goes to
// (vstore.PushTargets) as they are in it: the status and its deliveries
// are committed together or not at all. seen, when not nil, is told what
// the configs were. How the write went is noted for Ping (noteWrite).
func (db *DB) withPush(ctx context.Context, p *vstore.Push, write func(ctx context.Context, q querier) (bool, error),
	agent string, taskID a2a.TaskID, seen *vstore.PushSeen) error {
	var wrote bool
	err := db.withPushTx(ctx, p, func(ctx context.Context, q querier) (bool, error) {
		w, err := write(ctx, q)
		wrote = w
		return w, err
	}, agent, taskID, seen)
	switch {
	case err == nil && wrote:
		db.noteWrite(nil)
	case refusesWrites(err):
		db.noteWrite(err)
	}
	return err
}

// withPushTx is withPush without the note.
func (db *DB) withPushTx(ctx context.Context, p *vstore.Push, write func(ctx context.Context, q querier) (bool, error),
	agent string, taskID a2a.TaskID, seen *vstore.PushSeen) error {
	qp := db.queue.Load()
	if p == nil || qp == nil {
		_, err := write(ctx, db.pool)
		return err
	}
	ctx, cancel := vstore.PushTxContext(ctx)
	defer cancel()
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		wrote, err := write(ctx, tx)
		if err != nil || !wrote {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT config FROM vessel_push_configs WHERE agent_id = $1 AND task_id = $2 ORDER BY created_at, id`,
			agent, string(taskID))
		if err != nil {
			return fmt.Errorf("list push configs: %w", err)
		}
		raws, err := sqldb.Collect[[]byte](rows, sqldb.Bytes)
		if err != nil {
			return fmt.Errorf("list push configs: %w", err)
		}
		return vstore.EnqueueStored(ctx, *qp, tx, agent, taskID, raws, []vstore.Push{*p}, seen)
	})
}

// workingChannel announces a push config wanting WORKING updates, so the
// replica running its task sends them from the next update on.
const workingChannel = "vessel_push_working"

// workingPayload is an announcement: agent and task, JSON; false when it
// would pass PostgreSQL's 8,000-byte payload limit (the running replica
// then learns at its next write with pushes, as without it).
func workingPayload(agent string, task a2a.TaskID) (string, bool) {
	b, err := json.Marshal(workingNote{Agent: agent, Task: string(task)})
	if err != nil || len(b) > 7900 {
		return "", false
	}
	return string(b), true
}

type workingNote struct {
	Agent string `json:"agent"`
	Task  string `json:"task"`
}

// learnWorking marks a task running here as wanting WORKING updates, from
// an announcement; a task not running here is left alone (its replica, or
// the one taking it up, reads the flag with the task).
func (db *DB) learnWorking(payload string) {
	var n workingNote
	if json.Unmarshal([]byte(payload), &n) != nil || n.Agent == "" || n.Task == "" {
		return
	}
	db.mu.Lock()
	s := db.stores[n.Agent]
	db.mu.Unlock()
	if s == nil {
		return
	}
	s.LearnWorking(a2a.TaskID(n.Task))
}
