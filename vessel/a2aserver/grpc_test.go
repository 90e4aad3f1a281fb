package a2aserver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// grpcClient is a raw A2A gRPC client on the harness's gRPC listener, for
// checking status codes and details; it receives messages of any size.
func (h *harness) grpcClient() a2apb.A2AServiceClient {
	h.t.Helper()
	conn, err := grpc.NewClient(h.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	return a2apb.NewA2AServiceClient(conn)
}

// md is an outgoing context with the given metadata pairs.
func md(kv ...string) context.Context {
	return metadata.NewOutgoingContext(context.Background(), metadata.Pairs(kv...))
}

func grpcSend(tenant, text string) *a2apb.SendMessageRequest {
	return &a2apb.SendMessageRequest{Tenant: tenant, Message: &a2apb.Message{MessageId: "m-" + text[:min(len(text), 8)],
		Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: text}}}}}
}

// checkGRPCStatus checks err's code and its ErrorInfo reason and domain.
func checkGRPCStatus(t *testing.T, name string, err error, code codes.Code, reason, domain string) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code || st.Message() == "" {
		t.Errorf("%s: %v, want %s", name, err, code)
		return
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.Reason != reason || info.Domain != domain {
				t.Errorf("%s: ErrorInfo %s/%s, want %s/%s", name, info.Reason, info.Domain, reason, domain)
			}
			return
		}
	}
	t.Errorf("%s: no ErrorInfo in %v", name, st.Details())
}

// TestGRPCRefusals: the vessel's refusals before the SDK (authentication,
// grants, readiness, agent routing, version) on gRPC, unary and streaming,
// with the codes and ErrorInfo reasons REST uses; a2a-go's gRPC client
// reads them as the matching A2A errors.
func TestGRPCRefusals(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	cl := h.grpcClient()
	auth1 := "Bearer " + h.keyApp1
	cases := []struct {
		name, agent  string
		ctx          context.Context
		code         codes.Code
		reason, dom  string
		clientErr    error
		viaCardOwner bool
	}{
		{"no key", "field-guide", md(), codes.Unauthenticated, "UNAUTHENTICATED", a2a.ProtocolDomain, a2a.ErrUnauthenticated, true},
		{"bad key", "field-guide", md("authorization", "Bearer wrong", "x-vessel-user", "alice"), codes.Unauthenticated, "UNAUTHENTICATED", a2a.ProtocolDomain, a2a.ErrUnauthenticated, true},
		{"no user", "field-guide", md("authorization", auth1), codes.Unauthenticated, "UNAUTHENTICATED", a2a.ProtocolDomain, a2a.ErrUnauthenticated, true},
		{"ungranted agent", "reader", md("authorization", auth1, "x-vessel-user", "alice"), codes.PermissionDenied, "UNAUTHORIZED", a2a.ProtocolDomain, a2a.ErrUnauthorized, true},
		{"sandbox down", "broken", md("authorization", "Bearer "+h.keyApp2, "x-vessel-user", "alice"), codes.Unavailable, "AGENT_UNAVAILABLE", a2aserver.ErrorDomain, nil, false},
		{"unknown agent", "nobody", md("authorization", auth1, "x-vessel-user", "alice"), codes.NotFound, "AGENT_NOT_FOUND", a2aserver.ErrorDomain, nil, false},
		{"version 0.3", "field-guide", md("authorization", auth1, "x-vessel-user", "alice", "a2a-version", "0.3"), codes.Unimplemented, "VERSION_NOT_SUPPORTED", a2a.ProtocolDomain, nil, false},
	}
	for _, c := range cases {
		_, err := cl.SendMessage(c.ctx, grpcSend(c.agent, "hi"))
		checkGRPCStatus(t, c.name+" (SendMessage)", err, c.code, c.reason, c.dom)
		st, err := cl.SendStreamingMessage(c.ctx, grpcSend(c.agent, "hi"))
		if err == nil {
			_, err = st.Recv()
		}
		checkGRPCStatus(t, c.name+" (SendStreamingMessage)", err, c.code, c.reason, c.dom)
		_, err = cl.ListTasks(c.ctx, &a2apb.ListTasksRequest{Tenant: c.agent})
		if c.name == "sandbox down" {
			// Reading stored tasks is served while the agent is out of
			// service (docs/a2a.md, "Readiness").
			if err != nil {
				t.Errorf("sandbox down (ListTasks): %v, want it served", err)
			}
		} else {
			checkGRPCStatus(t, c.name+" (ListTasks)", err, c.code, c.reason, c.dom)
		}
		if c.clientErr == nil {
			continue
		}
		var ctx context.Context = context.Background()
		if in, ok := metadata.FromOutgoingContext(c.ctx); ok {
			ctx = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams(in))
		}
		if _, err := h.cardClient(c.agent, a2a.TransportProtocolGRPC).SendMessage(ctx, &a2a.SendMessageRequest{Message: textMsg("hi")}); !errors.Is(err, c.clientErr) {
			t.Errorf("%s: a2a-go client error %v, want %v", c.name, err, c.clientErr)
		}
	}
	// No tenant: the call names no agent.
	_, err := cl.SendMessage(md("authorization", auth1, "x-vessel-user", "alice"), grpcSend("", "hi"))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("no tenant: %v", err)
	}
	// An invalid X-Vessel-Scopes is refused as on the HTTP bindings.
	h2 := newHarnessConfig(t, func(c *a2aserver.Config) { c.NarrowTools = narrowByHeader })
	_, err = h2.grpcClient().SendMessage(md("authorization", auth1, "x-vessel-user", "alice", "x-vessel-scopes", "no such scope!"), grpcSend("field-guide", "hi"))
	checkGRPCStatus(t, "bad scopes", err, codes.PermissionDenied, "UNAUTHORIZED", a2a.ProtocolDomain)
}

// TestGRPCMessageLimit: a request message over MaxBodyBytes is refused
// with RESOURCE_EXHAUSTED before it reaches the agent; one under the limit
// is served.
func TestGRPCMessageLimit(t *testing.T) {
	h := newHarness(t)
	cl := h.grpcClient()
	alice := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice")
	_, err := cl.SendMessage(alice, grpcSend("field-guide", strings.Repeat("a", a2aserver.MaxBodyBytes)))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("over the limit: %v", err)
	}
	st, err := cl.SendStreamingMessage(alice, grpcSend("field-guide", strings.Repeat("a", a2aserver.MaxBodyBytes)))
	if err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("stream over the limit: %v", err)
	}
	if _, err := cl.SendMessage(alice, grpcSend("field-guide", strings.Repeat("a", a2aserver.MaxBodyBytes-1000))); err != nil {
		t.Fatalf("under the limit: %v", err)
	}
}

// TestGRPCOwnersAndErrors: another owner's task is not found on every
// method over gRPC; a finished task is not cancelable and cannot be
// subscribed to, with a2a-go's status codes; the caller's scopes narrow
// its tools.
func TestGRPCOwnersAndErrors(t *testing.T) {
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.NarrowTools = narrowByHeader })
	cl := h.grpcClient()
	alice := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice")
	bob := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "bob")
	res, err := cl.SendMessage(alice, grpcSend("field-guide", "mine"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetTask().GetId()
	if id == "" || res.GetTask().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage: %v", res)
	}
	_, err = cl.GetTask(bob, &a2apb.GetTaskRequest{Tenant: "field-guide", Id: id})
	checkGRPCStatus(t, "bob GetTask", err, codes.NotFound, "TASK_NOT_FOUND", a2a.ProtocolDomain)
	_, err = cl.CancelTask(bob, &a2apb.CancelTaskRequest{Tenant: "field-guide", Id: id})
	checkGRPCStatus(t, "bob CancelTask", err, codes.NotFound, "TASK_NOT_FOUND", a2a.ProtocolDomain)
	sub, err := cl.SubscribeToTask(bob, &a2apb.SubscribeToTaskRequest{Tenant: "field-guide", Id: id})
	if err == nil {
		_, err = sub.Recv()
	}
	checkGRPCStatus(t, "bob SubscribeToTask", err, codes.NotFound, "TASK_NOT_FOUND", a2a.ProtocolDomain)
	if list, err := cl.ListTasks(bob, &a2apb.ListTasksRequest{Tenant: "field-guide"}); err != nil || len(list.GetTasks()) != 0 {
		t.Fatalf("bob lists %v %v", list, err)
	}
	// The task belongs to field-guide: naming another agent does not find it.
	app2 := md("authorization", "Bearer "+h.keyApp2, "x-vessel-user", "alice")
	_, err = cl.GetTask(app2, &a2apb.GetTaskRequest{Tenant: "reader", Id: id})
	checkGRPCStatus(t, "other agent GetTask", err, codes.NotFound, "TASK_NOT_FOUND", a2a.ProtocolDomain)

	_, err = cl.CancelTask(alice, &a2apb.CancelTaskRequest{Tenant: "field-guide", Id: id})
	checkGRPCStatus(t, "cancel a finished task", err, codes.FailedPrecondition, "TASK_NOT_CANCELABLE", a2a.ProtocolDomain)
	sub, err = cl.SubscribeToTask(alice, &a2apb.SubscribeToTaskRequest{Tenant: "field-guide", Id: id})
	if err == nil {
		_, err = sub.Recv()
	}
	checkGRPCStatus(t, "subscribe to a finished task", err, codes.Unimplemented, "UNSUPPORTED_OPERATION", a2a.ProtocolDomain)

	// Scopes narrow over gRPC as over HTTP: with tools:read only, bash is
	// not offered, so the scripted bash call never reaches the sandbox.
	before := len(h.sandbox.bashCommands())
	narrow := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice", "x-vessel-scopes", "tools:read")
	if _, err := cl.SendMessage(narrow, grpcSend("field-guide", "#script:parallel narrowed")); err != nil {
		t.Fatal(err)
	}
	if got := h.sandbox.bashCommands(); len(got) != before {
		t.Fatalf("narrowed call ran bash: %q", got[before:])
	}
	if _, err := cl.SendMessage(alice, grpcSend("field-guide", "#script:parallel wide")); err != nil {
		t.Fatal(err)
	}
	if got := h.sandbox.bashCommands(); len(got) != before+1 {
		t.Fatalf("unnarrowed call: bash commands %q", got[before:])
	}
}

// TestGRPCStreamOrder: a streamed turn over gRPC has the frames of the
// same turn over JSON-RPC, in the same order: the task first, the final
// completed status last.
func TestGRPCStreamOrder(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	alice := as(h.keyApp1, "alice")
	req := func() *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish? #script:tool")}
	}
	rpc, err := h.stream(alice, "field-guide", req())
	if err != nil {
		t.Fatal(err)
	}
	var grpcEvs []a2a.Event
	for ev, err := range h.cardClient("field-guide", a2a.TransportProtocolGRPC).SendStreamingMessage(alice, req()) {
		if err != nil {
			t.Fatal(err)
		}
		grpcEvs = append(grpcEvs, ev)
	}
	shape := func(evs []a2a.Event) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, frameShape(ev))
		}
		return out
	}
	g, r := shape(grpcEvs), shape(rpc)
	if !slices.Equal(g, r) {
		t.Fatalf("gRPC frames %q\nJSON-RPC frames %q", g, r)
	}
	if len(g) < 3 || !strings.HasPrefix(g[0], "task:") || g[len(g)-1] != "status:TASK_STATE_COMPLETED:turn.finished" {
		t.Fatalf("gRPC frames %q", g)
	}
}

// TestGRPCApproval: over gRPC a turn pauses for approval with the pending
// calls in the task, another user's decision is refused as on JSON-RPC,
// and the owner's decision (a data part, through the proto's Struct) lets
// the turn finish with the approved call run.
func TestGRPCApproval(t *testing.T) {
	h := newHarnessConfig(t, selfCards, withApproval(settings.Approval{Tools: []string{"bash"}}))
	cl := h.cardClient(h.agentID, a2a.TransportProtocolGRPC)
	alice := as(h.keyApp1, "alice")
	send := func(ctx context.Context, msg *a2a.Message) (*a2a.Task, error) {
		res, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			return nil, err
		}
		task, ok := res.(*a2a.Task)
		if !ok {
			t.Fatalf("SendMessage returned %T", res)
		}
		return task, nil
	}
	task, err := send(alice, textMsg("#script:parallel go"))
	if err != nil {
		t.Fatal(err)
	}
	req := pending(t, task)
	if len(req.Calls) != 1 || req.Calls[0].CallID != "p2" || req.Calls[0].Tool != "bash" {
		t.Fatalf("request %+v", req)
	}
	if _, err := send(as(h.keyApp1, "bob"), decide(task, req.ApprovalID, verdict("p2", "approve"))); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("another user's decision: %v", err)
	}
	done, err := send(alice, decide(task, req.ApprovalID, verdict("p2", "approve")))
	if err != nil || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("approved: %v %v", err, done)
	}
	if got := h.sandbox.bashCommands(); !slices.Equal(got, []string{"echo hi"}) {
		t.Fatalf("bash commands %q, want the approved one", got)
	}
}

// TestGRPCTurnCap: gRPC calls count against the same [limits] caps as the
// HTTP bindings: over the owner's turn cap a send (unary or streaming) is
// RESOURCE_EXHAUSTED with the reason TOO_MANY_REQUESTS, a GetTask is still
// served, and a gRPC call gives its place back when it ends.
func TestGRPCTurnCap(t *testing.T) {
	h := newHarness(t, limitsOf(settings.Limits{MaxTurnsPerOwner: 1}))
	cl := h.grpcClient()
	alice := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice")
	a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(1), appHdr(h.keyApp1, "alice"))
	if a.status != 200 {
		t.Fatalf("first send: %d %s", a.status, a.body)
	}
	id := taskIDOf(t, a.body)
	req := grpcSend("field-guide", "#script:sleeptool")
	req.Configuration = &a2apb.SendMessageConfiguration{ReturnImmediately: true}
	_, err := cl.SendMessage(alice, req)
	checkGRPCStatus(t, "unary send over the cap", err, codes.ResourceExhausted, "TOO_MANY_REQUESTS", a2aserver.ErrorDomain)
	st, err := cl.SendStreamingMessage(alice, grpcSend("field-guide", "hi"))
	if err == nil {
		_, err = st.Recv()
	}
	checkGRPCStatus(t, "streaming send over the cap", err, codes.ResourceExhausted, "TOO_MANY_REQUESTS", a2aserver.ErrorDomain)
	if _, err := cl.GetTask(alice, &a2apb.GetTaskRequest{Tenant: "field-guide", Id: id}); err != nil {
		t.Fatalf("GetTask at the cap: %v", err)
	}
	h.cancelTask(t, h.keyApp1, "alice", id)
	waitFor(t, "the place back", func() bool { n, _, _, _ := h.srv.Admission().Counts(""); return n == 0 })
	// Admitted now; a finished gRPC turn, unary and streamed, leaves nothing held.
	if _, err := cl.SendMessage(alice, grpcSend("field-guide", "hello")); err != nil {
		t.Fatalf("unary send after the cancel: %v", err)
	}
	st, err = cl.SendStreamingMessage(alice, grpcSend("field-guide", "hello again"))
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Recv(); err != nil {
			break
		}
	}
	waitFor(t, "every place back", func() bool {
		n, on, os, or := h.srv.Admission().Counts("app1/alice")
		return n == 0 && on == 0 && os == 0 && or == 0
	})
}
