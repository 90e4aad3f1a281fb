package a2aserver

import (
	"context"
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// oneTask is a store holding one task; only Get is used by After.
type oneTask struct {
	taskstore.Store
	task *a2a.Task
}

func (o oneTask) Get(_ context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	if o.task == nil || id != o.task.ID {
		return nil, a2a.ErrTaskNotFound
	}
	return &taskstore.StoredTask{Task: o.task, Version: 1}, nil
}

// A cancel that loses the race with the turn's end must not surface as an
// internal error (-32603): the caller gets "not cancelable" for a finished
// task, or the task itself when it did end cancelled.
func TestCancelRacingTheTurnsEnd(t *testing.T) {
	internal := errors.New("failed to cancel: setup failed: task is in a terminal state")
	cases := []struct {
		name        string
		state       a2a.TaskState
		in          error
		wantErr     error
		wantPayload bool
	}{
		{"completed while cancelling", a2a.TaskStateCompleted, internal, a2a.ErrTaskNotCancelable, false},
		{"failed while cancelling", a2a.TaskStateFailed, internal, a2a.ErrTaskNotCancelable, false},
		{"cancelled by the race", a2a.TaskStateCanceled, internal, nil, true},
		{"still running: left alone", a2a.TaskStateWorking, internal, internal, false},
		{"not found: left alone", a2a.TaskStateCompleted, a2a.ErrTaskNotFound, a2a.ErrTaskNotFound, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: c.state}}
			i := &interceptor{store: oneTask{task: task}}
			ctx := context.WithValue(context.Background(), cancelKey{}, a2a.TaskID("t1"))
			resp := &a2asrv.Response{Err: c.in}
			if err := i.After(ctx, nil, resp); err != nil {
				t.Fatal(err)
			}
			if c.wantErr == nil && resp.Err != nil || c.wantErr != nil && !errors.Is(resp.Err, c.wantErr) {
				t.Fatalf("error %v, want %v", resp.Err, c.wantErr)
			}
			if got := resp.Payload != nil; got != c.wantPayload {
				t.Fatalf("payload %v, want present=%v", resp.Payload, c.wantPayload)
			}
		})
	}
	// Other methods are never touched.
	i := &interceptor{store: oneTask{task: &a2a.Task{ID: "t1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}}}
	resp := &a2asrv.Response{Err: internal}
	if err := i.After(context.Background(), nil, resp); err != nil || resp.Err != internal {
		t.Fatalf("a non-cancel call was changed: %v", resp.Err)
	}
}
