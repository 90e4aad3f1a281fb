// AstralVessel patch test (see third_party/a2a-go/PATCHES.md).

package taskexec

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/internal/eventpipe"
	"github.com/a2aproject/a2a-go/v2/internal/taskupdate"
)

// pauseFactory runs executions that pause (input-required) and return once
// release is closed, and cancelers that emit canceled; beforeCancel runs
// before the first canceler writes.
type pauseFactory struct {
	release      chan struct{}
	beforeCancel func()
}

type funcExecutor func(context.Context, eventpipe.Writer) error

func (f funcExecutor) Execute(ctx context.Context, w eventpipe.Writer) error { return f(ctx, w) }
func (f funcExecutor) Cancel(ctx context.Context, w eventpipe.Writer) error  { return f(ctx, w) }

type noCleaner struct{}

func (noCleaner) Cleanup(context.Context, a2a.SendMessageResult, error) {}

// stateProcessor ends on a final event with a task in that event's state.
type stateProcessor struct{ tid a2a.TaskID }

func (p stateProcessor) Process(_ context.Context, e a2a.Event) (*ProcessorResult, error) {
	if !taskupdate.IsFinal(e) {
		return &ProcessorResult{}, nil
	}
	ev := e.(*a2a.TaskStatusUpdateEvent)
	return &ProcessorResult{ExecutionResult: &a2a.Task{ID: p.tid, Status: ev.Status}}, nil
}

func (p stateProcessor) ProcessError(_ context.Context, err error) (a2a.SendMessageResult, error) {
	return nil, err
}

func (f *pauseFactory) CreateExecutor(_ context.Context, tid a2a.TaskID, _ *a2a.SendMessageRequest) (Executor, Processor, Cleaner, error) {
	exec := funcExecutor(func(ctx context.Context, w eventpipe.Writer) error {
		err := w.Write(ctx, &a2a.TaskStatusUpdateEvent{TaskID: tid, Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}})
		<-f.release
		return err
	})
	return exec, stateProcessor{tid}, noCleaner{}, nil
}

func (f *pauseFactory) CreateCanceler(_ context.Context, req *a2a.CancelTaskRequest) (Canceler, Processor, Cleaner, error) {
	before := f.beforeCancel
	f.beforeCancel = nil
	canceler := funcExecutor(func(ctx context.Context, w eventpipe.Writer) error {
		if before != nil {
			before()
		}
		return w.Write(ctx, &a2a.TaskStatusUpdateEvent{TaskID: req.ID, Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}})
	})
	return canceler, stateProcessor{req.ID}, noCleaner{}, nil
}

// TestCancelAfterPausedPipeClosed: a CancelTask that found the execution
// registered, whose cancel event the execution's pipe refuses because the
// paused execution has closed it meanwhile, still cancels the task.
func TestCancelAfterPausedPipeClosed(t *testing.T) {
	ctx := t.Context()
	f := &pauseFactory{release: make(chan struct{})}
	m := NewLocalManager(LocalManagerConfig{Factory: f}).(*localManager)
	sub, err := m.Execute(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go"))})
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	run := m.executions[sub.TaskID()]
	m.mu.Unlock()
	if run == nil {
		t.Fatal("no execution registered")
	}
	// The cancel finds the execution registered (it waits for release), lets
	// it return and writes only once it has closed its pipe and ended.
	f.beforeCancel = func() {
		close(f.release)
		_, _ = run.result.wait(ctx)
	}
	task, err := m.Cancel(ctx, &a2a.CancelTaskRequest{ID: sub.TaskID()})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("Cancel: %v %v", err, task)
	}
}
