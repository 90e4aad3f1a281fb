package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// What both backends' ListTasks answer by default and at most.
const (
	DefaultPageSize    = 50
	MaxPageSize        = 100
	DefaultListHistory = 100
)

// EncodeTask is the stored form of a (stripped) task.
func EncodeTask(t *a2a.Task) ([]byte, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	return b, nil
}

// DecodeTask reads EncodeTask's form.
func DecodeTask(raw []byte) (*a2a.Task, error) {
	var t a2a.Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("decode stored task: %w", err)
	}
	return &t, nil
}

// ShapeListed trims listed tasks, in place, to what req asks: no artifacts
// unless IncludeArtifacts, the last HistoryLength messages (default
// DefaultListHistory; 0 for none).
func ShapeListed(tasks []*a2a.Task, req *a2a.ListTasksRequest) {
	history := DefaultListHistory
	if req.HistoryLength != nil {
		history = *req.HistoryLength
	}
	for _, t := range tasks {
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		if history == 0 {
			t.History = []*a2a.Message{}
		} else if history > 0 && len(t.History) > history {
			t.History = t.History[len(t.History)-history:]
		}
	}
}

// SelfFailedMark is a self-failed mark with its task as stored, nil when
// the task is gone.
type SelfFailedMark struct {
	Agent, Task string
	Raw         []byte
}

// ScanSelfFailedMark reads a row of agent_id, task_id and the task (NULL
// when gone) into a mark (sqldb.Collect).
func ScanSelfFailedMark(r sqldb.Row) (SelfFailedMark, error) {
	var m SelfFailedMark
	err := r.Scan(&m.Agent, &m.Task, &m.Raw)
	return m, err
}

// ResolveSelfFailed turns marks into the tasks to tell, in order,
// dropping (done) each mark whose task is gone or no longer decodes, so
// that it never blocks the others.
func ResolveSelfFailed(ctx context.Context, marks []SelfFailedMark, log *slog.Logger,
	done func(ctx context.Context, agent string, taskID a2a.TaskID) error) ([]SelfFailed, error) {
	var out []SelfFailed
	for _, m := range marks {
		var t *a2a.Task
		if m.Raw != nil {
			var err error
			if t, err = DecodeTask(m.Raw); err != nil {
				log.Warn("self-failed task unreadable; its push is dropped", "agent", m.Agent, "task", m.Task, "error", err.Error())
			}
		}
		if t == nil {
			if err := done(ctx, m.Agent, a2a.TaskID(m.Task)); err != nil {
				return nil, err
			}
			continue
		}
		out = append(out, SelfFailed{Agent: m.Agent, Task: t})
	}
	return out, nil
}

// GetTaskSQL reads a task of an agent for its owner, in both backends'
// vessel_tasks (args: agent, id, owner); ScanStoredTask reads its row.
const GetTaskSQL = `SELECT task, version FROM vessel_tasks WHERE agent_id = ? AND id = ? AND owner = ?`

// ScanStoredTask reads a row of GetTaskSQL: a2a.ErrTaskNotFound when
// there is none (no such task, or another owner's).
func ScanStoredTask(row sqldb.Row, id a2a.TaskID) (*taskstore.StoredTask, error) {
	var raw []byte
	var v int64
	err := row.Scan(&raw, &v)
	if errors.Is(err, sqldb.ErrNoRows) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	t, err := DecodeTask(raw)
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", id, err)
	}
	return &taskstore.StoredTask{Task: t, Version: taskstore.TaskVersion(v)}, nil
}

// WhyNoRow tells, after a conditional update of a task matched no row,
// a missing (or another owner's) task, a2a.ErrTaskNotFound, from a
// version conflict, taskstore.ErrConcurrentModification.
func WhyNoRow(ctx context.Context, q sqldb.Querier, agent string, id a2a.TaskID, owner string, expected taskstore.TaskVersion) error {
	var cur int64
	err := q.QueryRow(ctx, `SELECT version FROM vessel_tasks WHERE agent_id = ? AND id = ? AND owner = ?`,
		agent, string(id), owner).Scan(&cur)
	if errors.Is(err, sqldb.ErrNoRows) {
		return a2a.ErrTaskNotFound
	}
	if err != nil {
		return fmt.Errorf("update task %s: check version: %w", id, err)
	}
	return fmt.Errorf("update task %s: stored version %d, expected %d: %w",
		id, cur, expected, taskstore.ErrConcurrentModification)
}
