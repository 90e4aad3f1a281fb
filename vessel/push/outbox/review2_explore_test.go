package outbox_test

import (
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"os"
	"testing"
	"time"
)

// Exploratory (REVIEW2_EXPLORE=1): one task's many pushes to one config,
// with the production OrderSnooze (1 s).
func TestReview2OneKeyThroughput(t *testing.T) {
	if os.Getenv("REVIEW2_EXPLORE") == "" {
		t.Skip("exploratory")
	}
	r := newRigSnooze(t, 16, 0)
	start := time.Now()
	r.enqueue(t, 1, 40)
	r.wait(t, 40)
	t.Logf("40 deliveries of one key: %s", time.Since(start))
	r.checkOrder(t, 1, 40)
}

// Exploratory: while one task's config has many deliveries queued, how
// long another task's single end waits.
func TestReview2OtherKeyWaits(t *testing.T) {
	if os.Getenv("REVIEW2_EXPLORE") == "" {
		t.Skip("exploratory")
	}
	r := newRigSnooze(t, 16, 0)
	ctx := ownerCtx("app/alice")
	mk := func(id a2a.TaskID) taskstore.TaskVersion {
		v, err := r.tasks.Create(ctx, &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.pushes.Save(ctx, id, &a2a.PushConfig{URL: r.url + "/hook"}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	upd := func(id a2a.TaskID, v taskstore.TaskVersion, j int, st a2a.TaskState) taskstore.TaskVersion {
		ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "c", Status: a2a.TaskStatus{State: st,
			Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(fmt.Sprint(j)))}}
		v, err := r.tasks.Update(ctx, &taskstore.UpdateRequest{Task: &a2a.Task{ID: id, ContextID: "c", Status: ev.Status}, Event: ev, PrevVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := mk("busy")
	for j := range 200 {
		v = upd("busy", v, j, a2a.TaskStateInputRequired)
	}
	time.Sleep(2 * time.Second)
	ov := mk("other")
	start := time.Now()
	upd("other", ov, 0, a2a.TaskStateCompleted)
	for {
		r.mu.Lock()
		n := len(r.order["other"])
		busy := len(r.order["busy"])
		r.mu.Unlock()
		if n > 0 {
			t.Logf("the other task's end arrived after %s (busy: %d of 200 delivered)", time.Since(start), busy)
			return
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("the other task's end not delivered after 60 s (busy: %d of 200)", busy)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
