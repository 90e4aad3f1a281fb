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

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/model"
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
// block it waits for the turn to be stopped instead.
type placeModel struct {
	end     func() (*model.Response, error)
	block   bool
	started chan struct{}
}

func (m *placeModel) Complete(ctx context.Context, req *model.Request, _ model.Handler) (*model.Response, error) {
	if m.block {
		close(m.started)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	if req.Messages[len(req.Messages)-1].Role != "tool" {
		return &model.Response{ToolCalls: []transcript.ToolCall{{ID: "1", Type: "function",
			Function: transcript.FunctionCall{Name: "x", Arguments: "{}"}}}}, nil
	}
	return m.end()
}

func placeExecutor(m loop.Modeler, w *placeWork, policy *approval.Policy) *executor {
	met := NewMetrics(prometheus.NewRegistry())
	return &executor{srv: &Server{}, agent: &spec.Agent{ID: "field-guide"}, log: zap.NewNop(), met: met.forAgent("field-guide", "scripted"),
		deadline: time.Minute, policy: policy,
		loopCfg: loop.Config{Model: m, Prompt: func() (string, error) { return "p", nil }, Ender: w},
		running: map[string]*run{}, waiting: map[string]*pausedTurn{}, cancelled: map[string]time.Time{}}
}

// admitted is a turn admitted for owner o at max_turns_per_owner = 1, as
// the request carries it to the executor.
func admitted(t *testing.T) (*admission.Controller, context.Context, *admission.Ticket) {
	t.Helper()
	c := admission.New(spec.Limits{MaxTurnsPerOwner: 1}, nil)
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
		{name: "paused", text: "hi", policy: approval.FromSpec(&spec.Approval{Tools: []string{"x"}}), state: a2a.TaskStateInputRequired},
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
