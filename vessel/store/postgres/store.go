package postgres

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/jackc/pgx/v5"
)

// Store is one agent's view of the shared task table: a taskstore.Store whose
// every call is scoped to the agent and to the calling owner
// (a2asrv.CallContextFrom(ctx).User.Name). Another owner's task is reported
// as a2a.ErrTaskNotFound so that its existence is not disclosed.
type Store struct {
	db    *DB
	agent string
}

var _ taskstore.Store = (*Store)(nil)

// Agent returns the task store of one agent. Stores of all agents share the
// pool and the replica's lease.
func (db *DB) Agent(agentID string) *Store { return &Store{db: db, agent: agentID} }

// AgentID is the agent this store is bound to.
func (s *Store) AgentID() string { return s.agent }

// ownerFrom reads the caller's name; tasks belong to it.
func ownerFrom(ctx context.Context) string {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil {
		return cc.User.Name
	}
	return ""
}

func (s *Store) encode(t *a2a.Task) ([]byte, *time.Time, error) {
	stripped := s.db.opts.Strip(t)
	if stripped == nil {
		stripped = t
	}
	b, err := json.Marshal(stripped)
	if err != nil {
		return nil, nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	return b, t.Status.Timestamp, nil
}

func decodeTask(b []byte) (*a2a.Task, error) {
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decode stored task: %w", err)
	}
	return &t, nil
}

// Create implements taskstore.Store.
func (s *Store) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	if task == nil || task.ID == "" {
		return taskstore.TaskVersionMissing, fmt.Errorf("create task: missing id: %w", a2a.ErrInvalidParams)
	}
	body, ts, err := s.encode(task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	var v int64
	err = s.db.pool.QueryRow(ctx, `
		INSERT INTO vessel_tasks (agent_id, id, owner, context_id, state, version, replica_id, status_ts, task)
		VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8)
		ON CONFLICT (agent_id, id) DO NOTHING
		RETURNING version`,
		s.agent, string(task.ID), ownerFrom(ctx), task.ContextID, string(task.Status.State),
		s.db.opts.ReplicaID, ts, body).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("create task %s: %w", task.ID, err)
	}
	return taskstore.TaskVersion(v), nil
}

// Update implements taskstore.Store. The version is incremented in SQL, and a
// stale PrevVersion yields taskstore.ErrConcurrentModification. The writing
// replica takes over the task's lease.
func (s *Store) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil || req.Task == nil || req.Task.ID == "" {
		return taskstore.TaskVersionMissing, fmt.Errorf("update task: missing task: %w", a2a.ErrInvalidParams)
	}
	task := req.Task
	body, ts, err := s.encode(task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	owner := ownerFrom(ctx)
	var v int64
	err = s.db.pool.QueryRow(ctx, `
		UPDATE vessel_tasks
		SET task = $1, state = $2, status_ts = $3, context_id = $4, replica_id = $5,
		    version = version + 1, updated_at = now()
		WHERE agent_id = $6 AND id = $7 AND owner = $8 AND ($9 = 0 OR version = $9)
		RETURNING version`,
		body, string(task.Status.State), ts, task.ContextID, s.db.opts.ReplicaID,
		s.agent, string(task.ID), owner, int64(req.PrevVersion)).Scan(&v)
	if err == nil {
		return taskstore.TaskVersion(v), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return taskstore.TaskVersionMissing, fmt.Errorf("update task %s: %w", task.ID, err)
	}
	// No row: either the task is not ours/absent, or the version moved on.
	var cur int64
	err = s.db.pool.QueryRow(ctx, `SELECT version FROM vessel_tasks WHERE agent_id = $1 AND id = $2 AND owner = $3`,
		s.agent, string(task.ID), owner).Scan(&cur)
	if errors.Is(err, pgx.ErrNoRows) {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("update task %s: check version: %w", task.ID, err)
	}
	return taskstore.TaskVersionMissing, fmt.Errorf("update task %s: stored version %d, expected %d: %w",
		task.ID, cur, req.PrevVersion, taskstore.ErrConcurrentModification)
}

// Get implements taskstore.Store.
func (s *Store) Get(ctx context.Context, taskID a2a.TaskID) (*taskstore.StoredTask, error) {
	var body []byte
	var v int64
	err := s.db.pool.QueryRow(ctx, `SELECT task, version FROM vessel_tasks WHERE agent_id = $1 AND id = $2 AND owner = $3`,
		s.agent, string(taskID), ownerFrom(ctx)).Scan(&body, &v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", taskID, err)
	}
	t, err := decodeTask(body)
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", taskID, err)
	}
	return &taskstore.StoredTask{Task: t, Version: taskstore.TaskVersion(v)}, nil
}

const (
	defaultPageSize    = 50
	maxPageSize        = 100
	defaultListHistory = 100
)

// List implements taskstore.Store: the caller's tasks of this agent, newest
// update first, with the SDK's filters and an opaque page token.
func (s *Store) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	owner := ownerFrom(ctx)
	if owner == "" {
		return nil, a2a.ErrUnauthenticated
	}
	if req == nil {
		req = &a2a.ListTasksRequest{}
	}
	pageSize := req.PageSize
	if pageSize == 0 {
		pageSize = defaultPageSize
	} else if pageSize < 1 || pageSize > maxPageSize {
		return nil, fmt.Errorf("page size must be between 1 and %d, got %d: %w", maxPageSize, pageSize, a2a.ErrInvalidRequest)
	}

	where := []string{"agent_id = $1", "owner = $2"}
	args := []any{s.agent, owner}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	if req.ContextID != "" {
		add("context_id = ?", req.ContextID)
	}
	if req.Status != a2a.TaskStateUnspecified {
		add("state = ?", string(req.Status))
	}
	if req.StatusTimestampAfter != nil {
		add("(status_ts IS NULL OR status_ts >= ?)", *req.StatusTimestampAfter)
	}
	filter := strings.Join(where, " AND ")

	var total int
	if err := s.db.pool.QueryRow(ctx, "SELECT count(*) FROM vessel_tasks WHERE "+filter, args...).Scan(&total); err != nil {
		return nil, fmt.Errorf("list tasks: count: %w", err)
	}

	if req.PageToken != "" {
		at, id, err := decodePageToken(req.PageToken)
		if err != nil {
			return nil, err
		}
		args = append(args, at, id)
		filter += fmt.Sprintf(" AND (updated_at, id) < ($%d, $%d)", len(args)-1, len(args))
	}
	args = append(args, pageSize+1)
	rows, err := s.db.pool.Query(ctx, fmt.Sprintf(
		"SELECT task, updated_at, id FROM vessel_tasks WHERE %s ORDER BY updated_at DESC, id DESC LIMIT $%d",
		filter, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	type row struct {
		body []byte
		at   time.Time
		id   string
	}
	page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.body, &x.at, &x.id)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}

	next := ""
	if len(page) > pageSize {
		last := page[pageSize-1]
		next = encodePageToken(last.at, last.id)
		page = page[:pageSize]
	}
	history := defaultListHistory
	if req.HistoryLength != nil {
		history = *req.HistoryLength
	}
	tasks := make([]*a2a.Task, 0, len(page))
	for _, r := range page {
		t, err := decodeTask(r.body)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		if history == 0 {
			t.History = []*a2a.Message{}
		} else if history > 0 && len(t.History) > history {
			t.History = t.History[len(t.History)-history:]
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		tasks = append(tasks, t)
	}
	return &a2a.ListTasksResponse{Tasks: tasks, TotalSize: total, PageSize: pageSize, NextPageToken: next}, nil
}

func encodePageToken(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "_" + id))
}

func decodePageToken(tok string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("bad page token: %w", a2a.ErrInvalidParams)
	}
	ts, id, ok := strings.Cut(string(raw), "_")
	if !ok {
		return time.Time{}, "", fmt.Errorf("bad page token: %w", a2a.ErrInvalidParams)
	}
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("bad page token: %w", a2a.ErrInvalidParams)
	}
	return at, id, nil
}
