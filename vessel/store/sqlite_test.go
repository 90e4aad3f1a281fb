package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

func asUser(name string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(name, nil)
	return ctx
}

func newTask(id string, state a2a.TaskState) *a2a.Task {
	return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: state},
		History: []*a2a.Message{
			{ID: "m1", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("question"),
				&a2a.Part{Content: a2a.Raw("{}"), MediaType: "application/vnd.astralvessel.transcript+json"}}},
		}}
}

func open(t *testing.T, path string, opt Options) Backend {
	t.Helper()
	b, err := Open(context.Background(), "sqlite://"+path, opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOwnerVersionsAndStrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	b := open(t, path, Options{Agents: []string{"a", "b"}})
	defer b.Close()
	s := b.Agent("a")
	alice, bob := asUser("app/alice"), asUser("app/bob")
	v, err := s.Create(alice, newTask("t1", a2a.TaskStateSubmitted))
	if err != nil || v != 1 {
		t.Fatalf("create: %v %v", v, err)
	}
	if _, err := s.Create(alice, newTask("t1", a2a.TaskStateSubmitted)); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := s.Get(bob, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob get: %v", err)
	}
	if _, err := b.Agent("b").Get(alice, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("other agent: %v", err)
	}
	work := newTask("t1", a2a.TaskStateWorking)
	work.Artifacts = []*a2a.Artifact{{ID: "x", Name: "transcript", Parts: a2a.ContentParts{a2a.NewTextPart("t")}}}
	if _, err := s.Update(bob, &taskstore.UpdateRequest{Task: work, PrevVersion: 1}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob update: %v", err)
	}
	if _, err := s.Update(alice, &taskstore.UpdateRequest{Task: work, PrevVersion: 5}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("stale update: %v", err)
	}
	v, err = s.Update(alice, &taskstore.UpdateRequest{Task: work, PrevVersion: 1})
	if err != nil || v != 2 {
		t.Fatalf("update: %v %v", v, err)
	}
	done := newTask("t1", a2a.TaskStateCompleted)
	done.Artifacts = []*a2a.Artifact{
		{ID: "x", Name: "transcript", Parts: a2a.ContentParts{a2a.NewTextPart("t")}},
		{ID: "y", Name: "answer", Parts: a2a.ContentParts{a2a.NewTextPart("the answer")}},
	}
	if v, err = s.Update(alice, &taskstore.UpdateRequest{Task: done, PrevVersion: 2}); err != nil || v != 3 {
		t.Fatalf("final: %v %v", v, err)
	}
	// After a restart the task is read from disk, stripped.
	b.Close()
	b = open(t, path, Options{Agents: []string{"a", "b"}})
	defer b.Close()
	got, err := b.Agent("a").Get(alice, "t1")
	if err != nil {
		t.Fatal(err)
	}
	tk := got.Task
	if got.Version != 3 || tk.Status.State != a2a.TaskStateCompleted || len(tk.Artifacts) != 1 || tk.Artifacts[0].Name != "answer" {
		t.Fatalf("stored: %+v", tk)
	}
	if len(tk.History) != 1 || len(tk.History[0].Parts) != 1 || tk.History[0].Parts[0].Text() != "question" {
		t.Fatalf("history: %+v", tk.History)
	}
	// Disk path OCC.
	if _, err := b.Agent("a").Update(alice, &taskstore.UpdateRequest{Task: done, PrevVersion: 1}); !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("disk stale: %v", err)
	}
	list, err := b.Agent("a").List(alice, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 1 {
		t.Fatalf("list: %+v %v", list, err)
	}
	list, _ = b.Agent("a").List(bob, &a2a.ListTasksRequest{})
	if len(list.Tasks) != 0 {
		t.Fatalf("bob lists %d", len(list.Tasks))
	}
}

func TestRunningFailedAtStartAndTTL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	b := open(t, path, Options{Agents: []string{"a"}, Now: clock})
	alice := asUser("app/alice")
	s := b.Agent("a")
	if _, err := s.Create(alice, newTask("run", a2a.TaskStateSubmitted)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(alice, &taskstore.UpdateRequest{Task: newTask("run", a2a.TaskStateWorking), PrevVersion: 1}); err != nil {
		t.Fatal(err)
	}
	b.Close() // as if the vessel stopped mid-turn
	b = open(t, path, Options{Agents: []string{"a"}, Now: clock})
	got, err := b.Agent("a").Get(alice, "run")
	if err != nil || got.Task.Status.State != a2a.TaskStateFailed || got.Task.Status.Message.Parts[0].Text() != RestartReason {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	b.Close()
	// A TTL shorter than the task's age deletes it when the store opens.
	now = now.Add(2 * time.Hour)
	b = open(t, path, Options{Agents: []string{"a"}, TTL: time.Hour, Now: clock})
	defer b.Close()
	if _, err := b.Agent("a").Get(alice, "run"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("after TTL: %v", err)
	}
}

func TestNoOwner(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "t.sqlite"), Options{Agents: []string{"a"}})
	defer b.Close()
	if _, err := b.Agent("a").Get(context.Background(), "x"); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("%v", err)
	}
	if _, err := Open(context.Background(), "mysql://x", Options{}); err == nil {
		t.Fatal("unknown scheme accepted")
	}
}

func TestCleanupLoop(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "t.sqlite"), Options{Agents: []string{"a"}, TTL: 50 * time.Millisecond, CleanupInterval: 20 * time.Millisecond})
	defer b.Close()
	alice := asUser("app/alice")
	if _, err := b.Agent("a").Create(alice, newTask("old", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := b.Agent("a").Get(alice, "old")
		if errors.Is(err, a2a.ErrTaskNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task not expired: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestShrink(t *testing.T) {
	task := newTask("t", a2a.TaskStateWorking)
	task.History = append(task.History, &a2a.Message{ID: "s", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart("status")}})
	tr := &a2a.Artifact{ID: "tr", Name: "transcript", Parts: a2a.ContentParts{a2a.NewTextPart("x")}}
	ans := &a2a.Artifact{ID: "an", Name: "answer", Parts: a2a.ContentParts{a2a.NewTextPart("a")}}
	task.Artifacts = []*a2a.Artifact{tr, ans}
	// A transcript chunk that is not the last stays.
	Shrink(&taskstore.UpdateRequest{Task: task, Event: &a2a.TaskArtifactUpdateEvent{Artifact: tr}})
	if len(task.Artifacts) != 2 || len(task.History) != 1 || len(task.History[0].Parts) != 1 {
		t.Fatalf("%+v", task)
	}
	Shrink(&taskstore.UpdateRequest{Task: task, Event: &a2a.TaskArtifactUpdateEvent{Artifact: tr, LastChunk: true}})
	if len(task.Artifacts) != 1 || task.Artifacts[0] != ans {
		t.Fatalf("transcript kept: %+v", task.Artifacts)
	}
	Shrink(&taskstore.UpdateRequest{Task: task, Event: &a2a.TaskArtifactUpdateEvent{Artifact: ans, LastChunk: true}})
	if len(task.Artifacts) != 1 {
		t.Fatal("answer dropped")
	}
}

// TestPushOf: what a stored update is worth to the push configs: a
// push-worthy event reporting the stored state is pushed as it is; a task
// the SDK failed through another event (or none) is pushed its stored
// FAILED status; working updates, artifacts and pauses' artifacts are not.
func TestPushOf(t *testing.T) {
	task := func(st a2a.TaskState) *a2a.Task {
		return &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: st}}
	}
	status := func(st a2a.TaskState) *a2a.TaskStatusUpdateEvent {
		return &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: st}}
	}
	art := &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: &a2a.Artifact{ID: "a"}}
	snap := task(a2a.TaskStateInputRequired)
	for _, c := range []struct {
		name  string
		event a2a.Event
		task  *a2a.Task
		same  bool // the event itself is pushed
		want  a2a.TaskState
	}{
		{"completed", status(a2a.TaskStateCompleted), task(a2a.TaskStateCompleted), true, a2a.TaskStateCompleted},
		{"paused", status(a2a.TaskStateInputRequired), task(a2a.TaskStateInputRequired), true, a2a.TaskStateInputRequired},
		{"auth", status(a2a.TaskStateAuthRequired), task(a2a.TaskStateAuthRequired), true, a2a.TaskStateAuthRequired},
		{"snapshot", snap, snap, true, a2a.TaskStateInputRequired},
		{"working", status(a2a.TaskStateWorking), task(a2a.TaskStateWorking), false, ""},
		{"artifact while paused", art, task(a2a.TaskStateInputRequired), false, ""},
		{"failed by the SDK on an artifact", art, task(a2a.TaskStateFailed), false, a2a.TaskStateFailed},
		{"failed by the SDK on its end", status(a2a.TaskStateCompleted), task(a2a.TaskStateFailed), false, a2a.TaskStateFailed},
		{"failed by the SDK on no event", nil, task(a2a.TaskStateFailed), false, a2a.TaskStateFailed},
	} {
		p := PushOf(c.event, c.task)
		switch {
		case c.want == "":
			if p != nil {
				t.Errorf("%s: pushed %+v, want nothing", c.name, p)
			}
		case p == nil:
			t.Errorf("%s: nothing pushed, want %s", c.name, c.want)
		case p.State != c.want || (c.same && p.Event != c.event):
			t.Errorf("%s: pushed %s %T, want %s (the event itself: %v)", c.name, p.State, p.Event, c.want, c.same)
		case !c.same:
			su, ok := p.Event.(*a2a.TaskStatusUpdateEvent)
			if !ok || su.TaskID != "t" || su.ContextID != "c" || su.Status.State != c.want {
				t.Errorf("%s: pushed %+v, want a status update of the stored status", c.name, p.Event)
			}
		}
	}
}
