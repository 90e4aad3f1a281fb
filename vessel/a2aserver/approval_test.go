package a2aserver_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// withApproval sets the first agent's [agents.approval] table.
func withApproval(ap settings.Approval) harnessOpt {
	return func(d *settings.Deployment) { d.Agents[0].Approval = &ap }
}

// asWith is as() plus extra headers.
func asWith(key, user string, hdr map[string]string) context.Context {
	sp := a2aclient.ServiceParams{"Authorization": {"Bearer " + key}, "X-Vessel-User": {user}}
	for k, v := range hdr {
		sp[k] = []string{v}
	}
	return a2aclient.AttachServiceParams(context.Background(), sp)
}

// send is a non-streaming SendMessage that returns the task.
func (h *harness) send(ctx context.Context, msg *a2a.Message) (*a2a.Task, error) {
	h.t.Helper()
	res, err := h.client(h.agentID).SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		h.t.Fatalf("SendMessage returned %T, want a task", res)
	}
	return task, nil
}

// pending reads the approval request of a task waiting for approval.
func pending(t *testing.T, task *a2a.Task) *approval.Request {
	t.Helper()
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task state %s, want input-required; message %v", task.Status.State, task.Status.Message)
	}
	req, ok := approval.FromTask(task)
	if !ok {
		t.Fatalf("no approval request in the status message: %+v", task.Status.Message)
	}
	return req
}

// decide builds a decision message on task.
func decide(task *a2a.Task, approvalID string, decisions ...map[string]any) *a2a.Message {
	list := make([]any, len(decisions))
	for i, d := range decisions {
		list[i] = d
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{
		"type": approval.TypeDecision, "approval_id": approvalID, "decisions": list}))
	msg.TaskID, msg.ContextID = task.ID, task.ContextID
	return msg
}

func verdict(callID, v string, extra ...string) map[string]any {
	d := map[string]any{"call_id": callID, "decision": v}
	for i := 0; i+1 < len(extra); i += 2 {
		d[extra[i]] = extra[i+1]
	}
	return d
}

func finishedStatus(t *testing.T, task *a2a.Task) string {
	t.Helper()
	if task.Status.Message == nil || len(task.Status.Message.Parts) == 0 {
		t.Fatalf("task %s has no status message", task.Status.State)
	}
	m, _ := task.Status.Message.Parts[0].Data().(map[string]any)
	s, _ := m["status"].(string)
	return s
}

// TestApprovalPauseApproveDenyEdit: one step of three calls, two needing
// approval (bash), pauses before any of them runs; a non-streaming caller
// gets the pending calls in the returned task; the decisions (edit one,
// deny the other) make exactly those calls go on, and a repeated decision
// is refused.
func TestApprovalPauseApproveDenyEdit(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}, AllowEdit: true}))
	alice := as(h.keyApp1, "alice")
	task, err := h.send(alice, textMsg("#script:twocalls go"))
	if err != nil {
		t.Fatal(err)
	}
	req := pending(t, task)
	if len(req.Calls) != 2 || req.Calls[0].CallID != "e1" || req.Calls[0].Tool != "bash" || req.Calls[0].Scope != "tools:execute" ||
		req.Calls[0].Arguments != `{"command": "echo one"}` || !req.Calls[0].Editable || req.OnTimeout != "deny" || req.TimeoutSeconds != 600 {
		t.Fatalf("request %+v", req)
	}
	if got := h.sandbox.bashCommands(); len(got) != 0 || len(h.sandbox.taskIDs()) != 0 {
		t.Fatalf("calls ran before a decision: %v", got)
	}
	// GetTask shows the same request.
	got, err := h.client(h.agentID).GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || pending(t, got).ApprovalID != req.ApprovalID {
		t.Fatalf("GetTask: %v", err)
	}
	// Every waiting call must be decided in one message.
	if _, err := h.send(alice, decide(task, req.ApprovalID, verdict("e1", "approve"))); err == nil || !strings.Contains(err.Error(), "no decision for call e2") {
		t.Fatalf("partial decision: %v", err)
	}
	// Plain text is no decision.
	txt := textMsg("yes please")
	txt.TaskID, txt.ContextID = task.ID, task.ContextID
	if _, err := h.send(alice, txt); err == nil || !strings.Contains(err.Error(), "answer with an approval.decision data part") {
		t.Fatalf("text on a paused task: %v", err)
	}
	done, err := h.send(alice, decide(task, req.ApprovalID,
		verdict("e1", "edit", "arguments", `{"command":"echo edited"}`), verdict("e2", "deny", "reason", "not today")))
	if err != nil {
		t.Fatal(err)
	}
	if done.Status.State != a2a.TaskStateCompleted || finishedStatus(t, done) != "ok" {
		t.Fatalf("after the decision: %s", done.Status.State)
	}
	if got := h.sandbox.bashCommands(); !slices.Equal(got, []string{"echo edited"}) {
		t.Fatalf("bash ran %v, want only the edited call", got)
	}
	if _, err := h.send(alice, decide(task, req.ApprovalID, verdict("e1", "approve"), verdict("e2", "approve"))); err == nil ||
		!strings.Contains(err.Error(), "not waiting for approval") {
		t.Fatalf("repeated decision: %v", err)
	}
	ended, _, _ := h.sandbox.stats()
	if !slices.Contains(ended, string(task.ID)) {
		t.Fatalf("workspace not ended: %v", ended)
	}
}

// TestApprovalStreamAndDenial: a stream sends the input-required status
// and closes; the resumed stream tells of the refusal, and the model reads
// the reason in the refused call's result.
func TestApprovalStreamAndDenial(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Scopes: []string{"tools:execute"}}))
	alice := as(h.keyApp1, "alice")
	evs, err := h.stream(alice, h.agentID, &a2a.SendMessageRequest{Message: textMsg("#script:parallel go")})
	if err != nil {
		t.Fatal(err)
	}
	last, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || last.Status.State != a2a.TaskStateInputRequired || last.Metadata["vessel.event"] != approval.EventRequired {
		t.Fatalf("last frame %#v", evs[len(evs)-1])
	}
	req, _ := approval.FromTask(&a2a.Task{Status: last.Status})
	if req == nil || len(req.Calls) != 1 || req.Calls[0].CallID != "p2" || !strings.Contains(req.Calls[0].Reason, "tools:execute") || req.Calls[0].Editable {
		t.Fatalf("request %+v", req)
	}
	task := &a2a.Task{ID: last.TaskID, ContextID: last.ContextID}
	// Editing is not allowed by this policy.
	if _, err := h.send(alice, decide(task, req.ApprovalID, verdict("p2", "edit", "arguments", `{"command":"id"}`))); err == nil ||
		!strings.Contains(err.Error(), "does not allow editing") {
		t.Fatalf("edit: %v", err)
	}
	evs, err = h.stream(alice, h.agentID, &a2a.SendMessageRequest{Message: decide(task, req.ApprovalID, verdict("p2", "deny", "reason", "too risky"))})
	if err != nil {
		t.Fatal(err)
	}
	var denied map[string]any
	for _, ev := range evs {
		if m := eventOf(ev); m["type"] == "tool.finished" && m["call_id"] == "p2" {
			denied = m
		}
	}
	if denied == nil || denied["approval"] != "denied" || denied["ok"] != false || !strings.Contains(denied["error"].(string), "too risky") {
		t.Fatalf("tool.finished of the refused call: %v", denied)
	}
	if len(h.sandbox.bashCommands()) != 0 {
		t.Fatal("a refused call ran")
	}
	if st := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent); st.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("final state %s", st.Status.State)
	}
}

// TestApprovalOwnerAndScopes: only the owner decides; a deciding call
// whose scopes leave the tool out may deny but not approve; a caller can
// add approvals (X-Vessel-Approve) but narrowing a tool away means its call
// is not offered, so nothing waits for it.
func TestApprovalOwnerAndScopes(t *testing.T) {
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.NarrowTools = narrowByHeader }, withApproval(settings.Approval{Tools: []string{"bash"}}))
	alice := as(h.keyApp1, "alice")
	task, err := h.send(alice, textMsg("#script:parallel go"))
	if err != nil {
		t.Fatal(err)
	}
	req := pending(t, task)
	if _, err := h.send(as(h.keyApp1, "bob"), decide(task, req.ApprovalID, verdict("p2", "approve"))); err == nil ||
		!strings.Contains(err.Error(), "task not found") {
		t.Fatalf("another user's decision: %v", err)
	}
	narrow := asWith(h.keyApp1, "alice", map[string]string{"X-Vessel-Scopes": "tools:read"})
	if _, err := h.send(narrow, decide(task, req.ApprovalID, verdict("p2", "approve"))); err == nil ||
		!strings.Contains(err.Error(), "cannot approve") {
		t.Fatalf("narrowed approve: %v", err)
	}
	done, err := h.send(narrow, decide(task, req.ApprovalID, verdict("p2", "deny")))
	if err != nil || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("narrowed deny: %v", err)
	}

	// More approvals from the caller: species (tools:read) waits too.
	more := asWith(h.keyApp1, "alice", map[string]string{approval.Header: "tools:read"})
	task, err = h.send(more, textMsg("#script:parallel again"))
	if err != nil {
		t.Fatal(err)
	}
	if req := pending(t, task); len(req.Calls) != 2 {
		t.Fatalf("with X-Vessel-Approve: %+v", req.Calls)
	}
	if _, err := h.send(more, textMsg("x")); err != nil {
		t.Fatalf("X-Vessel-Approve on a plain turn: %v", err)
	}
	code, _, body := h.rawPost("/agents/"+h.agentID, `{"jsonrpc":"2.0","id":"1","method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`,
		map[string]string{"Authorization": "Bearer " + h.keyApp1, "X-Vessel-User": "alice", approval.Header: "bsh"})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "one of the agent's tools") {
		t.Fatalf("unknown entry: %d %s", code, body)
	}
	// Narrowed away: bash is not offered, so its call is an unknown tool and nothing waits.
	task, err = h.send(asWith(h.keyApp1, "alice", map[string]string{"X-Vessel-Scopes": "tools:read"}), textMsg("#script:parallel narrowed"))
	if err != nil || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("narrowed turn: %v %v", err, task)
	}
}

// narrowByHeader is the vessel's narrowing (cmd/vessel): X-Vessel-Scopes
// only ever removes tools.
func narrowByHeader(r *http.Request, p *auth.Principal, list []tools.Tool) ([]tools.Tool, error) {
	allowed, err := scopes.ForCall(r.Header, p.Kind == auth.KindToken, p.Scopes)
	if err != nil {
		return nil, err
	}
	return scopes.Narrow(list, func(t tools.Tool) string { return t.Def().Function.Name },
		func(t tools.Tool) string { return t.Scope() }, allowed), nil
}

// TestApprovalCancelWhilePaused: CancelTask ends a paused turn and its
// workspace; the turn sweep keeps a paused turn's workspace meanwhile.
func TestApprovalCancelWhilePaused(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}}))
	alice := as(h.keyApp1, "alice")
	task, err := h.send(alice, textMsg("#script:sleeptool go"))
	if err != nil {
		t.Fatal(err)
	}
	req := pending(t, task)
	h.sandbox.mu.Lock()
	h.sandbox.turns = []*sandboxv1.TurnInfo{{TurnId: string(task.ID), Owner: "app1/alice", IdleMs: 10 * 60 * 1000}}
	h.sandbox.mu.Unlock()
	h.srv.SweepTurns(context.Background())
	if ended, _, _ := h.sandbox.stats(); slices.Contains(ended, string(task.ID)) {
		t.Fatal("the sweep ended a paused turn's workspace")
	}
	ct, err := h.client(h.agentID).CancelTask(alice, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || ct.Status.State != a2a.TaskStateCanceled || finishedStatus(t, ct) != "cancelled" {
		t.Fatalf("cancel: %v %v", err, ct)
	}
	if ended, _, _ := h.sandbox.stats(); !slices.Contains(ended, string(task.ID)) {
		t.Fatal("the cancelled turn's workspace was not ended")
	}
	if _, err := h.send(alice, decide(task, req.ApprovalID, verdict("s1", "approve"))); err == nil {
		t.Fatal("a decision on a cancelled task was taken")
	}
	if len(h.sandbox.bashCommands()) != 0 {
		t.Fatal("the cancelled call ran")
	}
}

// waitState polls GetTask until the task leaves input-required.
func (h *harness) waitState(ctx context.Context, id a2a.TaskID) *a2a.Task {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		task, err := h.client(h.agentID).GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			h.t.Fatal(err)
		}
		if task.Status.State.Terminal() {
			return task
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatal("the task did not end")
	return nil
}

// TestApprovalTimeout: with on_timeout deny the waiting calls are refused
// and the turn goes on; with fail the turn fails.
func TestApprovalTimeout(t *testing.T) {
	for _, tc := range []struct {
		onTimeout string
		state     a2a.TaskState
		status    string
	}{{"deny", a2a.TaskStateCompleted, "ok"}, {"fail", a2a.TaskStateFailed, "approval_timeout"}} {
		t.Run(tc.onTimeout, func(t *testing.T) {
			h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}, TimeoutSecs: 1, OnTimeout: tc.onTimeout}))
			alice := as(h.keyApp1, "alice")
			task, err := h.send(alice, textMsg("#script:parallel go"))
			if err != nil {
				t.Fatal(err)
			}
			req := pending(t, task)
			if req.TimeoutSeconds != 1 || req.Expires().IsZero() {
				t.Fatalf("request %+v", req)
			}
			end := h.waitState(alice, task.ID)
			if end.Status.State != tc.state || finishedStatus(t, end) != tc.status {
				t.Fatalf("after the timeout: %s %s", end.Status.State, finishedStatus(t, end))
			}
			if len(h.sandbox.bashCommands()) != 0 {
				t.Fatal("a timed-out call ran")
			}
			if ended, _, _ := h.sandbox.stats(); !slices.Contains(ended, string(task.ID)) {
				t.Fatal("workspace not ended")
			}
		})
	}
}

// TestTimedOutPausesResumeInTurn: paused turns hold no place, but the
// resumes the vessel sends itself when their approvals time out take one
// as their owner, like a caller's decision: an owner at
// max_turns_per_owner = 1 with three turns paused, all timing out at once,
// never has more than one of them at work (the model called again once
// their calls are refused), and every place comes back.
func TestTimedOutPausesResumeInTurn(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}, TimeoutSecs: 1, OnTimeout: "deny"}),
		limitsOf(settings.Limits{MaxTurnsPerOwner: 1}))
	alice := as(h.keyApp1, "alice")
	var tasks []*a2a.Task
	for range 3 {
		task, err := h.send(alice, textMsg("#script:parallel go"))
		if err != nil {
			t.Fatal(err)
		}
		pending(t, task)
		tasks = append(tasks, task)
	}
	// From here each model call takes a while, so resumes let in together
	// would be seen at work together.
	h.modelDelay.Store(int64(300 * time.Millisecond))
	h.modelMostInFlight.Store(0)
	for _, task := range tasks {
		if end := h.waitState(alice, task.ID); end.Status.State != a2a.TaskStateCompleted || finishedStatus(t, end) != "ok" {
			t.Fatalf("after the timeout: %s %s", end.Status.State, finishedStatus(t, end))
		}
	}
	if n := h.modelMostInFlight.Load(); n != 1 {
		t.Fatalf("%d resumed turns of one owner at work at once, want 1 (max_turns_per_owner)", n)
	}
	waitFor(t, "the places back", func() bool { _, n, _, _ := h.srv.Admission().Counts("app1/alice"); return n == 0 })
}

// TestApprovalOnAnotherReplica: two vessels on one PostgreSQL store; the
// turn pauses on the first, the owner's decision goes to the second, which
// forwards it to the first (the paused turn lives there) and answers with
// the finished task; a stream resumed through the second follows the turn.
func TestApprovalOnAnotherReplica(t *testing.T) {
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	postgres.Register()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "vt_approval_" + hex.EncodeToString(b[:])
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	t.Cleanup(func() { dropSchema(t, dsn, schema) })
	opt := withApproval(settings.Approval{Tools: []string{"bash"}})
	h1 := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, nil, opt)
	h2 := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, nil, opt)
	alice := as(h1.keyApp1, "alice")

	task, err := h1.send(alice, textMsg("#script:parallel go"))
	if err != nil {
		t.Fatal(err)
	}
	req := pending(t, task)
	// The second replica sees the request (GetTask) and refuses bad decisions itself.
	got, err := h2.client(h2.agentID).GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || pending(t, got).ApprovalID != req.ApprovalID {
		t.Fatalf("GetTask on the other replica: %v", err)
	}
	if _, err := h2.send(alice, decide(task, "stale", verdict("p2", "approve"))); err == nil || !strings.Contains(err.Error(), "no longer waiting") {
		t.Fatalf("stale decision on the other replica: %v", err)
	}
	if _, err := h2.send(as(h1.keyApp1, "bob"), decide(task, req.ApprovalID, verdict("p2", "approve"))); err == nil {
		t.Fatal("another user's decision was taken on the other replica")
	}
	// The forwarded SendMessage answers as the holding replica would have:
	// with the transcript the caller accepts.
	res, err := h2.client(h2.agentID).SendMessage(alice, &a2a.SendMessageRequest{Message: decide(task, req.ApprovalID, verdict("p2", "approve")),
		Config: &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/markdown", transcript.MediaType}}})
	if err != nil {
		t.Fatal(err)
	}
	done, ok := res.(*a2a.Task)
	if !ok || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after a decision on the other replica: %#v", res)
	}
	if got := strings.Join(artifactSummary(t, done.Artifacts), " "); !strings.Contains(got, "transcript[") || !strings.Contains(got, "answer[") {
		t.Fatalf("the forwarded answer lacks the transcript or the answer: %s", got)
	}
	if got := h1.sandbox.bashCommands(); !slices.Equal(got, []string{"echo hi"}) {
		t.Fatalf("the holding replica ran %v", got)
	}

	// CancelTask on the other replica reaches the paused turn.
	task, err = h1.send(alice, textMsg("#script:parallel cancel"))
	if err != nil {
		t.Fatal(err)
	}
	pending(t, task)
	ct, err := h2.client(h2.agentID).CancelTask(alice, &a2a.CancelTaskRequest{ID: task.ID})
	if err != nil || ct.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel on the other replica: %v %v", err, ct)
	}
	if ended, _, _ := h1.sandbox.stats(); !slices.Contains(ended, string(task.ID)) {
		t.Fatal("the holding replica did not end the cancelled turn's workspace")
	}
	if len(h2.sandbox.bashCommands()) != 0 {
		t.Fatal("the call ran on the replica that did not hold the turn")
	}

	// A streamed decision through the other replica follows the turn to its end.
	task, err = h1.send(alice, textMsg("#script:parallel again"))
	if err != nil {
		t.Fatal(err)
	}
	req = pending(t, task)
	evs, err := h2.stream(alice, h2.agentID, &a2a.SendMessageRequest{Message: decide(task, req.ApprovalID, verdict("p2", "deny"))})
	if err != nil {
		t.Fatal(err)
	}
	var final a2a.TaskState
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.Task:
			final = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			final = e.Status.State
		}
	}
	if final != a2a.TaskStateCompleted {
		t.Fatalf("the followed stream ended in %s", final)
	}
}

// TestApprovalDrainEndsPaused: a stopping vessel ends its paused turns at
// once (their state is in its memory), failed with status shutdown, and
// ends their workspaces.
func TestApprovalDrainEndsPaused(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}}))
	alice := as(h.keyApp1, "alice")
	task, err := h.send(alice, textMsg("#script:parallel go"))
	if err != nil {
		t.Fatal(err)
	}
	pending(t, task)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.srv.Drain(ctx, time.Minute)
	// The vessel answers nothing while it drains: read the store as the owner.
	octx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser("app1/alice", nil)
	st, err := h.backend.Agent(h.agentID).Get(octx, task.ID)
	if err != nil || st.Task.Status.State != a2a.TaskStateFailed || finishedStatus(t, st.Task) != "shutdown" {
		t.Fatalf("after Drain: %v %+v", err, st)
	}
	if ended, _, _ := h.sandbox.stats(); !slices.Contains(ended, string(task.ID)) {
		t.Fatal("the paused turn's workspace was not ended")
	}
	// The shutdown's resume was counted for the owner, and gave it back.
	if _, n, _, _ := h.srv.Admission().Counts("app1/alice"); n != 0 {
		t.Fatalf("%d places held after Drain", n)
	}
}

// TestApprovalDecisionOnlyOnPausedTask: a decision naming no task, or a
// task that is not paused, is refused with a clear error.
func TestApprovalDecisionOnlyOnPausedTask(t *testing.T) {
	h := newHarness(t, withApproval(settings.Approval{Tools: []string{"bash"}}))
	alice := as(h.keyApp1, "alice")
	orphan := decide(&a2a.Task{}, "ap1", verdict("c1", "approve"))
	if _, err := h.send(alice, orphan); err == nil || !strings.Contains(err.Error(), "must name the paused task") {
		t.Fatalf("decision without a task: %v", err)
	}
	task, err := h.send(alice, textMsg("hello"))
	if err != nil || task.Status.State != a2a.TaskStateCompleted {
		t.Fatal(err)
	}
	if _, err := h.send(alice, decide(task, "ap1", verdict("c1", "approve"))); err == nil || !strings.Contains(err.Error(), "not waiting for approval") {
		t.Fatalf("decision on a finished task: %v", err)
	}
}

// TestApprovalSubscribeWhilePaused: SubscribeToTask on a paused task, over
// each binding, gets the task as it stands (the pending request in its
// status) and the stream ends; another user still sees no task.
func TestApprovalSubscribeWhilePaused(t *testing.T) {
	h := newHarnessConfig(t, selfCards, withApproval(settings.Approval{Tools: []string{"bash"}}))
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			h.t = t
			cl := h.cardClient(h.agentID, b)
			alice := as(h.keyApp1, "alice")
			task, err := h.send(alice, textMsg("#script:twocalls go"))
			if err != nil {
				t.Fatal(err)
			}
			want := pending(t, task)
			var evs []a2a.Event
			for ev, err := range cl.SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					t.Fatalf("subscribe to a paused task: %v", err)
				}
				evs = append(evs, ev)
			}
			if len(evs) != 1 {
				t.Fatalf("%d frames, want the task alone", len(evs))
			}
			got, ok := evs[0].(*a2a.Task)
			if !ok || got.ID != task.ID || pending(t, got).ApprovalID != want.ApprovalID {
				t.Fatalf("frame %#v", evs[0])
			}
			for _, err := range cl.SubscribeToTask(as(h.keyApp1, "bob"), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("bob subscribes: %v", err)
				}
			}
			if _, err := h.send(alice, decide(task, want.ApprovalID, verdict("e1", "deny"), verdict("e2", "deny"))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestForwardedDecisionCountsOnce: a decision sent to the replica that
// does not hold the paused turn is forwarded; the resumed turn counts
// under [limits] once, on the replica that runs it, for as long as it
// runs: also when the decision returned at once (returnImmediately), and
// while a blocking SendMessage on the receiving replica waits for it.
func TestForwardedDecisionCountsOnce(t *testing.T) {
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	postgres.Register()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "vt_fwdcount_" + hex.EncodeToString(b[:])
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	t.Cleanup(func() { dropSchema(t, dsn, schema) })
	opt := withApproval(settings.Approval{Tools: []string{"bash"}})
	h1 := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, nil, opt)
	h2 := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, nil, opt)
	alice := as(h1.keyApp1, "alice")
	const owner = "app1/alice"
	turns := func(h *harness) int { _, n, _, _ := h.srv.Admission().Counts(owner); return n }

	for _, immediately := range []bool{true, false} {
		task, err := h1.send(alice, textMsg("#script:sleeptool"))
		if err != nil {
			t.Fatal(err)
		}
		req := pending(t, task)
		if n1, n2 := turns(h1), turns(h2); n1 != 0 || n2 != 0 {
			t.Fatalf("a paused turn holds places: %d and %d", n1, n2)
		}
		_, _, running := h1.sandbox.stats()
		sent := make(chan error, 1)
		go func() {
			_, err := h2.client(h2.agentID).SendMessage(alice, &a2a.SendMessageRequest{Message: decide(task, req.ApprovalID, verdict("s1", "approve")),
				Config: &a2a.SendMessageConfig{ReturnImmediately: immediately}})
			sent <- err
		}()
		if immediately {
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "the resumed call to run on the holding replica", func() bool { _, _, r := h1.sandbox.stats(); return r == running+1 })
		if n1, n2 := turns(h1), turns(h2); n1 != 1 || n2 != 0 {
			t.Fatalf("returnImmediately %v: the resumed turn counts %d on the holding replica and %d on the receiving one, want 1 and 0", immediately, n1, n2)
		}
		h1.cancelTask(t, h1.keyApp1, "alice", string(task.ID))
		if !immediately {
			<-sent // the blocking decision ends with the cancelled task
		}
		waitFor(t, "the places back", func() bool { return turns(h1) == 0 && turns(h2) == 0 })
	}
}
