package a2aserver

import (
	"context"
	"net/http"
	"strings"
	"time"

	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
)

// The gRPC binding (a2a-go's a2agrpc) serves every agent on one listener.
// A call names its agent in the request's tenant field: each card's GRPC
// interface carries the agent id as its tenant, and a2a-go's client copies
// it into every request (docs/a2a.md). Admission is admitCall, the same as
// on JSON-RPC and HTTP+JSON, run by an interceptor on the decoded request
// before a2agrpc sees it; the message-size limit is the transport's
// (grpc.MaxRecvMsgSize, RESOURCE_EXHAUSTED), with the connection bounds of
// GRPCBounds.

// GRPCBounds are the gRPC binding's bounds on each connection, beside the
// [limits] admission applies to each call. They live here, in one place,
// and docs/a2a.md ("gRPC", "Connections") gives each with its reason.
type GRPCBounds struct {
	// MaxConcurrentStreams is HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS: the
	// calls one connection may have open at once. A client over it has
	// its new streams refused (RST_STREAM REFUSED_STREAM; grpc-go's client
	// queues them until a stream ends). It bounds the work a connection
	// makes before admission runs (each stream's message is read whole
	// first). It is [limits] max_requests_per_owner, so one owner's whole
	// allowance fits on one connection, and at least GRPCMinStreams, so an
	// application multiplexing many users over one connection is not held
	// to one owner's share.
	MaxConcurrentStreams uint32
	// MinPingInterval is the keepalive enforcement policy's MinTime: a
	// client pinging more often (or pinging at all with no call open,
	// PermitWithoutStream false) gets GOAWAY ENHANCE_YOUR_CALM
	// ("too_many_pings") after a few strikes and its connection closed.
	MinPingInterval time.Duration
	// PingAfter and PingTimeout are the server's own keepalive: after
	// PingAfter without a frame the server pings, and a peer that does not
	// answer within PingTimeout is dropped, so a dead peer's streams end.
	PingAfter, PingTimeout time.Duration
	// IdleTimeout closes a connection without calls (MaxConnectionIdle).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the time from accept to the client's preface
	// and first SETTINGS (grpc.ConnectionTimeout): a connection that
	// sends nothing is closed.
	HandshakeTimeout time.Duration
	// MaxHeaderListSize bounds a call's metadata (HTTP/2 header list):
	// http.DefaultMaxHeaderBytes, what the HTTP port's server allows.
	MaxHeaderListSize uint32
	// MaxRecvMsgSize is the largest request message, the HTTP bodies'
	// limit (Config.MaxBody, MaxBodyBytes): larger is RESOURCE_EXHAUSTED.
	MaxRecvMsgSize int
}

// Defaults of GRPCBounds that do not follow the configuration.
const (
	// GRPCMinStreams is the floor of MaxConcurrentStreams: the value RFC
	// 9113 (section 6.5.2) asks a server not to go below.
	GRPCMinStreams = 100
	// GRPCMaxStreams is its ceiling: max_requests_per_owner may be set up
	// to a million, and each open call holds a goroutine and the data flow
	// control lets in.
	GRPCMaxStreams = 1000
	// GRPCMinPingInterval: clients that keep long streams alive through
	// NATs ping every 30 s or more; faster is a flood.
	GRPCMinPingInterval = 30 * time.Second
	// GRPCPingAfter and GRPCPingTimeout find a dead peer of an open stream
	// within about 80 s.
	GRPCPingAfter   = time.Minute
	GRPCPingTimeout = 20 * time.Second
	// GRPCIdleTimeout matches the HTTP server's IdleTimeout.
	GRPCIdleTimeout = 2 * time.Minute
	// GRPCHandshakeTimeout: a client sends its preface and SETTINGS at once.
	GRPCHandshakeTimeout = 10 * time.Second
)

// GRPCBounds returns the bounds GRPCServer applies.
func (s *Server) GRPCBounds() GRPCBounds {
	streams := uint32(GRPCMinStreams)
	if n := s.cfg.Deployment.Limits.MaxRequestsPerOwner; n > GRPCMinStreams {
		streams = uint32(min(n, GRPCMaxStreams))
	}
	return GRPCBounds{
		MaxConcurrentStreams: streams,
		MinPingInterval:      GRPCMinPingInterval,
		PingAfter:            GRPCPingAfter,
		PingTimeout:          GRPCPingTimeout,
		IdleTimeout:          GRPCIdleTimeout,
		HandshakeTimeout:     GRPCHandshakeTimeout,
		MaxHeaderListSize:    http.DefaultMaxHeaderBytes,
		MaxRecvMsgSize:       int(s.cfg.MaxBody),
	}
}

// Options are the server options of b.
func (b GRPCBounds) Options() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(b.MaxConcurrentStreams),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: b.MinPingInterval, PermitWithoutStream: false}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: b.IdleTimeout, Time: b.PingAfter, Timeout: b.PingTimeout}),
		grpc.ConnectionTimeout(b.HandshakeTimeout),
		grpc.MaxHeaderListSize(b.MaxHeaderListSize),
		grpc.MaxRecvMsgSize(b.MaxRecvMsgSize),
	}
}

// GRPCServer returns a gRPC server with every agent's A2A service behind
// the vessel's admission and the connection bounds of GRPCBounds; opts
// come after them, so they may change one (tests, credentials).
func (s *Server) GRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	opts = append(append(s.GRPCBounds().Options(),
		grpc.InTapHandle(s.grpcTap),
		grpc.ChainUnaryInterceptor(s.grpcUnary),
		grpc.ChainStreamInterceptor(s.grpcStream),
	), opts...)
	g := grpc.NewServer(opts...)
	a2apb.RegisterA2AServiceServer(g, &grpcRouter{})
	return g
}

type grpcAgentKey struct{}

// tenanted is every A2A 1.0 request message.
type tenanted interface{ GetTenant() string }

// grpcAdmit finds the agent a request names and admits the call: the
// metadata stand for the HTTP headers (authorization, x-vessel-user,
// x-vessel-scopes, x-vessel-approve, a2a-version). The returned context
// carries the agent for grpcRouter and no authorization metadata.
func (s *Server) grpcAdmit(ctx context.Context, fullMethod string, m any) (context.Context, func(), error) {
	t, ok := m.(tenanted)
	if !ok {
		return nil, nil, status.Error(codes.InvalidArgument, "not an A2A request")
	}
	id := t.GetTenant()
	n := noteFrom(ctx)
	if n != nil {
		n.mu.Lock()
		n.agent = truncate(id, 64)
		n.mu.Unlock()
	}
	a := s.agents[id]
	if a == nil {
		if id == "" {
			n.setErr(http.StatusText(http.StatusBadRequest), "no tenant")
			return nil, nil, status.Error(codes.InvalidArgument, "name the agent in the request's tenant field (the tenant of the card's GRPC interface)")
		}
		n.setErr(http.StatusText(http.StatusNotFound), "unknown agent")
		return nil, nil, grpcStatus(&refusal{status: http.StatusNotFound, msg: "unknown agent " + truncate(id, 64)})
	}
	md, _ := metadata.FromIncomingContext(ctx)
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/agents/"+id+"/grpc", http.NoBody)
	if err != nil {
		return nil, nil, status.Error(codes.Internal, "could not read the call")
	}
	for k, vs := range md {
		if strings.HasPrefix(k, ":") {
			continue
		}
		r.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		r.RemoteAddr = p.Addr.String()
	}
	method := fullMethod[strings.LastIndex(fullMethod, "/")+1:]
	actx, done, no := s.admitCall(r, a, nil, func() int { return methodStarts(method) })
	if no != nil {
		n.setErr(http.StatusText(no.status), no.msg)
		return nil, nil, grpcStatus(no)
	}
	md = md.Copy()
	delete(md, "authorization")
	actx = metadata.NewIncomingContext(actx, md)
	return context.WithValue(actx, grpcAgentKey{}, a), done, nil
}

// grpcStatus is a vessel refusal as a gRPC status with an ErrorInfo
// detail: the code and reason REST uses for the same refusal (statusOf).
func grpcStatus(no *refusal) error {
	name, reason, domain := statusOf(no.status)
	code := codes.Internal
	switch name {
	case "UNAUTHENTICATED":
		code = codes.Unauthenticated
	case "PERMISSION_DENIED":
		code = codes.PermissionDenied
	case "NOT_FOUND":
		code = codes.NotFound
	case "DEADLINE_EXCEEDED":
		code = codes.DeadlineExceeded
	case "RESOURCE_EXHAUSTED":
		code = codes.ResourceExhausted
	case "UNAVAILABLE":
		code = codes.Unavailable
	case "INVALID_ARGUMENT":
		code = codes.InvalidArgument
	}
	st := status.New(code, no.msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: domain}); err == nil {
		st = d
	}
	return st.Err()
}

// grpcTap runs on a call's headers, before grpc-go reads its message,
// which it reads whole before any interceptor (and so the admission, with
// its authentication) runs. The message must arrive within the body
// timeout the HTTP bindings give a body (Config.BodyTimeout), or the
// call's context ends and the call with it (DEADLINE_EXCEEDED): nobody,
// with or without credentials, holds a call open by sending its message
// slowly or never. (A call without credentials is refused by the
// admission, with its ErrorInfo and audit event, once its message is in.)
func (s *Server) grpcTap(ctx context.Context, _ *tap.Info) (context.Context, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(s.cfg.BodyTimeout, func() { cancel(errMessageTimeout) })
	return context.WithValue(ctx, messageTimerKey{}, t), nil
}

// errMessageTimeout ends a call whose message did not arrive in time.
var errMessageTimeout = status.Error(codes.DeadlineExceeded, "the request message did not arrive within the body timeout")

type messageTimerKey struct{}

// messageArrived stops the call's message timer (grpcTap): its message is
// in, and the call may run as long as it needs.
func messageArrived(ctx context.Context) {
	if t, ok := ctx.Value(messageTimerKey{}).(*time.Timer); ok {
		t.Stop()
	}
}

func (s *Server) grpcUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	messageArrived(ctx)
	ctx, done := s.grpcAudit(ctx, info.FullMethod)
	defer func() { done(err) }()
	ctx, release, err := s.grpcAdmit(ctx, info.FullMethod, req)
	if err != nil {
		return nil, err
	}
	defer release()
	resp, err = handler(ctx, req)
	return resp, specCode(err)
}

func (s *Server) grpcStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	ctx, done := s.grpcAudit(ss.Context(), info.FullMethod)
	defer func() { done(err) }()
	as := &admittedStream{ServerStream: ss, s: s, base: ctx, method: info.FullMethod}
	defer as.release()
	return specCode(handler(srv, as))
}

// grpcAudit gives a gRPC call an audit note, as audited does for the HTTP
// bindings; done writes its API Activity event with the HTTP status that
// stands for the call's gRPC code.
func (s *Server) grpcAudit(ctx context.Context, method string) (context.Context, func(error)) {
	if s.cfg.Audit == nil {
		return ctx, func(error) {}
	}
	start, n := time.Now(), &auditNote{}
	ctx = context.WithValue(ctx, auditKey{}, n)
	return ctx, func(err error) {
		c := &audit.APICall{Start: start, HTTPMethod: http.MethodPost, Path: method, HTTPStatus: httpStatusOf(status.Code(err))}
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			c.Remote = p.Addr.String()
		}
		if md, ok := metadata.FromIncomingContext(ctx); ok {
			c.UserAgent = truncate(strings.Join(md.Get("user-agent"), " "), 200)
		}
		s.emitAPICall(n, c)
	}
}

// httpStatusOf is the HTTP status the vessel's HTTP bindings give for the
// same outcome as a gRPC code (statusOf, the other way).
func httpStatusOf(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.InvalidArgument, codes.FailedPrecondition:
		return http.StatusBadRequest
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.NotFound:
		return http.StatusNotFound
	case codes.ResourceExhausted:
		return http.StatusRequestEntityTooLarge
	case codes.DeadlineExceeded:
		return http.StatusRequestTimeout
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Canceled:
		return 499
	}
	return http.StatusInternalServerError
}

// admittedStream admits a streaming call on its request (A2A's streams
// are server streams: one request, read before the method runs).
type admittedStream struct {
	grpc.ServerStream
	s      *Server
	base   context.Context // the stream's context with its audit note
	method string          // the call's full method name
	ctx    context.Context // once admitted
	done   func()          // ends the admission, once admitted
}

// release ends the stream's admission, if it was admitted.
func (w *admittedStream) release() {
	if w.done != nil {
		w.done()
	}
}

func (w *admittedStream) RecvMsg(m any) error {
	err := w.ServerStream.RecvMsg(m)
	messageArrived(w.base)
	if err != nil {
		return err
	}
	if w.ctx != nil {
		return status.Error(codes.InvalidArgument, "one request per call")
	}
	ctx, done, err := w.s.grpcAdmit(w.base, w.method, m)
	if err != nil {
		return err
	}
	w.ctx, w.done = ctx, done
	return nil
}

func (w *admittedStream) Context() context.Context {
	if w.ctx != nil {
		return w.ctx
	}
	return w.base
}

// grpcRouter hands each admitted call to its agent's a2agrpc handler. A
// context without an agent was not admitted and is refused.
type grpcRouter struct {
	a2apb.UnimplementedA2AServiceServer
}

var errNotAdmitted = status.Error(codes.Internal, "the call was not admitted")

func agentHandler(ctx context.Context) (*a2agrpc.Handler, error) {
	a, ok := ctx.Value(grpcAgentKey{}).(*agent)
	if !ok || a.grpc == nil {
		return nil, errNotAdmitted
	}
	return a.grpc, nil
}

func (grpcRouter) SendMessage(ctx context.Context, r *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.SendMessage(ctx, r)
}

func (grpcRouter) SendStreamingMessage(r *a2apb.SendMessageRequest, st grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	h, err := agentHandler(st.Context())
	if err != nil {
		return err
	}
	return h.SendStreamingMessage(r, st)
}

func (grpcRouter) GetTask(ctx context.Context, r *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.GetTask(ctx, r)
}

func (grpcRouter) ListTasks(ctx context.Context, r *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.ListTasks(ctx, r)
}

func (grpcRouter) CancelTask(ctx context.Context, r *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.CancelTask(ctx, r)
}

func (grpcRouter) SubscribeToTask(r *a2apb.SubscribeToTaskRequest, st grpc.ServerStreamingServer[a2apb.StreamResponse]) error {
	h, err := agentHandler(st.Context())
	if err != nil {
		return err
	}
	return h.SubscribeToTask(r, st)
}

func (grpcRouter) CreateTaskPushNotificationConfig(ctx context.Context, r *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.CreateTaskPushNotificationConfig(ctx, r)
}

func (grpcRouter) GetTaskPushNotificationConfig(ctx context.Context, r *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.GetTaskPushNotificationConfig(ctx, r)
}

func (grpcRouter) ListTaskPushNotificationConfigs(ctx context.Context, r *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.ListTaskPushNotificationConfigs(ctx, r)
}

func (grpcRouter) GetExtendedAgentCard(ctx context.Context, r *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.GetExtendedAgentCard(ctx, r)
}

func (grpcRouter) DeleteTaskPushNotificationConfig(ctx context.Context, r *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	h, err := agentHandler(ctx)
	if err != nil {
		return nil, err
	}
	return h.DeleteTaskPushNotificationConfig(ctx, r)
}

// grpcInterface is the card's GRPC interface: the vessel's gRPC address
// and the agent id as the tenant every request names.
func grpcInterface(addr, agentID string) *a2a.AgentInterface {
	i := a2a.NewAgentInterface(addr, a2a.TransportProtocolGRPC)
	i.Tenant = agentID
	return i
}
