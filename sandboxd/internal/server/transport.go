package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// maxRequest bounds a request message (arguments of one tool call).
const maxRequest = 16_000_000

// streamWindow and connWindow are the gRPC flow-control windows of one
// call and of one vessel's connection.
const (
	streamWindow = 1 << 20
	connWindow   = 4 << 20
)

// authorized checks "authorization: Bearer <token>" in constant time.
func authorized(ctx context.Context, token string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		got, ok := strings.CutPrefix(v, "Bearer ")
		if ok && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "missing or wrong sandbox token")
}

// API serves the sandbox API: gRPC, which the vessel speaks, on one port,
// and the HTTP/JSON gateway (probes, operators, curl) on another.
type API struct {
	grpc *grpc.Server
	http *http.Server

	mu  sync.Mutex
	lns []net.Listener
}

// NewAPI sets up the gRPC server and the HTTP/JSON gateway. The gateway
// calls the server in process (grpc-gateway's RegisterRunServiceHandlerServer,
// and runStream for the streaming Run, which that registration does not
// serve); both paths pass the same token check.
func (s *Server) NewAPI(ctx context.Context) (*API, error) {
	unary := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := authorized(ctx, s.cfg.Token); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
	streamAuth := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if err := authorized(ss.Context(), s.cfg.Token); err != nil {
			return err
		}
		return h(srv, ss)
	}
	// With tracing on, each call continues the vessel's trace (otelgrpc).
	// Static flow-control windows: with the default dynamic ones every
	// request's data made the server send a bandwidth-estimate ping (and a
	// window update) and read its ack, two frames and a wake-up per call
	// for requests of a few hundred bytes. The windows bound what one
	// vessel may send ahead, below the 16 MiB the estimate could grow to.
	gs := grpc.NewServer(append([]grpc.ServerOption{grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(streamAuth),
		grpc.MaxRecvMsgSize(maxRequest), grpc.StaticStreamWindowSize(streamWindow), grpc.StaticConnWindowSize(connWindow)},
		telemetry.GRPCServerOptions()...)...)
	sandboxv1.RegisterRunServiceServer(gs, s)

	gw := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}))
	if err := sandboxv1.RegisterRunServiceHandlerServer(ctx, gw, tokenChecked{s}); err != nil {
		gs.Stop()
		return nil, fmt.Errorf("registering the JSON gateway: %w", err)
	}
	// Registered last, so it is the one that answers /run.
	if err := gw.HandlePath(http.MethodPost, "/run", func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		s.serveRun(gw, w, r)
	}); err != nil {
		gs.Stop()
		return nil, fmt.Errorf("registering the JSON gateway's /run: %w", err)
	}
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, maxRequest)
			gw.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: headerTimeout,
	}
	return &API{grpc: gs, http: hs}, nil
}

// tokenChecked is the server as the gateway's unary methods call it: with
// the token check the gRPC interceptor makes.
type tokenChecked struct{ *Server }

func (t tokenChecked) Status(ctx context.Context, req *sandboxv1.StatusRequest) (*sandboxv1.StatusResponse, error) {
	if err := authorized(ctx, t.cfg.Token); err != nil {
		return nil, err
	}
	return t.Server.Status(ctx, req)
}

func (t tokenChecked) EndTurn(ctx context.Context, req *sandboxv1.EndTurnRequest) (*sandboxv1.EndTurnResponse, error) {
	if err := authorized(ctx, t.cfg.Token); err != nil {
		return nil, err
	}
	return t.Server.EndTurn(ctx, req)
}

func (t tokenChecked) ListTurns(ctx context.Context, req *sandboxv1.ListTurnsRequest) (*sandboxv1.ListTurnsResponse, error) {
	if err := authorized(ctx, t.cfg.Token); err != nil {
		return nil, err
	}
	return t.Server.ListTurns(ctx, req)
}

// serveRun answers POST /run the way the gateway's generated handler for a
// gRPC client does (one {"result": RunResponse} line a message, an error as
// {"error": ...}), calling Run in process.
func (s *Server) serveRun(mux *runtime.ServeMux, w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	inbound, outbound := runtime.MarshalerForRequest(mux, r)
	ctx, err := runtime.AnnotateIncomingContext(ctx, mux, r, "/astralvessel.sandbox.v1.RunService/Run", runtime.WithHTTPPathPattern("/run"))
	if err != nil {
		runtime.HTTPError(ctx, mux, outbound, w, r, err)
		return
	}
	req := &sandboxv1.RunRequest{}
	if err := inbound.NewDecoder(r.Body).Decode(req); err != nil && !errors.Is(err, io.EOF) {
		runtime.HTTPError(ctx, mux, outbound, w, r, status.Errorf(codes.InvalidArgument, "%v", err))
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	st := &runStream{ctx: ctx, out: make(chan *sandboxv1.RunResponse)}
	done := make(chan error, 1)
	go func() {
		err := authorized(ctx, s.cfg.Token)
		if err == nil {
			err = s.Run(req, st)
		}
		done <- err
	}()
	defer func() {
		cancel() // the client went away or the stream ended: stop the call
		<-done
	}()
	fwd := runtime.NewServerMetadataContext(ctx, runtime.ServerMetadata{})
	runtime.ForwardResponseStream(fwd, mux, outbound, w, r, func() (proto.Message, error) {
		select {
		case m := <-st.out:
			return m, nil
		case err := <-done:
			done <- err // for the deferred wait
			if err == nil {
				return nil, io.EOF
			}
			return nil, err
		}
	})
}

// runStream is Run's stream for an HTTP/JSON call: Send hands each message
// to serveRun, which writes it.
type runStream struct {
	grpc.ServerStream // not called: Run uses Send and Context only
	ctx               context.Context
	out               chan *sandboxv1.RunResponse
}

func (s *runStream) Context() context.Context { return s.ctx }

func (s *runStream) Send(m *sandboxv1.RunResponse) error {
	select {
	case s.out <- m:
		return nil
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
}

// headerTimeout bounds the wait for an HTTP request's header.
const headerTimeout = 10 * time.Second

// Serve answers gRPC on grpcLn and, when httpLn is not nil, the HTTP/JSON
// gateway on httpLn, until Shutdown or Close. Each protocol has its own
// port, so gRPC keeps its own transport (gRPC served through net/http's
// HTTP/2 server costs about a fifth of sandboxd's CPU per call in
// goroutine hand-offs and one socket write per frame) and no connection is
// told apart by its first bytes. It returns the first server's error.
func (a *API) Serve(grpcLn, httpLn net.Listener) error {
	a.mu.Lock()
	a.lns = []net.Listener{grpcLn}
	if httpLn != nil {
		a.lns = append(a.lns, httpLn)
	}
	a.mu.Unlock()
	errc := make(chan error, 2)
	go func() { errc <- a.grpc.Serve(grpcLn) }()
	if httpLn != nil {
		go func() { errc <- a.http.Serve(httpLn) }()
	}
	return <-errc
}

// Shutdown stops accepting, lets HTTP requests and gRPC calls in flight
// end until ctx is done, then closes the rest.
func (a *API) Shutdown(ctx context.Context) error {
	a.closeListener()
	err := a.http.Shutdown(ctx)
	done := make(chan struct{})
	go func() { a.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		a.grpc.Stop()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stopping the HTTP server: %w", err)
	}
	return nil
}

// Close stops everything at once.
func (a *API) Close() {
	a.closeListener()
	_ = a.http.Close()
	a.grpc.Stop()
}

func (a *API) closeListener() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ln := range a.lns {
		_ = ln.Close()
	}
}
