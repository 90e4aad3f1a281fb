package a2aserver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
)

// Issue 21 (3): turns a crashed vessel left on a sandbox are ended, so their
// bytes stop counting against their users; turns some vessel may still
// run are kept.
func TestSweepEndsAbandonedTurns(t *testing.T) {
	h := newHarness(t)
	// A finished turn of app1/alice.
	task, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish?")})
	if err != nil {
		t.Fatal(err)
	}
	done, ok := task.(*a2a.Task)
	if !ok || !done.Status.State.Terminal() {
		t.Fatalf("want a finished task, got %#v", task)
	}
	// A task still working, as on another replica.
	octx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser("app1/alice", nil)
	elsewhere, unknown, fresh := string(a2a.NewTaskID()), string(a2a.NewTaskID()), string(a2a.NewTaskID())
	working := &a2a.Task{ID: a2a.TaskID(elsewhere), ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if _, err := h.backend.Agent(h.agentID).Create(octx, working); err != nil {
		t.Fatal(err)
	}
	owner := "app1/alice"
	idle := uint64(2 * 60 * 1000)
	h.sandbox.mu.Lock()
	h.sandbox.turns = []*sandboxv1.TurnInfo{
		{TurnId: string(done.ID), Owner: owner, IdleMs: idle},                          // finished: end
		{TurnId: unknown, Owner: owner, IdleMs: idle},                                  // no such task: end
		{TurnId: elsewhere, Owner: owner, IdleMs: idle},                                // working: keep
		{TurnId: string(a2a.NewTaskID()), Owner: owner, IdleMs: idle, RunningCalls: 1}, // a call runs: keep
		{TurnId: fresh, Owner: owner, IdleMs: 1000},                                    // just made: keep
		{TurnId: "probe-turn", Owner: owner, IdleMs: idle},                             // not a task id: keep
	}
	h.sandbox.ended = nil
	h.sandbox.mu.Unlock()
	h.srv.SweepTurns(context.Background())
	ended, _, _ := h.sandbox.stats()
	slices.Sort(ended)
	want := []string{string(done.ID), unknown}
	slices.Sort(want)
	if !slices.Equal(ended, want) {
		t.Fatalf("ended %v, want %v", ended, want)
	}
	if n := h.logs.FilterMessage("ended an abandoned turn on its sandbox").Len(); n != 2 {
		t.Fatalf("%d log lines for ended turns, want 2", n)
	}
}
