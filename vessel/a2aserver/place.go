package a2aserver

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
)

// turnPlace is one execution's admitted place under the [limits] turn
// caps. It is freed in one way for every outcome: just before the turn's
// outcome leaves its goroutine, so a caller that sends its next request
// on that outcome finds the place free, and not before the loop has
// returned. By then a completed, failed, incomplete, rejected or cancelled
// turn's work is over (its tool calls and its sandbox workspace ended); a
// paused turn's calls are stopped but its workspace is kept for the
// resume, which takes a place of its own (selfPlace for the vessel's).
// One outcome can leave earlier: CancelTask sends CANCELED after
// cancelWait even if the turn has not stopped, and such a turn keeps its
// place until it does. The ticket frees its place once
// (admission.Ticket.Release), so the calls after the first do nothing.
type turnPlace struct{ t *admission.Ticket }

// claimPlace takes over the place the request was admitted with (nil, so
// a no-op, for an execution the SDK started without one).
func claimPlace(ctx context.Context) turnPlace { return turnPlace{ticketFrom(ctx).Claim()} }

// free gives the place back; only the first call counts.
func (p turnPlace) free() { p.t.Release() }

// freeing wraps the execution's yield: the place is freed before an event
// that ends the turn's work leaves (endsTurn). The other outcome, a
// cancelled turn's result handed to CancelTask, frees it in drive.
func (p turnPlace) freeing(yield func(a2a.Event, error) bool) func(a2a.Event, error) bool {
	return func(ev a2a.Event, err error) bool {
		if endsTurn(ev, err) {
			p.free()
		}
		return yield(ev, err)
	}
}

// endsTurn says whether an event ends the execution: an error, a final
// status (completed, failed, canceled, rejected) or a pause for input.
func endsTurn(ev a2a.Event, err error) bool {
	if err != nil {
		return true
	}
	up, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok {
		return false
	}
	s := up.Status.State
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// selfPollInterval is how often a resume the vessel sends itself looks
// again for a place while it waits: other replicas free places without
// signalling this one (admission.Controller.Freed).
const selfPollInterval = time.Second

// selfPlace takes the place of a resume the vessel sends itself (an
// approval's timeout, or the shutdown that ends a paused turn) for the
// paused turn's owner, app and agent, so that paused turns cannot all
// resume at once outside the [limits] turn caps. A timeout's resume,
// which runs the turn on (its calls refused, the model called again),
// waits for a place like no caller can, but in turn: it tries again each
// time a place is freed, for as long as the pause still waits for that
// approval and the server runs; ok is false when it stopped waiting, and
// nothing is to be sent. A shutdown's resume only ends the turn (its
// workspace ended, its task failed): it is counted at once, over the caps
// if need be, so that stopping never waits on a caller's turns. With no
// caller to count for (who is nil: a turn started without one) or no
// admission, the ticket is nil and ok true.
func (e *executor) selfPlace(taskID, approvalID string, who *admission.Who, shutdown bool) (t *admission.Ticket, ok bool) {
	if who == nil || e.srv == nil || e.srv.adm == nil {
		return nil, true
	}
	adm := e.srv.adm
	if shutdown {
		return adm.Forwarded(*who), true
	}
	for {
		freed := adm.Freed()
		if t, err := adm.Turn(*who); err == nil {
			return t, true
		}
		if !e.awaits(taskID, approvalID) {
			return nil, false
		}
		select {
		case <-freed:
		case <-time.After(selfPollInterval):
		case <-e.srv.stop:
			return nil, false
		}
	}
}

// awaits reports whether the turn of taskID still waits for approvalID.
func (e *executor) awaits(taskID, approvalID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	pt := e.waiting[taskID]
	return pt != nil && pt.pause != nil && pt.pause.Request.ApprovalID == approvalID
}
