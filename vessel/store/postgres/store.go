package postgres

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/jackc/pgx/v5"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// Store is one agent's view of the shared task table: a taskstore.Store whose
// every call is scoped to the agent and to the calling owner
// (a2asrv.CallContextFrom(ctx).User.Name). Another owner's task is reported
// as a2a.ErrTaskNotFound so that its existence is not disclosed.
//
// Like the SQLite store, tasks running on this replica are kept in memory and
// written to the table only when their state changes (one write per streamed
// event would cost a round trip each). Those writes are conditional on the
// version last written, so a change made meanwhile by another replica (a
// cancel it could not forward, the lease reaper) surfaces as
// ErrConcurrentModification, and the SDK then reloads the task from the table.
type Store struct {
	db    *DB
	agent string

	// Live are the tasks running on this replica.
	vstore.Live
}

var _ taskstore.Store = (*Store)(nil)

// Agent returns the task store of one agent (store.Backend). Stores of all
// agents share the pool and the replica's lease.
func (db *DB) Agent(agentID string) taskstore.Store { return db.agentStore(agentID) }

func (db *DB) agentStore(agentID string) *Store {
	db.mu.Lock()
	defer db.mu.Unlock()
	s := db.stores[agentID]
	if s == nil {
		s = &Store{db: db, agent: agentID, Live: vstore.NewLive()}
		db.stores[agentID] = s
	}
	return s
}

// AgentID is the agent this store is bound to.
func (s *Store) AgentID() string { return s.agent }

// ownerFrom reads the caller's name; tasks belong to it.
func ownerFrom(ctx context.Context) string {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil {
		return cc.User.Name
	}
	return ""
}

func (s *Store) strip(t *a2a.Task) *a2a.Task {
	if st := s.db.opts.Strip(t); st != nil {
		return st
	}
	return t
}

// Create implements taskstore.Store.
func (s *Store) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	if task == nil || task.ID == "" {
		return taskstore.TaskVersionMissing, fmt.Errorf("create task: missing id: %w", a2a.ErrInvalidParams)
	}
	owner, err := vstore.Owner(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	ev := *task // the event as the SDK had it, for its push
	push := s.db.pushOf(&ev, &ev)
	task.History = vstore.UserText(task.History) // keep the SDK's copy small too
	st := s.strip(task)
	body, err := vstore.EncodeTask(st)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	var v int64
	err = s.db.withPush(ctx, push, func(ctx context.Context, q querier) (bool, error) {
		err := q.QueryRow(ctx, `
			INSERT INTO vessel_tasks (agent_id, id, owner, context_id, state, version, replica_id, status_ts, task)
			VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8)
			ON CONFLICT (agent_id, id) DO NOTHING
			RETURNING version`,
			s.agent, string(task.ID), owner, task.ContextID, string(task.Status.State),
			s.db.opts.ReplicaID, task.Status.Timestamp, body).Scan(&v)
		return err == nil, err
	}, s.agent, task.ID, nil)
	if errors.Is(err, pgx.ErrNoRows) {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("create task %s: %w", task.ID, err)
	}
	var lt *vstore.LiveTask
	if !task.Status.State.Terminal() {
		lt = &vstore.LiveTask{Owner: owner, Version: 1, DiskVersion: 1, DiskState: task.Status.State, Task: st}
	}
	s.Mu.Lock()
	s.Start(task.ID, lt, false, time.Now())
	s.Mu.Unlock()
	return taskstore.TaskVersion(v), nil
}

// Update implements taskstore.Store. A stale PrevVersion yields
// taskstore.ErrConcurrentModification. The writing replica takes over the
// task's lease.
func (s *Store) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if req == nil || req.Task == nil || req.Task.ID == "" {
		return taskstore.TaskVersionMissing, fmt.Errorf("update task: missing task: %w", a2a.ErrInvalidParams)
	}
	owner, err := vstore.Owner(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	task := req.Task
	st := s.strip(task)
	push := s.db.pushOf(req.Event, st)
	// Then trim the SDK's own working copy (history, finished transcript and
	// files), which it deep-copies for every later event.
	vstore.Shrink(req)
	state := task.Status.State

	s.Mu.Lock()
	defer s.Mu.Unlock()
	if lt := s.Tasks[task.ID]; lt != nil {
		if lt.Owner != owner {
			return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
		}
		if req.PrevVersion != taskstore.TaskVersionMissing && req.PrevVersion != lt.Version {
			return taskstore.TaskVersionMissing, fmt.Errorf("update task %s: version %d, expected %d: %w",
				task.ID, lt.Version, req.PrevVersion, taskstore.ErrConcurrentModification)
		}
		v := lt.Version + 1
		if s.db.queue.Load() != nil {
			// A WORKING update, for a task whose configs want them (never
			// one with a push of its own: those are of other states).
			if p := lt.Working.Next(req.Event, st, s.agent); p != nil {
				push = p
			}
		}
		if state != lt.DiskState || state.Terminal() || push != nil {
			var seen vstore.PushSeen
			if err := s.writeLive(ctx, owner, st, lt.DiskVersion, v, push, &seen); err != nil {
				if errors.Is(err, taskstore.ErrConcurrentModification) || errors.Is(err, a2a.ErrTaskNotFound) {
					// The row moved (another replica, the lease reaper):
					// the table is the truth from now on.
					delete(s.Tasks, task.ID)
				}
				// Otherwise the transaction wrote nothing: the task stays
				// here as it was, so the SDK's next write (its
				// SetTaskFailed) starts from the version it holds, which
				// counts the updates kept in memory only.
				return taskstore.TaskVersionMissing, err
			}
			lt.DiskVersion, lt.DiskState = v, state
			lt.Working.Seen(seen)
		}
		lt.Version, lt.Task = v, st
		if state.Terminal() {
			delete(s.Tasks, task.ID)
		}
		s.db.publish(s.agent, req.Event)
		return v, nil
	}

	body, err := vstore.EncodeTask(st)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	var v int64
	var working bool // a config of the task wants WORKING updates
	err = s.db.withPush(ctx, push, func(ctx context.Context, q querier) (bool, error) {
		err := q.QueryRow(ctx, `
			UPDATE vessel_tasks
			SET task = $1, state = $2, status_ts = $3, context_id = $4, replica_id = $5,
			    version = version + 1, updated_at = now()
			WHERE agent_id = $6 AND id = $7 AND owner = $8 AND ($9 = 0 OR version = $9)
			RETURNING version, EXISTS (SELECT 1 FROM vessel_push_configs c
				WHERE c.agent_id = $6 AND c.task_id = $7 AND c.config @> '{"`+vstore.WorkingMember+`": true}')`,
			body, string(state), task.Status.Timestamp, task.ContextID, s.db.opts.ReplicaID,
			s.agent, string(task.ID), owner, int64(req.PrevVersion)).Scan(&v, &working)
		return err == nil, err
	}, s.agent, task.ID, nil)
	if err == nil {
		var lt *vstore.LiveTask
		if !state.Terminal() {
			// This replica runs the task from now on (a follow-up turn).
			lt = &vstore.LiveTask{Owner: owner, Version: taskstore.TaskVersion(v),
				DiskVersion: taskstore.TaskVersion(v), DiskState: state, Task: st}
		}
		s.Start(task.ID, lt, working, time.Now())
		s.db.publish(s.agent, req.Event)
		return taskstore.TaskVersion(v), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return taskstore.TaskVersionMissing, fmt.Errorf("update task %s: %w", task.ID, err)
	}
	return taskstore.TaskVersionMissing, s.whyNoRow(ctx, owner, task.ID, req.PrevVersion)
}

// writeLive writes a running task's new state, only if the table still holds
// the version this replica wrote last.
func (s *Store) writeLive(ctx context.Context, owner string, t *a2a.Task, diskVersion, v taskstore.TaskVersion, push *vstore.Push,
	seen *vstore.PushSeen) error {
	body, err := vstore.EncodeTask(t)
	if err != nil {
		return err
	}
	var n int64
	err = s.db.withPush(ctx, push, func(ctx context.Context, q querier) (bool, error) {
		tag, err := q.Exec(ctx, `
			UPDATE vessel_tasks
			SET task = $1, state = $2, status_ts = $3, context_id = $4, replica_id = $5,
			    version = $6, updated_at = now()
			WHERE agent_id = $7 AND id = $8 AND owner = $9 AND version = $10`,
			body, string(t.Status.State), t.Status.Timestamp, t.ContextID, s.db.opts.ReplicaID,
			int64(v), s.agent, string(t.ID), owner, int64(diskVersion))
		n = tag.RowsAffected()
		return n == 1, err
	}, s.agent, t.ID, seen)
	if err != nil {
		return fmt.Errorf("update task %s: %w", t.ID, err)
	}
	if n == 1 {
		return nil
	}
	return s.whyNoRow(ctx, owner, t.ID, diskVersion)
}

// whyNoRow tells a missing (or foreign) task from a version conflict after
// an update matched no row.
func (s *Store) whyNoRow(ctx context.Context, owner string, id a2a.TaskID, expected taskstore.TaskVersion) error {
	return vstore.WhyNoRow(ctx, newPoolDB(s.db.pool), s.agent, id, owner, expected)
}

// Get implements taskstore.Store. A task running here is answered from
// memory (its latest update); any other from the table.
func (s *Store) Get(ctx context.Context, taskID a2a.TaskID) (*taskstore.StoredTask, error) {
	owner, err := vstore.Owner(ctx)
	if err != nil {
		return nil, err
	}
	if t, found, err := s.Live.Get(taskID, owner); found {
		return t, err
	}
	return s.getStored(ctx, owner, taskID)
}

// getStored reads the task from the table, whoever runs it.
func (s *Store) getStored(ctx context.Context, owner string, taskID a2a.TaskID) (*taskstore.StoredTask, error) {
	return vstore.ScanStoredTask(newPoolDB(s.db.pool).QueryRow(ctx, vstore.GetTaskSQL, s.agent, string(taskID), owner), taskID)
}

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
		pageSize = vstore.DefaultPageSize
	} else if pageSize < 1 || pageSize > vstore.MaxPageSize {
		return nil, fmt.Errorf("page size must be between 1 and %d, got %d: %w", vstore.MaxPageSize, pageSize, a2a.ErrInvalidRequest)
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
	tasks := make([]*a2a.Task, 0, len(page))
	for _, r := range page {
		t, err := vstore.DecodeTask(r.body)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		tasks = append(tasks, t)
	}
	vstore.ShapeListed(tasks, req)
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
