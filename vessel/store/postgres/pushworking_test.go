package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// recQueue records what the store enqueues ("config:STATE").
type recQueue struct {
	mu  sync.Mutex
	got []string
}

func (q *recQueue) EnqueueTx(_ context.Context, _ any, _ string, cfgs []*a2a.PushConfig, p vstore.Push) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range cfgs {
		q.got = append(q.got, c.ID+":"+strings.TrimPrefix(string(p.State), "TASK_STATE_"))
	}
	return nil
}

func (q *recQueue) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.got
	q.got = nil
	return out
}

// TestPushWorkingPostgres: a config saved with Working before its task
// (as SendMessage does) is enqueued every WORKING status update, a config
// without it only the pause and the end; a task without such configs
// enqueues nothing for them. The flag is kept in the config's row: a
// second store opened on the database returns the config unchanged and,
// taking the task up, learns the flag in its UPDATE and enqueues the
// follow-up turn's WORKING updates.
func TestPushWorkingPostgres(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	db1 := openTest(t, dsn, schema, nil)
	q1 := &recQueue{}
	db1.SetPushQueue(q1)
	alice := as("app/alice")
	save := func(db *DB, task, id string, working bool) {
		t.Helper()
		if _, err := db.PushConfigs("a").SaveWith(alice, a2a.TaskID(task), &a2a.PushConfig{ID: id, URL: "http://127.0.0.1:1/" + id, Token: "k"},
			vstore.SaveOptions{Working: working}); err != nil {
			t.Fatal(err)
		}
	}
	save(db1, "t1", "w", true)
	save(db1, "t1", "plain", false)
	mk := func(id string, st a2a.TaskState) *a2a.Task {
		return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: st}}
	}
	update := func(s taskstore.Store, id string, v taskstore.TaskVersion, st a2a.TaskState) taskstore.TaskVersion {
		t.Helper()
		ev := &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: st}}
		nv, err := s.Update(alice, &taskstore.UpdateRequest{Task: mk(id, st), Event: ev, PrevVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		return nv
	}
	s1 := db1.Agent("a")
	for _, id := range []string{"t1", "bare"} {
		if _, err := s1.Create(alice, mk(id, a2a.TaskStateWorking)); err != nil {
			t.Fatal(err)
		}
	}
	v, vb := taskstore.TaskVersion(1), taskstore.TaskVersion(1)
	for range 2 {
		v = update(s1, "t1", v, a2a.TaskStateWorking)
		vb = update(s1, "bare", vb, a2a.TaskStateWorking)
	}
	update(s1, "t1", v, a2a.TaskStateInputRequired)
	update(s1, "bare", vb, a2a.TaskStateInputRequired)
	if got, want := q1.take(), []string{"w:WORKING", "w:WORKING", "w:INPUT_REQUIRED", "plain:INPUT_REQUIRED"}; !slices.Equal(got, want) {
		t.Fatalf("enqueued %v, want %v", got, want)
	}

	db2 := openTest(t, dsn, schema, nil)
	q2 := &recQueue{}
	db2.SetPushQueue(q2)
	list, err := db2.PushConfigs("a").List(alice, "t1")
	if err != nil || len(list) != 2 {
		t.Fatalf("list on the second store: %v %v", list, err)
	}
	for _, c := range list {
		raw, _ := json.Marshal(c)
		if strings.Contains(string(raw), vstore.WorkingMember) || c.URL != "http://127.0.0.1:1/"+c.ID {
			t.Fatalf("config as listed: %s", raw)
		}
	}
	s2 := db2.Agent("a")
	cur, err := s2.Get(alice, "t1")
	if err != nil {
		t.Fatal(err)
	}
	// The follow-up turn runs on the second store: its first write takes
	// the task up, the next ones are pushed.
	v = update(s2, "t1", cur.Version, a2a.TaskStateWorking)
	v = update(s2, "t1", v, a2a.TaskStateWorking)
	v = update(s2, "t1", v, a2a.TaskStateWorking)
	update(s2, "t1", v, a2a.TaskStateCompleted)
	if got, want := q2.take(), []string{"w:WORKING", "w:WORKING", "w:COMPLETED", "plain:COMPLETED"}; !slices.Equal(got, want) {
		t.Fatalf("enqueued on the second store %v, want %v", got, want)
	}
}

// TestPushWorkingAnnounced: a push-working config saved through another
// replica reaches the replica running the task by NOTIFY, which sends the
// task's next WORKING updates (before, only from its next write with
// pushes, a pause or the end).
func TestPushWorkingAnnounced(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	runner, other := openTest(t, dsn, schema, nil), openTest(t, dsn, schema, nil)
	q := &recQueue{}
	runner.SetPushQueue(q)
	alice := as("app/alice")
	waitFor(t, alice, "the runner listens", runner.listening.Load)
	s := runner.Agent("a")
	mk := &a2a.Task{ID: "t9", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	v, err := s.Create(alice, mk)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.PushConfigs("a").SaveWith(alice, "t9", &a2a.PushConfig{ID: "w", URL: "http://127.0.0.1:1/w", Token: "k"},
		vstore.SaveOptions{Working: true}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ev := &a2a.TaskStatusUpdateEvent{TaskID: "t9", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if v, err = s.Update(alice, &taskstore.UpdateRequest{Task: mk, Event: ev, PrevVersion: v}); err != nil {
			t.Fatal(err)
		}
		if got := q.take(); slices.Contains(got, "w:WORKING") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running replica never sent a WORKING update to the config saved through the other")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
