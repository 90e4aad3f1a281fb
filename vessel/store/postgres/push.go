package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// PushConfigs implements store.PushBackend.
func (db *DB) PushConfigs(agentID string) vstore.PushConfigStore {
	return &pushStore{db: db, agent: agentID}
}

// Pool is the connection pool (the push outbox uses it).
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

type pushStore struct {
	db    *DB
	agent string
}

func (s *pushStore) Save(ctx context.Context, taskID a2a.TaskID, c *a2a.PushConfig) (*a2a.PushConfig, error) {
	return s.SaveWith(ctx, taskID, c, vstore.SaveOptions{})
}

// SaveWith implements store.PushConfigStore. A config wanting WORKING
// updates is known at once to this replica's store and announced to the
// others on commit (workingChannel); should the announcement miss, a
// replica running the task learns of it at the task's next write with
// pushes (a pause) or when it takes the task up.
func (s *pushStore) SaveWith(ctx context.Context, taskID a2a.TaskID, c *a2a.PushConfig, opt vstore.SaveOptions) (*a2a.PushConfig, error) {
	owner, err := vstore.Owner(ctx)
	if err != nil {
		return nil, err
	}
	cp, err := vstore.PreparePushConfig(taskID, c)
	if err != nil {
		return nil, err
	}
	raw, err := vstore.EncodePushConfigWith(cp, opt)
	if err != nil {
		return nil, err
	}
	tx, err := s.db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("save push config: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// One config saver per task at a time, so the limit holds.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1 || '/' || $2))`, s.agent, string(taskID)); err != nil {
		return nil, fmt.Errorf("save push config: %w", err)
	}
	var n int
	var other string
	err = tx.QueryRow(ctx, `SELECT count(*), coalesce(max(owner) FILTER (WHERE owner <> $4), '') FROM vessel_push_configs
		WHERE agent_id = $1 AND task_id = $2 AND id <> $3`, s.agent, string(taskID), cp.ID, owner).Scan(&n, &other)
	if err != nil {
		return nil, fmt.Errorf("count push configs: %w", err)
	}
	if other != "" {
		return nil, a2a.ErrTaskNotFound
	}
	if n >= vstore.MaxPushConfigsPerTask {
		return nil, vstore.ErrTooManyPushConfigs
	}
	tag, err := tx.Exec(ctx, `INSERT INTO vessel_push_configs (agent_id, task_id, id, owner, config) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (agent_id, task_id, id) DO UPDATE SET config = excluded.config WHERE vessel_push_configs.owner = excluded.owner`,
		s.agent, string(taskID), cp.ID, owner, raw)
	if err != nil {
		return nil, fmt.Errorf("save push config: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return nil, a2a.ErrTaskNotFound
	}
	// The replica running the task learns of the config at once (sent on
	// commit), not only at its next write with pushes.
	if opt.Working {
		if payload, ok := workingPayload(s.agent, taskID); ok {
			if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, workingChannel, payload); err != nil {
				return nil, fmt.Errorf("save push config: announce: %w", err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("save push config: %w", err)
	}
	if opt.Working {
		s.db.agentStore(s.agent).wantWorking(taskID)
	}
	return cp, nil
}

func (s *pushStore) Get(ctx context.Context, taskID a2a.TaskID, id string) (*a2a.PushConfig, error) {
	c, owner, err := s.Lookup(ctx, taskID, id)
	if err != nil {
		return nil, err
	}
	if o := ownerFrom(ctx); o != "" && o != owner {
		return nil, push.ErrPushConfigNotFound
	}
	return c, nil
}

func (s *pushStore) Lookup(ctx context.Context, taskID a2a.TaskID, id string) (*a2a.PushConfig, string, error) {
	var raw []byte
	var owner string
	err := s.db.pool.QueryRow(ctx, `SELECT config, owner FROM vessel_push_configs WHERE agent_id = $1 AND task_id = $2 AND id = $3`,
		s.agent, string(taskID), id).Scan(&raw, &owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", push.ErrPushConfigNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("read push config: %w", err)
	}
	c, err := vstore.DecodePushConfig(raw)
	return c, owner, err
}

func (s *pushStore) List(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	owner := ownerFrom(ctx)
	rows, err := s.db.pool.Query(ctx, `SELECT config FROM vessel_push_configs WHERE agent_id = $1 AND task_id = $2
		AND ($3 = '' OR owner = $3) ORDER BY created_at, id`, s.agent, string(taskID), owner)
	if err != nil {
		return nil, fmt.Errorf("list push configs: %w", err)
	}
	defer rows.Close()
	out := []*a2a.PushConfig{}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("read push config: %w", err)
		}
		c, err := vstore.DecodePushConfig(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list push configs: %w", err)
	}
	return out, nil
}

// Delete is idempotent: a config that is not there is deleted already.
func (s *pushStore) Delete(ctx context.Context, taskID a2a.TaskID, id string) error {
	owner, err := vstore.Owner(ctx)
	if err != nil {
		return err
	}
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM vessel_push_configs WHERE agent_id = $1 AND task_id = $2 AND id = $3 AND owner = $4`,
		s.agent, string(taskID), id, owner); err != nil {
		return fmt.Errorf("delete push config: %w", err)
	}
	return nil
}

func (s *pushStore) DeleteAll(ctx context.Context, taskID a2a.TaskID) error {
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM vessel_push_configs WHERE agent_id = $1 AND task_id = $2`, s.agent, string(taskID)); err != nil {
		return fmt.Errorf("delete push configs: %w", err)
	}
	return nil
}

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
		raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if lt := s.live[a2a.TaskID(n.Task)]; lt != nil {
		lt.working.On()
	}
}
