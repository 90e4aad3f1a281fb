package main

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/stress/internal/stack"
	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// loadTurn is the load script's turn: one bash call, then the answer.
const loadTurn = "#script:load approve me"

// TestLocalStackApprovalAcrossReplicas runs two vessel processes on PostgreSQL with
// bash needing approval: a turn pauses on replica A, the owner's decision
// goes to replica B, which forwards it to A, and the turn finishes; then a
// turn pauses on A and A is killed: B fails the task once A's lease
// expires, and a decision sent to B is refused.
func TestLocalStackApprovalAcrossReplicas(t *testing.T) {
	ctx, st, onA, onB := twoReplicas(t, "vessel_lease_ttl=3s", "approver", func(c *stack.Config) {
		c.AgentTOML = "[agents.approval]\ntools = [\"bash\"]\n"
	})
	res, err := onA.Send(ctx, client.TurnRequest{Text: loadTurn})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending()
	if p == nil || len(p.Calls) != 1 || p.Calls[0].Tool != "bash" {
		t.Fatalf("turn on A: state %s, pending %+v", res.State, p)
	}
	got, err := onB.Get(ctx, p.TaskID)
	if err != nil || got.Pending() == nil || got.Pending().ApprovalID != p.ApprovalID {
		t.Fatalf("GetTask on B: %v %+v", err, got)
	}
	done, err := onB.DecideSend(ctx, p, []client.Decision{client.Approve(p.Calls[0].CallID)})
	if err != nil {
		t.Fatal(err)
	}
	if done.State != string(a2a.TaskStateCompleted) {
		t.Fatalf("after the decision on B: %s", done.State)
	}

	// A paused turn whose replica dies fails; nothing can resume it.
	res, err = onA.Send(ctx, client.TurnRequest{Text: loadTurn})
	if err != nil {
		t.Fatal(err)
	}
	p = res.Pending()
	if p == nil {
		t.Fatalf("second turn on A: %s", res.State)
	}
	st.Vessels[0].Kill()
	for {
		got, err := onB.Get(ctx, p.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == string(a2a.TaskStateFailed) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the paused task of the dead replica is still %s", got.State)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := onB.DecideSend(ctx, p, []client.Decision{client.Approve(p.Calls[0].CallID)}); err == nil {
		t.Fatal("a decision on the failed task was taken")
	}
}
