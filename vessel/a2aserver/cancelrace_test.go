package a2aserver_test

import (
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// TestApprovalCancelRacesApprove races a CancelTask with an approving
// decision on a paused turn 200 times. Whichever the vessel takes first,
// the task ends CANCELED: never FAILED as if the paused turn had been lost
// (it was not: the cancel took it), never COMPLETED (the approved call,
// a sleep, only ends when cancelled).
func TestApprovalCancelRacesApprove(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}}), func(d *settings.Deployment) {
		// 200 rounds of three requests each: the rate limit is not what
		// this test is about.
		d.Limits.RequestsPerSecondPerApp, d.Limits.RequestBurstPerApp = 1e6, 1e6
	})
	alice := as(h.keyApp1, "alice")
	const rounds = 200
	states := map[a2a.TaskState]int{}
	for i := range rounds {
		task, err := h.send(alice, textMsg("#script:sleeptool go"))
		if err != nil {
			t.Fatal(err)
		}
		req := pending(t, task)
		var wg sync.WaitGroup
		wg.Go(func() {
			_, _ = h.client(h.agentID).SendMessage(alice, &a2a.SendMessageRequest{
				Message: decide(task, req.ApprovalID, verdict("s1", "approve")),
				Config:  &a2a.SendMessageConfig{ReturnImmediately: true}})
		})
		wg.Go(func() { _, _ = h.client(h.agentID).CancelTask(alice, &a2a.CancelTaskRequest{ID: task.ID}) })
		wg.Wait()
		end := h.waitState(alice, task.ID)
		states[end.Status.State]++
		if end.Status.State != a2a.TaskStateCanceled {
			msg := ""
			if end.Status.Message != nil && len(end.Status.Message.Parts) > 0 {
				msg = end.Status.Message.Parts[0].Text()
			}
			t.Errorf("round %d: the task ended %s (%s)", i, end.Status.State, msg)
		}
	}
	if states[a2a.TaskStateCanceled] != rounds {
		t.Fatalf("end states of %d races: %v", rounds, states)
	}
}
