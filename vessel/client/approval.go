package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// A turn that needs approval before some tool calls run stops in state
// TASK_STATE_INPUT_REQUIRED with an approval.required request; the owner
// answers with Decide (docs/approvals.md).
const (
	EventApprovalRequired = "approval.required"
	typeDecision          = "approval.decision"
)

// Verdicts of a Decision.
const (
	VerdictApprove = "approve"
	VerdictDeny    = "deny"
	VerdictEdit    = "edit"
)

// PendingCall is one tool call waiting for a decision.
type PendingCall struct {
	CallID string
	Tool   string
	// Arguments are exactly what the model sent (JSON text).
	Arguments string
	Scope     string
	Service   string
	// Reason says which policy entry made the call wait.
	Reason   string
	Editable bool
}

// ApprovalRequired is a paused turn's request: the calls waiting, and when
// and how the wait ends.
type ApprovalRequired struct {
	TaskID, ContextID string
	ApprovalID        string
	Calls             []PendingCall
	ExpiresAt         time.Time
	TimeoutSeconds    int
	OnTimeout         string // "deny" or "fail"
	Step              int
}

func (ApprovalRequired) isEvent() {}

func decodeApproval(data map[string]any) ApprovalRequired {
	a := ApprovalRequired{ApprovalID: str(data, "approval_id"), TimeoutSeconds: integer(data, "timeout_seconds"),
		OnTimeout: str(data, "on_timeout"), Step: integer(data, "step")}
	a.ExpiresAt, _ = time.Parse(time.RFC3339Nano, str(data, "expires_at"))
	calls, _ := data["calls"].([]any)
	for _, c := range calls {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		ed, _ := m["editable"].(bool)
		a.Calls = append(a.Calls, PendingCall{CallID: str(m, "call_id"), Tool: str(m, "tool"), Arguments: str(m, "arguments"),
			Scope: str(m, "scope"), Service: str(m, "service"), Reason: str(m, "reason"), Editable: ed})
	}
	return a
}

// Decision is the owner's answer for one pending call.
type Decision struct {
	CallID  string
	Verdict string
	// Reason goes to the model with a refused call.
	Reason string
	// Arguments replace the call's arguments (VerdictEdit only).
	Arguments map[string]any
}

// Approve lets a call run as the model asked.
func Approve(callID string) Decision { return Decision{CallID: callID, Verdict: VerdictApprove} }

// Deny refuses a call; the model reads the reason.
func Deny(callID, reason string) Decision {
	return Decision{CallID: callID, Verdict: VerdictDeny, Reason: reason}
}

// Edit lets a call run with other arguments, where the policy allows it.
func Edit(callID string, args map[string]any) Decision {
	return Decision{CallID: callID, Verdict: VerdictEdit, Arguments: args}
}

// Pending is the approval a paused turn waits for, nil when it waits for
// none.
func (r *Result) Pending() *ApprovalRequired { return r.Approval }

// DecisionMessage builds the A2A message that answers p.
func DecisionMessage(p *ApprovalRequired, decisions []Decision) (*a2a.Message, error) {
	if p == nil || p.TaskID == "" || p.ApprovalID == "" {
		return nil, errors.New("client: no pending approval to decide")
	}
	list := make([]any, 0, len(decisions))
	for _, d := range decisions {
		m := map[string]any{"call_id": d.CallID, "decision": d.Verdict}
		if d.Reason != "" {
			m["reason"] = d.Reason
		}
		if d.Verdict == VerdictEdit {
			m["arguments"] = d.Arguments
		}
		list = append(list, m)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{
		"type": typeDecision, "approval_id": p.ApprovalID, "decisions": list}))
	msg.TaskID, msg.ContextID = a2a.TaskID(p.TaskID), p.ContextID
	return msg, nil
}

// Decide answers a paused turn and streams the rest of it (which may pause
// again). acceptFiles limits the files sent, as in TurnRequest.
func (c *Client) Decide(ctx context.Context, p *ApprovalRequired, decisions []Decision, acceptFiles ...string) *Stream {
	s := &Stream{res: &Result{TaskID: taskIDOf(p)}}
	msg, err := DecisionMessage(p, decisions)
	if err != nil {
		s.err = err
		return s
	}
	// The same output modes as a turn's (the transcript, the answer, files).
	base, err := buildRequest(TurnRequest{Text: "-", AcceptFiles: acceptFiles})
	if err != nil {
		s.err = err
		return s
	}
	s.src = c.a2a.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: base.Config})
	return s
}

// DecideSend answers a paused turn with a non-streaming SendMessage and
// returns the task once it ends or pauses again.
func (c *Client) DecideSend(ctx context.Context, p *ApprovalRequired, decisions []Decision) (*Result, error) {
	msg, err := DecisionMessage(p, decisions)
	if err != nil {
		return nil, err
	}
	res, err := c.a2a.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, fmt.Errorf("client: decide on task %s: %w", p.TaskID, err)
	}
	t, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("client: unexpected SendMessage result %T", res)
	}
	return resultFromTask(t), nil
}

func taskIDOf(p *ApprovalRequired) string {
	if p == nil {
		return ""
	}
	return p.TaskID
}
