package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// bindingGRPC is the gRPC binding as agent cards name it.
const bindingGRPC = "GRPC"

// grpcMode reports whether the checks now run over the gRPC binding. There
// the suite turns each call's JSON params into the A2A 1.0 request message
// (protojson: the JSON form is the proto's), names the agent in the
// request's tenant, and reads the answer back as JSON, so the checks read
// it as they read JSON-RPC's and HTTP+JSON's. Errors are gRPC statuses;
// their code must be the one docs/a2a.md gives for their ErrorInfo reason.
func (e *env) grpcMode() bool { return e.binding == bindingGRPC }

// grpcCodes is the gRPC code each A2A error reason must have (A2A 1.0
// §5.4, docs/a2a.md).
var grpcCodes = map[string]codes.Code{
	"PARSE_ERROR": codes.InvalidArgument, "INVALID_REQUEST": codes.InvalidArgument, "INVALID_PARAMS": codes.InvalidArgument,
	"METHOD_NOT_FOUND": codes.Unimplemented, "INTERNAL_ERROR": codes.Internal, "TASK_NOT_FOUND": codes.NotFound,
	"TASK_NOT_CANCELABLE": codes.FailedPrecondition, "PUSH_NOTIFICATION_NOT_SUPPORTED": codes.Unimplemented,
	"UNSUPPORTED_OPERATION": codes.Unimplemented, "EXTENDED_AGENT_CARD_NOT_CONFIGURED": codes.FailedPrecondition,
	"VERSION_NOT_SUPPORTED": codes.Unimplemented, "UNAUTHENTICATED": codes.Unauthenticated,
	"UNAUTHORIZED": codes.PermissionDenied,
}

// grpcClient dials the card's gRPC interface once.
func (e *env) grpcClient() (a2apb.A2AServiceClient, error) {
	if e.grpcConn == nil {
		conn, err := grpc.NewClient(e.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
		if err != nil {
			return nil, fmt.Errorf("gRPC %s: %w", e.grpcAddr, err)
		}
		e.grpcConn = conn
	}
	return a2apb.NewA2AServiceClient(e.grpcConn), nil
}

// grpcContext is ctx with the call's metadata: the auth, A2A-Version and hdr.
func grpcContext(ctx context.Context, a auth, hdr map[string]string) context.Context {
	md := metadata.MD{"a2a-version": {"1.0"}}
	if !a.noKey {
		md.Set("authorization", "Bearer "+a.key)
	}
	if !a.noUser && a.user != "" {
		md.Set("x-vessel-user", a.user)
	}
	for k, v := range hdr {
		md.Set(strings.ToLower(k), v)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// grpcRequest builds method's request message from its JSON params, with
// tenant set.
func grpcRequest(method string, params any, tenant string) (proto.Message, error) {
	var m interface {
		proto.Message
		GetTenant() string
	}
	switch method {
	case "SendMessage", "SendStreamingMessage":
		m = &a2apb.SendMessageRequest{}
	case "GetTask":
		m = &a2apb.GetTaskRequest{}
	case "ListTasks":
		m = &a2apb.ListTasksRequest{}
	case "CancelTask":
		m = &a2apb.CancelTaskRequest{}
	case "SubscribeToTask":
		m = &a2apb.SubscribeToTaskRequest{}
	default:
		return nil, fmt.Errorf("%s has no gRPC form in this suite", method)
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if err := protojson.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s params as the A2A 1.0 proto: %w", method, err)
	}
	reflectTenant(m, tenant)
	return m, nil
}

// reflectTenant sets the tenant field every A2A 1.0 request message has.
func reflectTenant(m proto.Message, tenant string) {
	f := m.ProtoReflect().Descriptor().Fields().ByName("tenant")
	if f != nil && tenant != "" {
		m.ProtoReflect().Set(f, protoreflect.ValueOfString(tenant))
	}
}

// protoJSON reads a proto answer as the JSON the checks read.
func protoJSON(m proto.Message) (any, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// grpcStatusError reads a gRPC status as the JSON-RPC-like error object
// the checks read ({"code": <JSON-RPC code of its reason>, "message",
// "reason", "status"}), and refuses a code that does not go with its reason.
func grpcStatusError(err error) (obj, error) {
	st, ok := status.FromError(err)
	if !ok {
		return nil, err
	}
	reason := ""
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason = info.Reason
		}
	}
	if reason == "" {
		return nil, fmt.Errorf("gRPC %s without an ErrorInfo: %s", st.Code(), st.Message())
	}
	if want, ok := grpcCodes[reason]; ok && st.Code() != want {
		return nil, fmt.Errorf("gRPC %s for %s, want %s", st.Code(), reason, want)
	}
	code, ok := reasonCodes[reason]
	if !ok {
		code = -32603
	}
	return obj{"code": float64(code), "message": st.Message(), "reason": reason, "status": st.Code().String()}, nil
}

// grpcCall is rpc over gRPC: the answer as JSON-RPC's would be ({"result":
// ...} or {"error": {...}}), with status 200 (the gRPC code was checked).
func (e *env) grpcCall(ctx context.Context, agent, method string, params any, a auth, hdr map[string]string) (int, obj, error) {
	cl, err := e.grpcClient()
	if err != nil {
		return 0, nil, err
	}
	req, err := grpcRequest(method, params, e.tenant(agent))
	if err != nil {
		return 0, nil, err
	}
	ctx = grpcContext(ctx, a, hdr)
	var resp proto.Message
	switch r := req.(type) {
	case *a2apb.SendMessageRequest:
		resp, err = cl.SendMessage(ctx, r)
	case *a2apb.GetTaskRequest:
		resp, err = cl.GetTask(ctx, r)
	case *a2apb.ListTasksRequest:
		resp, err = cl.ListTasks(ctx, r)
	case *a2apb.CancelTaskRequest:
		resp, err = cl.CancelTask(ctx, r)
	default:
		return 0, nil, fmt.Errorf("%s is a stream", method)
	}
	if err != nil {
		eo, serr := grpcStatusError(err)
		if serr != nil {
			return 0, nil, serr
		}
		return 200, obj{"error": eo}, nil
	}
	v, err := protoJSON(resp)
	if err != nil {
		return 0, nil, err
	}
	return 200, obj{"result": v}, nil
}

// grpcStream is stream over gRPC: each StreamResponse is one frame (task,
// statusUpdate, artifactUpdate or message); a status ending the stream is
// an error frame, as JSON-RPC sends an error frame.
func (e *env) grpcStream(ctx context.Context, agent, method string, params any, a auth, each func(frame) bool) (*httpResult, []frame, error) {
	cl, err := e.grpcClient()
	if err != nil {
		return nil, nil, err
	}
	req, err := grpcRequest(method, params, e.tenant(agent))
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(grpcContext(ctx, a, nil))
	defer cancel()
	var st grpc.ServerStreamingClient[a2apb.StreamResponse]
	switch r := req.(type) {
	case *a2apb.SendMessageRequest:
		st, err = cl.SendStreamingMessage(ctx, r)
	case *a2apb.SubscribeToTaskRequest:
		st, err = cl.SubscribeToTask(ctx, r)
	default:
		return nil, nil, fmt.Errorf("%s is not a stream", method)
	}
	hr := &httpResult{status: 200}
	var frames []frame
	for err == nil {
		var resp *a2apb.StreamResponse
		if resp, err = st.Recv(); err != nil {
			break
		}
		v, jerr := protoJSON(resp)
		if jerr != nil {
			return hr, frames, jerr
		}
		m, _ := v.(map[string]any)
		f := frame{raw: m}
		for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
			if b := getObj(m, k); b != nil {
				f.kind, f.body = k, b
				break
			}
		}
		frames = append(frames, f)
		if !each(f) {
			return hr, frames, nil
		}
	}
	if errors.Is(err, io.EOF) {
		return hr, frames, nil
	}
	eo, serr := grpcStatusError(err)
	if serr != nil {
		return hr, frames, serr
	}
	f := frame{raw: obj{"error": eo}, kind: "error", body: eo}
	frames = append(frames, f)
	each(f)
	return hr, frames, nil
}

// tenant is the tenant naming agent: the card's for the suite's agent.
func (e *env) tenant(agent string) string {
	if agent == e.cfg.Agent && e.grpcTenant != "" {
		return e.grpcTenant
	}
	return agent
}

// checkGRPCInterface reads the card's GRPC interface: A2A 1.0 at host:port
// with the agent id as tenant (the vessel routes by it); Config.GRPCAddress
// replaces the address for a server reached through another one.
func checkGRPCInterface(e *env, iface map[string]any) error {
	u, tenant := getStr(iface, "url"), getStr(iface, "tenant")
	if _, port, err := net.SplitHostPort(u); err != nil || port == "" {
		return fmt.Errorf("GRPC url %q is not host:port", u)
	}
	if tenant != e.cfg.Agent {
		return fmt.Errorf("GRPC tenant %q, want the agent id %q", tenant, e.cfg.Agent)
	}
	e.grpcAddr, e.grpcTenant = u, tenant
	if e.cfg.GRPCAddress != "" {
		e.grpcAddr = e.cfg.GRPCAddress
	}
	e.bindings = append(e.bindings, bindingGRPC)
	return nil
}

// checkGRPCRefusals: over gRPC the vessel's refusals are the statuses
// docs/a2a.md gives, with their ErrorInfo.
func checkGRPCRefusals(ctx context.Context, e *env, r *reporter) {
	if !slices.Contains(e.bindings, bindingGRPC) {
		r.skip("gRPC auth", "the card declares no GRPC interface")
		return
	}
	cl, err := e.grpcClient()
	if err != nil {
		r.fail("gRPC auth", "%v", err)
		return
	}
	try := func(name, tenant string, a auth, code codes.Code, reason string) {
		_, err := cl.GetTask(grpcContext(ctx, a, nil), &a2apb.GetTaskRequest{Tenant: tenant, Id: e.run + "-no-such-task"})
		st, _ := status.FromError(err)
		got := ""
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				got = info.Reason
			}
		}
		var cerr error
		if st.Code() != code || got != reason {
			cerr = fmt.Errorf("gRPC %s, reason %q; want %s / %s", st.Code(), got, code, reason)
		}
		r.check(name, cerr, fmt.Sprintf("%s / %s", code, reason))
	}
	t := e.tenant(e.cfg.Agent)
	try("gRPC auth: no key", t, auth{noKey: true, user: e.cfg.User}, codes.Unauthenticated, "UNAUTHENTICATED")
	try("gRPC auth: bad key", t, auth{key: e.cfg.Key + "x", user: e.cfg.User}, codes.Unauthenticated, "UNAUTHENTICATED")
	try("gRPC auth: no X-Vessel-User", t, auth{key: e.cfg.Key, noUser: true}, codes.Unauthenticated, "UNAUTHENTICATED")
	if e.cfg.OtherAgent == "" {
		r.skip("gRPC auth: ungranted agent", "no --other-agent given (an agent this key may not call)")
	} else {
		try("gRPC auth: ungranted agent", e.cfg.OtherAgent, e.me, codes.PermissionDenied, "UNAUTHORIZED")
	}
	try("gRPC routing: unknown agent", e.run+"-no-such-agent", e.me, codes.NotFound, "AGENT_NOT_FOUND")
	try("gRPC tasks: unknown task", t, e.me, codes.NotFound, "TASK_NOT_FOUND")

	_, err = cl.SendMessage(grpcContext(ctx, e.me, nil), &a2apb.SendMessageRequest{Tenant: t, Message: &a2apb.Message{
		MessageId: e.nextID(), Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: strings.Repeat("a", maxBody+1)}}}}})
	var lerr error
	if status.Code(err) != codes.ResourceExhausted {
		lerr = fmt.Errorf("%v, want RESOURCE_EXHAUSTED", err)
	}
	r.check("gRPC limit: RESOURCE_EXHAUSTED over 16,000,000 bytes", lerr, "RESOURCE_EXHAUSTED")
}
