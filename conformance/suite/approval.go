package suite

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// The approval checks (docs/approvals.md): the caller asks, with
// X-Vessel-Approve: all, that every tool call of its turn wait for a
// decision; a turn whose model calls a tool then pauses in
// TASK_STATE_INPUT_REQUIRED with the documented approval.required request.
// An agent that answers without a tool call is skipped. The checks run over
// every binding the card declares; a refusal must have that binding's shape
// (errorStatus on HTTP+JSON, the reason's gRPC code on gRPC: rpc checks it).

const (
	approveHeader       = "X-Vessel-Approve"
	stateInputRequired  = "TASK_STATE_INPUT_REQUIRED"
	eventApprovalNeeded = "approval.required"
)

// approvalShape checks a request against the documented shape and
// returns its id and first call id.
func approvalShape(task obj) (approvalID string, calls []string, err error) {
	status := getObj(task, "status")
	msg := getObj(status, "message")
	var data obj
	for _, p := range partsOf(msg) {
		if d, ok := p["data"].(map[string]any); ok && d["type"] == eventApprovalNeeded {
			data = d
		}
	}
	if data == nil {
		return "", nil, fmt.Errorf("the status message holds no data part with type %q: %s", eventApprovalNeeded, snippet(mustJSON(msg)))
	}
	var errs []string
	approvalID = getStr(data, "approval_id")
	if approvalID == "" {
		errs = append(errs, "no approval_id")
	}
	if _, err := time.Parse(time.RFC3339Nano, getStr(data, "expires_at")); err != nil {
		errs = append(errs, fmt.Sprintf("expires_at %q is not RFC 3339", getStr(data, "expires_at")))
	}
	if n, ok := data["timeout_seconds"].(float64); !ok || n < 1 {
		errs = append(errs, "timeout_seconds is not a positive number")
	}
	if ot := getStr(data, "on_timeout"); ot != "deny" && ot != "fail" {
		errs = append(errs, fmt.Sprintf("on_timeout %q is neither deny nor fail", ot))
	}
	list := getList(data, "calls")
	if len(list) == 0 {
		errs = append(errs, "no calls")
	}
	for i, c := range list {
		co, _ := c.(map[string]any)
		for _, k := range []string{"call_id", "tool", "scope", "reason"} {
			if getStr(co, k) == "" {
				errs = append(errs, fmt.Sprintf("calls[%d].%s is missing", i, k))
			}
		}
		if _, ok := co["arguments"].(string); !ok {
			errs = append(errs, fmt.Sprintf("calls[%d].arguments is not the model's JSON text", i))
		}
		if _, ok := co["editable"].(bool); !ok {
			errs = append(errs, fmt.Sprintf("calls[%d].editable is not a boolean", i))
		}
		calls = append(calls, getStr(co, "call_id"))
	}
	if meta := getObj(task, "metadata"); meta != nil && meta["vessel.event"] != nil && meta["vessel.event"] != eventApprovalNeeded {
		errs = append(errs, fmt.Sprintf("metadata vessel.event is %v", meta["vessel.event"]))
	}
	return approvalID, calls, joinErrs(errs)
}

func decisionMessage(e *env, taskID, contextID, approvalID string, decisions ...obj) obj {
	list := make([]any, len(decisions))
	for i, d := range decisions {
		list[i] = d
	}
	m := e.message(contextID, obj{"data": obj{"type": "approval.decision", "approval_id": approvalID, "decisions": list}})
	m["taskId"] = taskID
	return m
}

func checkApproval(ctx context.Context, e *env, r *reporter) {
	names := []string{"approval: pauses with the documented request", "approval: another user cannot decide",
		"approval: an unknown call is refused", "approval: a denied call lets the turn finish", "approval: a repeated decision is refused"}
	hdr := map[string]string{approveHeader: "all"}
	status, m, err := e.rpc(ctx, e.cfg.Agent, "SendMessage", sendParams(e.message("", textPart("Which species does the guide list?")), false), e.me, hdr)
	if err != nil {
		r.fail(names[0], "%v", err)
		return
	}
	if code, msg, isErr := rpcError(m); isErr || status != 200 {
		r.fail(names[0], "HTTP %d, error %d %s", status, code, msg)
		return
	}
	task := getObj(m, "result", "task")
	state := getStr(getObj(task, "status"), "state")
	if state != stateInputRequired {
		for _, n := range names {
			r.skip(n, "the turn ended %s without a tool call to approve", state)
		}
		return
	}
	approvalID, calls, err := approvalShape(task)
	if err != nil {
		r.fail(names[0], "%v", err)
		return
	}
	r.pass(names[0], "%d call(s) wait on approval %s", len(calls), approvalID)
	taskID, contextID := getStr(task, "id"), getStr(task, "contextId")
	var denyAll []obj
	for _, c := range calls {
		denyAll = append(denyAll, obj{"call_id": c, "decision": "deny", "reason": "conformance check"})
	}
	other := auth{key: e.cfg.Key, user: e.cfg.OtherUser}
	r.check(names[1], e.wantNotFound(e.rpc(ctx, e.cfg.Agent, "SendMessage",
		obj{"message": decisionMessage(e, taskID, contextID, approvalID, denyAll...)}, other, nil)), "task not found for the other user")

	bad := append([]obj{{"call_id": "conformance-unknown", "decision": "approve"}}, denyAll...)
	status, m, err = e.rpc(ctx, e.cfg.Agent, "SendMessage", obj{"message": decisionMessage(e, taskID, contextID, approvalID, bad...)}, e.me, nil)
	switch code, msg, isErr := rpcError(m); {
	case err != nil:
		r.fail(names[2], "%v", err)
	case !isErr || code != -32602 || status != e.errorStatus(-32602):
		r.fail(names[2], "HTTP %d, want %d / error -32602: %s", status, e.errorStatus(-32602), snippet(mustJSON(m)))
	case !strings.Contains(msg, "conformance-unknown"):
		r.fail(names[2], "the error does not name the call: %s", msg)
	default:
		r.pass(names[2], "%d %s", code, msg)
	}

	status, m, err = e.rpc(ctx, e.cfg.Agent, "SendMessage", obj{"message": decisionMessage(e, taskID, contextID, approvalID, denyAll...)}, e.me, nil)
	end := getObj(m, "result", "task")
	endState := getStr(getObj(end, "status"), "state")
	switch {
	case err != nil:
		r.fail(names[3], "%v", err)
	case status != 200 || getObj(m, "error") != nil:
		r.fail(names[3], "HTTP %d: %s", status, snippet(mustJSON(m)))
	case endState == stateInputRequired:
		r.pass(names[3], "the turn went on and paused again (the model called another tool)")
	case endState != stateCompleted:
		r.fail(names[3], "state %s after the decision: %s", endState, snippet(mustJSON(m)))
	default:
		r.pass(names[3], "%s", endState)
	}
	if endState != stateCompleted {
		r.skip(names[4], "the turn did not finish")
		return
	}
	status, m, err = e.rpc(ctx, e.cfg.Agent, "SendMessage", obj{"message": decisionMessage(e, taskID, contextID, approvalID, denyAll...)}, e.me, nil)
	if code, msg, isErr := rpcError(m); err != nil || !isErr || code != -32602 || status != e.errorStatus(-32602) {
		r.fail(names[4], "HTTP %d, want %d / error -32602: %v %s", status, e.errorStatus(-32602), err, snippet(mustJSON(m)))
	} else {
		r.pass(names[4], "%d %s", code, msg)
	}
}
