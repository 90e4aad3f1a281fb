package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// tableQueue is a PushQueue writing each delivery as a row of its own
// table in the store's transaction, failing (after the insert) while
// fail is set.
type tableQueue struct {
	mu   sync.Mutex
	fail bool
}

func (q *tableQueue) EnqueueTx(ctx context.Context, tx any, agent string, cfgs []*a2a.PushConfig, p Push) error {
	stx, ok := tx.(*sql.Tx)
	if !ok {
		return errors.New("not a *sql.Tx")
	}
	for _, c := range cfgs {
		if _, err := stx.ExecContext(ctx, `INSERT INTO test_jobs (agent, task, config, state) VALUES (?,?,?,?)`,
			agent, string(c.TaskID), c.ID, string(p.State)); err != nil {
			return err
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail {
		return errors.New("injected")
	}
	return nil
}

func (q *tableQueue) set(fail bool) {
	q.mu.Lock()
	q.fail = fail
	q.mu.Unlock()
}

// TestPushPendingPause: on SQLite, a pause (INPUT_REQUIRED) whose write
// and push fail together is kept with its push and neither is on disk;
// the flush writes both together, then the end is written with its own
// push, after it. An update of a task without configs writes no job.
func TestPushPendingPause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	b := open(t, path, Options{Agents: []string{"a"}})
	defer b.Close()
	db := b.(DB).SQLDB()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE test_jobs (n INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT, task TEXT, config TEXT, state TEXT)`); err != nil {
		t.Fatal(err)
	}
	q := &tableQueue{fail: true}
	b.(PushQueuing).SetPushQueue(q)
	s := b.Agent("a")
	alice := asUser("app/alice")
	for _, id := range []string{"t1", "bare"} {
		if _, err := s.Create(alice, newTask(id, a2a.TaskStateWorking)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.(PushBackend).PushConfigs("a").Save(alice, "t1", &a2a.PushConfig{ID: "h1", URL: "http://127.0.0.1:1/hook"}); err != nil {
		t.Fatal(err)
	}
	update := func(id string, v taskstore.TaskVersion, st a2a.TaskState) taskstore.TaskVersion {
		t.Helper()
		ev := &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: st}}
		nv, err := s.Update(alice, &taskstore.UpdateRequest{Task: newTask(id, st), Event: ev, PrevVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		return nv
	}
	disk := func(id string) (string, []string) {
		t.Helper()
		var st string
		if err := db.QueryRowContext(ctx, `SELECT state FROM vessel_tasks WHERE agent_id='a' AND id=?`, id).Scan(&st); err != nil {
			t.Fatal(err)
		}
		rows, err := db.QueryContext(ctx, `SELECT state FROM test_jobs WHERE task=? ORDER BY n`, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var jobs []string
		for rows.Next() {
			var j string
			if err := rows.Scan(&j); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		return st, jobs
	}

	v := update("t1", 1, a2a.TaskStateInputRequired)
	if st, jobs := disk("t1"); st != string(a2a.TaskStateWorking) || len(jobs) != 0 {
		t.Fatalf("after the failed write: %s, jobs %v; want WORKING and none", st, jobs)
	}
	q.set(false)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, jobs := disk("t1")
		if st == string(a2a.TaskStateInputRequired) {
			if len(jobs) != 1 || jobs[0] != string(a2a.TaskStateInputRequired) {
				t.Fatalf("the pause was written with jobs %v, want its one push", jobs)
			}
			break
		}
		if len(jobs) != 0 {
			t.Fatalf("jobs %v on disk before the pause", jobs)
		}
		if time.Now().After(deadline) {
			t.Fatal("the pause was never written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	update("t1", v, a2a.TaskStateCompleted)
	if st, jobs := disk("t1"); st != string(a2a.TaskStateCompleted) || len(jobs) != 2 || jobs[1] != string(a2a.TaskStateCompleted) {
		t.Fatalf("after the end: %s, jobs %v; want COMPLETED after the pause", st, jobs)
	}
	update("bare", 1, a2a.TaskStateCompleted)
	if st, jobs := disk("bare"); st != string(a2a.TaskStateCompleted) || len(jobs) != 0 {
		t.Fatalf("task without configs: %s, jobs %v", st, jobs)
	}
	if err := b.(Pinger).Ping(ctx); err != nil {
		t.Fatalf("Ping after the writes went through: %v", err)
	}
}
