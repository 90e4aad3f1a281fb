package a2aserver

// Pausing a turn for approval and resuming it (docs/approvals.md). A paused
// turn lives in memory on the replica that ran it: its loop state (the
// conversation so far, which the vessel never stores) cannot be rebuilt
// elsewhere. Its task waits in TASK_STATE_INPUT_REQUIRED with the request
// in the status message; the owner's decisions come as a message on the
// task, which the SDK hands to Execute (resume). A decision sent to another
// replica is forwarded to this one by the PostgreSQL store's handler.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// TypeTimeout is the data part of the message a pause sends itself when
// its wait ends; only a message the vessel sends itself (timeoutKey) acts
// on it.
const TypeTimeout = "approval.timeout"

// LostReason is the status text of a paused task whose turn this vessel no
// longer holds (it restarted while the task waited).
const LostReason = "the vessel holding this paused turn stopped, so its calls cannot resume; send the message again as a new task"

type extraKey struct{}

func withExtra(ctx context.Context, x approval.Extra) context.Context {
	return context.WithValue(ctx, extraKey{}, x)
}

func extraFrom(ctx context.Context) approval.Extra {
	x, _ := ctx.Value(extraKey{}).(approval.Extra)
	return x
}

// timeoutKey marks the vessel's own timeout message with the approval id
// it ends; shutdownKey marks the message that ends a paused turn because
// the vessel is stopping.
type (
	timeoutKey  struct{}
	shutdownKey struct{}
)

// approvalEvent is the input-required status update carrying r.
func approvalEvent(ec *a2asrv.ExecutorContext, r *approval.Request) *a2a.TaskStatusUpdateEvent {
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewDataPart(r.Data()))
	up := a2a.NewStatusUpdateEvent(ec, a2a.TaskStateInputRequired, msg)
	up.Metadata = map[string]any{EventMetaKey: approval.EventRequired}
	return up
}

// paused records a turn that paused and starts its timer.
func (e *executor) paused(ec *a2asrv.ExecutorContext, pt *pausedTurn, res *loop.Result) {
	pt.pause = res.Pause
	id, contextID := string(ec.TaskID), ec.ContextID
	approvalID := res.Pause.Request.ApprovalID
	pt.contextID = contextID
	e.mu.Lock()
	e.waiting[id] = pt
	who := pt.who
	pt.timer = time.AfterFunc(pt.policy.Timeout, func() { e.timedOut(id, contextID, pt.owner, approvalID, who) })
	e.mu.Unlock()
	calls := make([]string, len(res.Pause.Request.Calls))
	for i, c := range res.Pause.Request.Calls {
		calls[i] = c.Tool
	}
	e.log.Info("turn paused for approval", append(turnFields(ec), zap.String("approval_id", approvalID), zap.Strings("tools", calls))...)
}

// takePaused removes and returns a paused turn, stopping its timer.
func (e *executor) takePaused(id string) *pausedTurn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.takePausedLocked(id)
}

// takePausedLocked is takePaused for a caller that holds mu.
func (e *executor) takePausedLocked(id string) *pausedTurn {
	pt := e.waiting[id]
	if pt == nil {
		return nil
	}
	delete(e.waiting, id)
	pt.timer.Stop()
	return pt
}

// cancelledMemory is how long a cancelled paused turn is remembered for a
// decision that raced its cancel: far longer than the two requests can
// be apart.
const cancelledMemory = 10 * time.Minute

// takePausedToCancel is takePaused for CancelTask: the turn is remembered
// as cancelled, under the same lock, so a decision racing the cancel
// (tookByCancel) ends the task CANCELED too.
func (e *executor) takePausedToCancel(id string) *pausedTurn {
	e.mu.Lock()
	defer e.mu.Unlock()
	pt := e.takePausedLocked(id)
	if pt == nil {
		return nil
	}
	now := time.Now()
	for k, at := range e.cancelled {
		if now.Sub(at) > cancelledMemory {
			delete(e.cancelled, k)
		}
	}
	e.cancelled[id] = now
	return pt
}

// tookByCancel reports (once) whether a CancelTask took the paused turn id.
func (e *executor) tookByCancel(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.cancelled[id]
	delete(e.cancelled, id)
	return ok
}

// holds reports whether the turn runs or waits here.
func (e *executor) holds(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, running := e.running[id]
	_, waiting := e.waiting[id]
	return running || waiting
}

// timedOut sends the paused task the vessel's own timeout message, as its
// owner, through the SDK, so the turn ends (or goes on with its calls
// refused) like any resumed turn, its events stored and pushed.
func (e *executor) timedOut(taskID, contextID, owner, approvalID string, who *admission.Who) {
	t, ok := e.selfPlace(taskID, approvalID, who, false)
	if !ok {
		return
	}
	defer t.Done()
	ctx := context.WithValue(context.Background(), timeoutKey{}, approvalID)
	e.sendSelf(context.WithValue(ctx, ticketKey{}, t), taskID, contextID, owner, approvalID)
}

// endPaused ends every turn paused here with status shutdown (Drain): the
// vessel is stopping and their turns, which live in its memory, cannot go
// on. Their tasks fail and their workspaces are ended.
func (e *executor) endPaused() int {
	e.mu.Lock()
	type one struct {
		id, contextID, owner, approvalID string
		who                              *admission.Who
	}
	var list []one
	for id, pt := range e.waiting {
		list = append(list, one{id, pt.contextID, pt.owner, pt.pause.Request.ApprovalID, pt.who})
	}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range list {
		wg.Go(func() {
			t, _ := e.selfPlace(p.id, p.approvalID, p.who, true)
			defer t.Done()
			ctx := context.WithValue(context.Background(), shutdownKey{}, true)
			e.sendSelf(context.WithValue(ctx, ticketKey{}, t), p.id, p.contextID, p.owner, p.approvalID)
		})
	}
	wg.Wait()
	return len(list)
}

// sendSelf sends a paused task the vessel's own message, as its owner,
// through the SDK (behind the interceptors: it is no caller's decision).
func (e *executor) sendSelf(ctx context.Context, taskID, contextID, owner, approvalID string) {
	if e.self == nil {
		return
	}
	ctx, cc := a2asrv.NewCallContext(ctx, nil)
	cc.User = a2asrv.NewAuthenticatedUser(owner, nil)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"type": TypeTimeout, "approval_id": approvalID}))
	msg.TaskID, msg.ContextID = a2a.TaskID(taskID), contextID
	if _, err := e.self.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}); err != nil {
		e.log.Warn("could not end a paused turn", zap.String(telemetry.FieldTask, taskID), zap.Error(err))
	}
}

// permittedFrom says which tools the deciding call may use: its narrowed
// tool list, or every tool when it was not narrowed.
func permittedFrom(ctx context.Context) func(tool, scope string) bool {
	list, ok := ctx.Value(toolsKey{}).([]tools.Tool)
	if !ok {
		return nil
	}
	return func(tool, _ string) bool {
		return slices.ContainsFunc(list, func(t tools.Tool) bool { return t.Def().Function.Name == tool })
	}
}

// resume handles a message on a task waiting for approval: the owner's
// decisions (checked again here, where the pause lives), or the vessel's
// own timeout message.
func (e *executor) resume(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool, place turnPlace) {
	id := string(ec.TaskID)
	e.mu.Lock()
	pt := e.waiting[id]
	e.mu.Unlock()
	if pt == nil && e.tookByCancel(id) {
		// A CancelTask took the turn between the decision's check and
		// here: the task ends as the cancel ended it.
		e.log.Info("a decision came for a paused turn cancelled meanwhile", turnFields(ec)...)
		yield(statusEvent(ec, a2a.TaskStateCanceled, (&loop.Result{Status: loop.StatusCancelled}).FinishedEvent()), nil)
		return
	}
	if pt == nil {
		// Nothing here to resume: the vessel restarted while the task waited.
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(LostReason))
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateFailed, msg), nil)
		e.log.Warn("a decision came for a paused turn this vessel does not hold", turnFields(ec)...)
		return
	}
	req := pt.pause.Request
	var decisions map[string]approval.Decision
	timeoutFor, isTimeout := ctx.Value(timeoutKey{}).(string)
	_, isShutdown := ctx.Value(shutdownKey{}).(bool)
	switch {
	case isShutdown:
		if e.takePaused(id) == nil {
			return
		}
		res := pt.pause.End(ctx, loop.StatusShutdown, "the vessel was stopping while the turn waited for approval")
		e.finishTurn(ctx, ec, yield, res, true, nil, func(*loop.Result) {})
		return
	case isTimeout && timeoutFor != req.ApprovalID:
		// A timeout of an earlier pause that lost the race with its decision.
		yield(approvalEvent(ec, req), nil)
		return
	case isTimeout && pt.policy.OnTimeout == "fail":
		if e.takePaused(id) == nil {
			return
		}
		res := pt.pause.End(ctx, loop.StatusApprovalTimeout,
			fmt.Sprintf("no decision on the paused calls came within %d seconds", req.TimeoutSeconds))
		e.log.Info("approval timed out; the turn fails", append(turnFields(ec), zap.String("approval_id", req.ApprovalID))...)
		e.finishTurn(ctx, ec, yield, res, true, acceptedModes(ctx), func(*loop.Result) {})
		return
	case isTimeout:
		decisions = map[string]approval.Decision{}
		reason := fmt.Sprintf("no decision came within %d seconds", req.TimeoutSeconds)
		for _, c := range req.Calls {
			decisions[c.CallID] = approval.Decision{CallID: c.CallID, Verdict: approval.Deny, Reason: reason}
		}
		e.log.Info("approval timed out; the waiting calls are refused", append(turnFields(ec), zap.String("approval_id", req.ApprovalID))...)
	default:
		d, err := approval.Parse(ec.Message)
		if err == nil {
			decisions, err = approval.Check(req, d, e.loopCfg.MaxArgumentsBytes, permittedFrom(ctx))
		}
		if err != nil {
			// The interceptor refuses bad decisions with an error before the
			// SDK runs; one that got past it (a race) leaves the task waiting.
			e.log.Info("decision refused", append(turnFields(ec), zap.Error(err))...)
			yield(approvalEvent(ec, req), nil)
			return
		}
	}
	if e.takePaused(id) == nil {
		yield(approvalEvent(ec, req), nil)
		return
	}
	e.log.Info("turn resumed", append(turnFields(ec), zap.String("approval_id", req.ApprovalID))...)
	pause := pt.pause
	pt.pause = nil
	// A caller may add approvals on the decision too, never remove any.
	pt.policy = pt.policy.With(extraFrom(ctx))
	e.drive(ctx, ec, yield, place, pt, func(dctx context.Context, cfg *loop.Config, emit func(loop.Event) bool) *loop.Result {
		return pause.Resume(dctx, cfg, decisions, emit)
	})
}

// checkDecision is the interceptor's check of a message sent on a task:
// decisions go only to a task waiting for approval and must answer its
// request; a task waiting for approval takes nothing else. It runs on the
// replica that got the call, before the SDK or any forwarding.
func checkDecision(ctx context.Context, st *a2a.Task, msg *a2a.Message, maxArgs int) error {
	req, waiting := approval.FromTask(st)
	has := approval.HasDecision(msg)
	switch {
	case !waiting && has:
		state := "unknown"
		if st != nil {
			state = st.Status.State.String()
		}
		return a2a.NewError(a2a.ErrInvalidParams, "the task is not waiting for approval ("+state+"); a decision is only taken while it waits")
	case !waiting:
		return nil
	case !has:
		return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(
			"the task waits for approval of %d tool call(s) (approval %s); answer with an approval.decision data part (docs/approvals.md)",
			len(req.Calls), req.ApprovalID))
	}
	d, err := approval.Parse(msg)
	if err == nil {
		_, err = approval.Check(req, d, maxArgs, permittedFrom(ctx))
	}
	if err != nil {
		return a2a.NewError(a2a.ErrInvalidParams, err.Error())
	}
	return nil
}

// approvalExtra reads what a caller added to the agent's approval policy
// for one call: the X-Vessel-Approve header and a token's vessel_approve
// claim.
func approvalExtra(a *agent, p *auth.Principal, header []string) (approval.Extra, error) {
	if len(header) == 0 && len(p.Approve) == 0 {
		return approval.Extra{}, nil
	}
	var names []string
	for _, t := range a.exec.tools.Filter(nil) {
		names = append(names, t.Def().Function.Name)
	}
	var services []string
	for s := range a.conf.Services {
		services = append(services, s)
	}
	for s := range a.conf.MCP { // an MCP server is named like a service
		services = append(services, s)
	}
	if m := a.conf.Manifest; m != nil { // and so is a package's stdio one, as the policy allows
		for _, t := range m.Declared {
			if t.MCP != nil {
				services = append(services, t.Name)
			}
		}
	}
	return approval.ParseExtra(append(slices.Clone(header), p.Approve...), names, services)
}
