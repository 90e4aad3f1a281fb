package postgres

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// a task's end whose write (with its push) fails makes the store
// forget the task; the SDK then fails the task (SetTaskFailed) from the
// version it holds. That version counts the working updates the store kept
// in memory only, so it is not the table's: the failure is refused as a
// concurrent modification, the task stays WORKING in the table, leased by a
// live replica (never reaped), and no push is ever enqueued.
func TestFailAfterFailedEndIsStored(t *testing.T) {
	dsn := testDSN(t)
	rcv := newHookReceiver(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ob := pushOutbox(t, db, rcv.url)
	fq := &failingQueue{ob: ob}
	db.SetPushQueue(fq)
	s := db.Agent("alpha")
	alice := as("alice")
	v, err := s.Create(alice, newTask("t1", "c", a2a.TaskStateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PushConfigs("alpha").Save(alice, "t1", &a2a.PushConfig{ID: "h1", URL: rcv.url + "/hook", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	// A working update: kept in memory, not written.
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if v, err = s.Update(alice, &taskstore.UpdateRequest{Task: &a2a.Task{ID: "t1", ContextID: "c", Status: ev.Status},
		Event: ev, PrevVersion: v}); err != nil {
		t.Fatal(err)
	}
	fq.mu.Lock()
	fq.on = true
	fq.mu.Unlock()
	if _, err := endTask(alice, s, "t1", v, a2a.TaskStateCompleted); err == nil {
		t.Fatal("the end was stored though its push could not be")
	}
	fq.mu.Lock()
	fq.on = false
	fq.mu.Unlock()
	// The SDK's SetTaskFailed: the failed status, from the version it had.
	if _, err := endTask(alice, s, "t1", v, a2a.TaskStateFailed); err != nil {
		t.Fatalf("SetTaskFailed after the failed end: %v", err)
	}
	if st, n := stored(t, db, "t1"); st != string(a2a.TaskStateFailed) || n != 1 {
		t.Fatalf("state %s and %d jobs, want FAILED and 1", st, n)
	}
	if err := ob.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitPushed(t, ob, rcv, "t1", a2a.TaskStateFailed)
}
