package a2aserver

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
)

// turnPlace is one execution's admitted place under the [limits] turn
// caps. It is freed in one way for every outcome (completed, failed,
// cancelled, incomplete, rejected, paused): just before the turn's
// outcome leaves its goroutine, so a caller that sends its next request
// on that outcome finds the place free, and never before: every outcome
// leaves once the turn's work is over (the loop has returned, its tool
// calls and its sandbox workspace ended). The ticket frees its place once
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
