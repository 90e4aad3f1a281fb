package a2aserver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// placeWork records the turn's work: its tool call and its sandbox
// workspace, each counted once it is over.
type placeWork struct {
	toolsDone atomic.Int32
	ended     atomic.Int32
}

func (w *placeWork) EndTurn(context.Context, string) error { w.ended.Add(1); return nil }

// placeTool is the tool "x", whose calls count when they return.
type placeTool struct{ w *placeWork }

func (placeTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: "x"}}
}
func (placeTool) Scope() string { return "" }
func (t placeTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	t.w.toolsDone.Add(1)
	return &tools.Result{Output: "ok"}, nil
}

// placeModel calls the tool x once, then ends the turn as end says; with
// block it waits for the turn to be stopped instead, with blockEnd once
// the tool call is done.
type placeModel struct {
	end             func() (*model.Response, error)
	block, blockEnd bool
	started         chan struct{}
	// With blockEnd, stopped (when set) is closed once the turn is
	// stopped, and the call returns when release is closed.
	stopped, release chan struct{}
}

func (m *placeModel) Complete(ctx context.Context, req *model.Request, _ model.Handler) (*model.Response, error) {
	toolDone := req.Messages[len(req.Messages)-1].Role == "tool"
	if m.block || (m.blockEnd && toolDone) {
		close(m.started)
		<-ctx.Done()
		if m.stopped != nil {
			close(m.stopped)
			<-m.release
		}
		return nil, context.Cause(ctx)
	}
	if !toolDone {
		return &model.Response{ToolCalls: []transcript.ToolCall{{ID: "1", Type: "function",
			Function: transcript.FunctionCall{Name: "x", Arguments: "{}"}}}}, nil
	}
	return m.end()
}

func placeExecutor(m loop.Modeler, w *placeWork, policy *approval.Policy) *executor {
	met := NewMetrics(prometheus.NewRegistry())
	return &executor{srv: &Server{}, agent: &settings.Agent{ID: "field-guide"}, log: zap.NewNop(), met: met.forAgent("field-guide", "scripted"),
		deadline: time.Minute, policy: policy,
		loopCfg: loop.Config{Model: m, Prompt: func() (string, error) { return "p", nil }, Ender: w},
		running: map[string]*run{}, waiting: map[string]*pausedTurn{}, cancelled: map[string]time.Time{}}
}

// admitted is a turn admitted for owner o at max_turns_per_owner = 1, as
// the request carries it to the executor.
func admitted(t *testing.T) (*admission.Controller, context.Context, *admission.Ticket) {
	t.Helper()
	c := admission.New(settings.Limits{MaxTurnsPerOwner: 1}, nil)
	tk, err := c.Turn(admission.Who{Owner: "o", App: "app:a", Agent: "field-guide"})
	if err != nil {
		t.Fatal(err)
	}
	return c, context.WithValue(context.Background(), ticketKey{}, tk), tk
}

func placeContext(text string) *a2asrv.ExecutorContext {
	return &a2asrv.ExecutorContext{TaskID: "t1", ContextID: "c1", User: a2asrv.NewAuthenticatedUser("o", nil),
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}

// ownerTurns is the owner's turns the controller counts.
func ownerTurns(c *admission.Controller) int {
	_, n, _, _ := c.Counts("o")
	return n
}

// TestPlaceFreedBeforeTheEnd: every outcome of a turn frees its
// max_turns_per_owner place before the event that ends the turn leaves
// (so a caller sending its next request on it is admitted), never before
// the turn's tool call and its sandbox workspace are over, and exactly
// once (a second release would count the owner at -1 turns).
func TestPlaceFreedBeforeTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		end        func() (*model.Response, error)
		policy     *approval.Policy
		state      a2a.TaskState
		worked     bool // the turn ran its tool call and ended its workspace
	}{
		{name: "completed", text: "hi", end: func() (*model.Response, error) { return &model.Response{Content: "done"}, nil },
			state: a2a.TaskStateCompleted, worked: true},
		{name: "failed", text: "hi", end: func() (*model.Response, error) { return nil, errors.New("model down") },
			state: a2a.TaskStateFailed, worked: true},
		{name: "incomplete", text: "hi", end: func() (*model.Response, error) {
			return &model.Response{Content: "cut"}, &model.IncompleteError{Reason: model.IncompleteLength}
		}, state: a2a.TaskStateFailed, worked: true},
		{name: "rejected", text: "", state: a2a.TaskStateRejected},
		{name: "paused", text: "hi", policy: approval.FromSettings(&settings.Approval{Tools: []string{"x"}}), state: a2a.TaskStateInputRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &placeWork{}
			e := placeExecutor(&placeModel{end: tc.end}, w, tc.policy)
			c, ctx, tk := admitted(t)
			ctx = withTools(ctx, []tools.Tool{placeTool{w}})
			ec := placeContext(tc.text)
			if tc.text == "" {
				ec.Message = a2a.NewMessage(a2a.MessageRoleUser)
			}
			var last a2a.TaskState
			for ev, err := range e.Execute(ctx, ec) {
				if err != nil {
					t.Fatal(err)
				}
				up, ok := ev.(*a2a.TaskStatusUpdateEvent)
				if !ok || !endsTurn(ev, nil) {
					if n := ownerTurns(c); n != 1 {
						t.Fatalf("%T before the end: the owner counts %d turns, want 1", ev, n)
					}
					continue
				}
				last = up.Status.State
				if n := ownerTurns(c); n != 0 {
					t.Fatalf("%s left while the owner still counts %d turns", last, n)
				}
				if tc.worked && (w.toolsDone.Load() != 1 || w.ended.Load() != 1) {
					t.Fatalf("%s left before the work ended: %d tool calls done, %d workspaces ended", last, w.toolsDone.Load(), w.ended.Load())
				}
			}
			tk.Done() // the request's end
			if last != tc.state {
				t.Fatalf("ended %s, want %s", last, tc.state)
			}
			if turns, n, _, _ := c.Counts("o"); turns != 0 || n != 0 {
				t.Fatalf("after the turn: %d turns, %d for the owner, want 0 (released once)", turns, n)
			}
			e.takePaused("t1") // stops a pause's timer
		})
	}
}

// TestCancelledPlaceFreedBeforeTheEnd: a cancelled turn's CANCELED status
// leaves through CancelTask; the place is free by then, and freed once.
func TestCancelledPlaceFreedBeforeTheEnd(t *testing.T) {
	w := &placeWork{}
	m := &placeModel{block: true, started: make(chan struct{})}
	e := placeExecutor(m, w, nil)
	c, ctx, tk := admitted(t)
	ctx = withTools(ctx, nil)
	ec := placeContext("hi")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range e.Execute(ctx, ec) {
		}
	}()
	<-m.started
	var last a2a.TaskState
	for ev := range e.Cancel(context.Background(), ec) {
		last = ev.(*a2a.TaskStatusUpdateEvent).Status.State
		if n := ownerTurns(c); n != 0 {
			t.Fatalf("%s left while the owner still counts %d turns", last, n)
		}
		if w.ended.Load() != 1 {
			t.Fatal("CANCELED left before the workspace ended")
		}
	}
	<-done
	tk.Done()
	if last != a2a.TaskStateCanceled {
		t.Fatalf("ended %s", last)
	}
	if turns, n, _, _ := c.Counts("o"); turns != 0 || n != 0 {
		t.Fatalf("after the turn: %d turns, %d for the owner, want 0 (released once)", turns, n)
	}
}

// pausedThenDecided runs a turn that pauses on its call of x (its own
// admitted place, given back), then hands the executor the owner's approval
// as the SDK does: a message on the task waiting for input, admitted with a
// place of its own, which the resumed turn holds (it is returned with the
// controller, the decision's context and its ExecutorContext).
func pausedThenDecided(t *testing.T, e *executor, w *placeWork) (*admission.Controller, context.Context, *a2asrv.ExecutorContext, *admission.Ticket) {
	t.Helper()
	c, ctx, tk := admitted(t)
	ctx = withTools(ctx, []tools.Tool{placeTool{w}})
	var last a2a.TaskState
	for ev, err := range e.Execute(ctx, placeContext("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		if up, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			last = up.Status.State
		}
	}
	tk.Done()
	if last != a2a.TaskStateInputRequired || ownerTurns(c) != 0 {
		t.Fatalf("before the decision: %s, the owner counts %d turns", last, ownerTurns(c))
	}
	e.mu.Lock()
	req := e.waiting["t1"].pause.Request
	e.mu.Unlock()
	dk, err := c.Turn(admission.Who{Owner: "o", App: "app:a", Agent: "field-guide"})
	if err != nil {
		t.Fatal(err)
	}
	dctx := withTools(context.WithValue(context.Background(), ticketKey{}, dk), []tools.Tool{placeTool{w}})
	ec := placeContext("")
	ec.Message = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"type": approval.TypeDecision,
		"approval_id": req.ApprovalID, "decisions": []any{map[string]any{"call_id": req.Calls[0].CallID, "decision": "approve"}}}))
	ec.StoredTask = &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}
	return c, dctx, ec, dk
}

// TestResumedPlaceFreedBeforeTheEnd: a turn resumed by its owner's
// decision holds the decision's place through its work (the place goes
// from Execute through resume into drive) and frees it, once, before its
// final status leaves.
func TestResumedPlaceFreedBeforeTheEnd(t *testing.T) {
	w := &placeWork{}
	e := placeExecutor(&placeModel{end: func() (*model.Response, error) { return &model.Response{Content: "done"}, nil }}, w,
		approval.FromSettings(&settings.Approval{Tools: []string{"x"}}))
	c, ctx, ec, dk := pausedThenDecided(t, e, w)
	var last a2a.TaskState
	for ev, err := range e.Execute(ctx, ec) {
		if err != nil {
			t.Fatal(err)
		}
		if !endsTurn(ev, nil) {
			if n := ownerTurns(c); n != 1 {
				t.Fatalf("%T while the resumed turn works: the owner counts %d turns, want 1", ev, n)
			}
			continue
		}
		last = ev.(*a2a.TaskStatusUpdateEvent).Status.State
		if n := ownerTurns(c); n != 0 {
			t.Fatalf("%s left while the owner still counts %d turns", last, n)
		}
		if w.toolsDone.Load() != 1 || w.ended.Load() != 1 {
			t.Fatalf("%s left before the work ended: %d tool calls, %d workspaces ended", last, w.toolsDone.Load(), w.ended.Load())
		}
	}
	dk.Done()
	if last != a2a.TaskStateCompleted {
		t.Fatalf("ended %s", last)
	}
	if turns, n, _, _ := c.Counts("o"); turns != 0 || n != 0 {
		t.Fatalf("after the turn: %d turns, %d for the owner, want 0 (released once)", turns, n)
	}
}

// TestResumedCancelledPlaceFreedBeforeTheEnd: a resumed turn cancelled
// while it works frees the decision's place before CancelTask's CANCELED
// leaves, and once. The executor's goroutine is held (on e.mu, which it
// takes once the turn is over) while CANCELED leaves, so only the place
// drive frees can be free by then, not the one Execute frees on return.
func TestResumedCancelledPlaceFreedBeforeTheEnd(t *testing.T) {
	w := &placeWork{}
	m := &placeModel{blockEnd: true, started: make(chan struct{}), stopped: make(chan struct{}), release: make(chan struct{})}
	e := placeExecutor(m, w, approval.FromSettings(&settings.Approval{Tools: []string{"x"}}))
	c, ctx, ec, dk := pausedThenDecided(t, e, w)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range e.Execute(ctx, ec) {
		}
	}()
	<-m.started
	if n := ownerTurns(c); n != 1 {
		t.Fatalf("the resumed turn works while the owner counts %d turns, want 1", n)
	}
	type end struct {
		state      a2a.TaskState
		turns, ews int32
	}
	ends := make(chan end, 1)
	go func() {
		var last end
		for ev := range e.Cancel(context.Background(), ec) {
			last = end{ev.(*a2a.TaskStatusUpdateEvent).Status.State, int32(ownerTurns(c)), w.ended.Load()}
		}
		ends <- last
	}()
	<-m.stopped // Cancel has found the turn and stopped it
	e.mu.Lock()
	close(m.release)
	var got end
	select {
	case got = <-ends:
	case <-time.After(cancelWait + 5*time.Second):
		e.mu.Unlock()
		t.Fatal("CancelTask did not end")
	}
	e.mu.Unlock()
	<-done
	dk.Done()
	if got.state != a2a.TaskStateCanceled || got.turns != 0 || got.ews != 1 {
		t.Fatalf("%s left while the owner counted %d turns, %d workspaces ended; want CANCELED, 0, 1", got.state, got.turns, got.ews)
	}
	if turns, n, _, _ := c.Counts("o"); turns != 0 || n != 0 {
		t.Fatalf("after the turn: %d turns, %d for the owner, want 0 (released once)", turns, n)
	}
}
