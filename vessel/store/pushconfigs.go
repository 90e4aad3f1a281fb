package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// PushConfigHooks are what differs between the backends in keeping push
// configs; the table (vessel_push_configs) and its queries are the same.
type PushConfigHooks struct {
	// LockTask, when set, runs first in the transaction saving a config,
	// so that savers of one task's configs take turns and the limit holds
	// (PostgreSQL: an advisory lock; SQLite's one writer needs none).
	LockTask func(ctx context.Context, tx sqldb.Tx, agent string, taskID a2a.TaskID) error
	// AnnounceWorking, when set, runs in that transaction for a config
	// wanting WORKING updates (PostgreSQL: a NOTIFY to the replica running
	// the task).
	AnnounceWorking func(ctx context.Context, tx sqldb.Tx, agent string, taskID a2a.TaskID) error
	// SavedWorking, when set, is told after the commit of such a config.
	SavedWorking func(ctx context.Context, taskID a2a.TaskID)
	// CreatedAt, when set, is a new row's created_at; otherwise the
	// column's default (PostgreSQL: now()).
	CreatedAt func() any
}

// NewPushConfigs is the push config store of one agent in db, for both
// backends (store/postgres passes its pgx runner).
func NewPushConfigs(db sqldb.DB, agent string, h PushConfigHooks) PushConfigStore {
	return &pushConfigs{db: db, agent: agent, h: h}
}

type pushConfigs struct {
	db    sqldb.DB
	agent string
	h     PushConfigHooks
}

// ownerOrAny is the caller's owner, "" when the call has none (delivery).
func ownerOrAny(ctx context.Context) string {
	o, _ := Owner(ctx)
	return o
}

func (s *pushConfigs) Save(ctx context.Context, taskID a2a.TaskID, c *a2a.PushConfig) (*a2a.PushConfig, error) {
	return s.SaveWith(ctx, taskID, c, SaveOptions{})
}

// SaveWith implements PushConfigStore: a config of another owner's task
// is "task not found"; a task holds at most MaxPushConfigsPerTask.
func (s *pushConfigs) SaveWith(ctx context.Context, taskID a2a.TaskID, c *a2a.PushConfig, opt SaveOptions) (*a2a.PushConfig, error) {
	owner, err := Owner(ctx)
	if err != nil {
		return nil, err
	}
	cp, err := PreparePushConfig(taskID, c)
	if err != nil {
		return nil, err
	}
	raw, err := EncodePushConfigWith(cp, opt)
	if err != nil {
		return nil, err
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("save push config: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := s.save(ctx, tx, owner, taskID, cp.ID, raw, opt); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("save push config: %w", err)
	}
	if opt.Working && s.h.SavedWorking != nil {
		s.h.SavedWorking(ctx, taskID)
	}
	return cp, nil
}

// save writes a config in tx, checking its task's owner and the limit.
func (s *pushConfigs) save(ctx context.Context, tx sqldb.Tx, owner string, taskID a2a.TaskID, id string, raw []byte, opt SaveOptions) error {
	if s.h.LockTask != nil {
		if err := s.h.LockTask(ctx, tx, s.agent, taskID); err != nil {
			return fmt.Errorf("save push config: %w", err)
		}
	}
	var n int
	var other string
	err := tx.QueryRow(ctx, `SELECT count(*), coalesce(max(CASE WHEN owner <> ? THEN owner END), '') FROM vessel_push_configs
		WHERE agent_id = ? AND task_id = ? AND id <> ?`, owner, s.agent, string(taskID), id).Scan(&n, &other)
	if err != nil {
		return fmt.Errorf("count push configs: %w", err)
	}
	if other != "" {
		return a2a.ErrTaskNotFound
	}
	if n >= MaxPushConfigsPerTask {
		return ErrTooManyPushConfigs
	}
	cols, vals := "", ""
	args := []any{s.agent, string(taskID), id, owner, raw}
	if s.h.CreatedAt != nil {
		cols, vals = ", created_at", ", ?"
		args = append(args, s.h.CreatedAt())
	}
	k, err := tx.Exec(ctx, `INSERT INTO vessel_push_configs (agent_id, task_id, id, owner, config`+cols+`) VALUES (?, ?, ?, ?, ?`+vals+`)
		ON CONFLICT (agent_id, task_id, id) DO UPDATE SET config = excluded.config WHERE vessel_push_configs.owner = excluded.owner`,
		args...)
	if err != nil {
		return fmt.Errorf("save push config: %w", err)
	}
	if k != 1 {
		return a2a.ErrTaskNotFound
	}
	if opt.Working && s.h.AnnounceWorking != nil {
		if err := s.h.AnnounceWorking(ctx, tx, s.agent, taskID); err != nil {
			return fmt.Errorf("save push config: announce: %w", err)
		}
	}
	return nil
}

func (s *pushConfigs) Get(ctx context.Context, taskID a2a.TaskID, id string) (*a2a.PushConfig, error) {
	c, owner, err := s.Lookup(ctx, taskID, id)
	if err != nil {
		return nil, err
	}
	if o := ownerOrAny(ctx); o != "" && o != owner {
		return nil, push.ErrPushConfigNotFound
	}
	return c, nil
}

func (s *pushConfigs) Lookup(ctx context.Context, taskID a2a.TaskID, id string) (*a2a.PushConfig, string, error) {
	var raw []byte
	var owner string
	err := s.db.QueryRow(ctx, `SELECT config, owner FROM vessel_push_configs WHERE agent_id = ? AND task_id = ? AND id = ?`,
		s.agent, string(taskID), id).Scan(&raw, &owner)
	if errors.Is(err, sqldb.ErrNoRows) {
		return nil, "", push.ErrPushConfigNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("read push config: %w", err)
	}
	c, err := DecodePushConfig(raw)
	return c, owner, err
}

// List returns the caller's configs of a task in the order they were
// saved; a call with no owner (delivery) sees them all.
func (s *pushConfigs) List(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	owner := ownerOrAny(ctx)
	rows, err := s.db.Query(ctx, `SELECT config FROM vessel_push_configs WHERE agent_id = ? AND task_id = ?
		AND (? = '' OR owner = ?) ORDER BY created_at, id`, s.agent, string(taskID), owner, owner)
	if err != nil {
		return nil, fmt.Errorf("list push configs: %w", err)
	}
	raws, err := sqldb.Collect(rows, sqldb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("list push configs: %w", err)
	}
	out := make([]*a2a.PushConfig, 0, len(raws))
	for _, raw := range raws {
		c, err := DecodePushConfig(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Delete is idempotent: a config that is not there is deleted already.
func (s *pushConfigs) Delete(ctx context.Context, taskID a2a.TaskID, id string) error {
	owner, err := Owner(ctx)
	if err != nil {
		return err
	}
	if _, err := s.db.Exec(ctx, `DELETE FROM vessel_push_configs WHERE agent_id = ? AND task_id = ? AND id = ? AND owner = ?`,
		s.agent, string(taskID), id, owner); err != nil {
		return fmt.Errorf("delete push config: %w", err)
	}
	return nil
}

func (s *pushConfigs) DeleteAll(ctx context.Context, taskID a2a.TaskID) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM vessel_push_configs WHERE agent_id = ? AND task_id = ?`, s.agent, string(taskID)); err != nil {
		return fmt.Errorf("delete push configs: %w", err)
	}
	return nil
}
