// AstralVessel patch test (see third_party/a2a-go/PATCHES.md).

package a2asrv_test

import (
	"context"
	"iter"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// pausingAgent pauses every task in input-required and, before its
// execution returns, waits for release: the execution is still registered
// when the client has the paused task and sends CancelTask.
type pausingAgent struct {
	release  chan struct{} // closed by the test: the paused execution returns
	canceled chan struct{} // closed by Cancel once it wrote its event
}

func (a *pausingAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, nil), nil)
		<-a.release
	}
}

func (a *pausingAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
		close(a.canceled)
	}
}

// TestCancelWhilePausing: a CancelTask that meets an execution which paused
// (input-required was its last event) but has not ended yet cancels the
// paused task. Unpatched, its cancel event went to the execution's pipe,
// which nobody read any more, and CancelTask failed with "task was in
// non-cancelable state: input-required".
func TestCancelWhilePausing(t *testing.T) {
	ctx := t.Context()
	agent := &pausingAgent{release: make(chan struct{}), canceled: make(chan struct{})}
	h := a2asrv.NewHandler(agent)
	res, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("SendMessage: %#v, want an input-required task", res)
	}
	type result struct {
		task *a2a.Task
		err  error
	}
	done := make(chan result, 1)
	go func() {
		ct, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		done <- result{ct, err}
	}()
	<-agent.canceled // the cancel event is in the paused execution's pipe
	close(agent.release)
	got := <-done
	if got.err != nil || got.task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %v %v", got.err, got.task)
	}
	stored, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || stored.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask after the cancel: %v %v", err, stored)
	}
}
