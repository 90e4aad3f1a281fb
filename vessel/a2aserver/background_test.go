package a2aserver_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
)

// Issue 17 (1): SendMessage with returnImmediately returns the task at once;
// the turn runs to its end with nobody listening, and GetTask, ListTasks and
// SubscribeToTask follow it; another owner sees none of it.
func TestReturnImmediatelyRunsInTheBackground(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		h := newHarness(t)
		backgroundTurn(t, h, h)
	})
	// Two replicas on one PostgreSQL: started on A, followed on B.
	t.Run("postgres, another replica", func(t *testing.T) {
		dsn := os.Getenv("VESSEL_TEST_POSTGRES")
		testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
		postgres.Register()
		var b [6]byte
		_, _ = rand.Read(b[:])
		schema := "vt_bg_" + hex.EncodeToString(b[:])
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		t.Cleanup(func() { dropSchema(t, dsn, schema) })
		url := dsn + sep + "vessel_schema=" + schema
		a := newHarnessStore(t, url, nil)
		b2 := newHarnessStore(t, url, nil)
		backgroundTurn(t, a, b2)
	})
}

// backgroundTurn starts a turn on start with returnImmediately and follows
// it on follow.
func backgroundTurn(t *testing.T, start, follow *harness) {
	t.Helper()
	h := follow
	alice := as(h.keyApp1, "alice")
	res, err := start.client(start.agentID).SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("#script:slowtext"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	cl := h.client(h.agentID)
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State.Terminal() {
		t.Fatalf("returnImmediately: want a task still running, got %#v", res)
	}
	// The HTTP exchange is over; the turn goes on: once GetTask reports it
	// working, ListTasks does too.
	var got *a2a.Task
	waitFor(t, "the background turn to work", func() bool {
		got, err = cl.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State == a2a.TaskStateWorking
	})
	list, err := cl.ListTasks(alice, &a2a.ListTasksRequest{Status: a2a.TaskStateWorking})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks WORKING while running: %+v %v", list, err)
	}
	if _, err := cl.GetTask(as(h.keyApp1, "bob"), &a2a.GetTaskRequest{ID: task.ID}); err == nil {
		t.Fatal("another owner read the background task")
	}
	// A subscriber that joins later gets the rest of the turn and its end.
	var last a2a.Event
	pieces := 0
	for ev, err := range cl.SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			pieces++
		}
		last = ev
	}
	// The running replica ends with the completed update, another one with
	// the stored completed task (docs/scaling.md).
	var end a2a.TaskState
	switch ev := last.(type) {
	case *a2a.TaskStatusUpdateEvent:
		end = ev.Status.State
	case *a2a.Task:
		end = ev.Status.State
	}
	if end != a2a.TaskStateCompleted {
		t.Fatalf("the subscription ended with %#v, want the completed update or task", last)
	}
	if pieces == 0 {
		t.Fatal("the subscriber got none of the turn's text")
	}
	waitFor(t, "the background turn to finish", func() bool {
		got, err = cl.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
		return err == nil && got.Status.State == a2a.TaskStateCompleted
	})
	if len(got.Artifacts) == 0 {
		t.Fatal("the finished background task has no answer")
	}
}
