package server

import (
	"bytes"
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

	"github.com/astraldeep/astralvessel-go/deployer/telemetry"
)

// maxRequest bounds a request message (arguments of one tool call).
const maxRequest = 16_000_000

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

// API serves the sandbox API on one port: gRPC, which the vessel speaks,
// and HTTP/JSON.
type API struct {
	grpc *grpc.Server
	http *http.Server

	mu sync.Mutex
	ln net.Listener
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
	gs := grpc.NewServer(append([]grpc.ServerOption{grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(streamAuth),
		grpc.MaxRecvMsgSize(maxRequest)}, telemetry.GRPCServerOptions()...)...)
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
		ReadHeaderTimeout: sniffTimeout,
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

// http2Preface opens every HTTP/2 connection (RFC 9113 §3.4).
var http2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

// sniffTimeout bounds the wait for a connection's first bytes (and an
// HTTP request's header).
const sniffTimeout = 10 * time.Second

// Serve answers on ln until Shutdown or Close. A connection that opens
// with the HTTP/2 preface is gRPC and goes to the gRPC server's own
// transport: gRPC served through net/http's HTTP/2 server cost about a
// fifth of sandboxd's CPU per call in goroutine hand-offs and one socket
// write per frame. Any other connection is HTTP/1.x: the JSON API. This
// split by the first bytes is what keeps both on one port (the one the
// vessel and the local stack's readiness check know) with gRPC on
// its own transport; a second port for the JSON API would remove it.
func (a *API) Serve(ln net.Listener) error {
	a.mu.Lock()
	a.ln = ln
	a.mu.Unlock()
	grpcL, httpL := newConnQueue(ln.Addr()), newConnQueue(ln.Addr())
	defer grpcL.Close()
	defer httpL.Close()
	go func() { _ = a.grpc.Serve(grpcL) }()
	go func() { _ = a.http.Serve(httpL) }()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return err
		}
		if err != nil {
			// Out of descriptors and the like: wait and retry, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go route(c, grpcL, httpL)
	}
}

// route hands a connection to gRPC or HTTP by its first bytes.
func route(c net.Conn, grpcL, httpL *connQueue) {
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	buf := make([]byte, len(http2Preface))
	n := 0
	for n < len(buf) && bytes.HasPrefix(http2Preface, buf[:n]) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil && (n == 0 || bytes.HasPrefix(http2Preface, buf[:n])) {
			c.Close()
			return
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, peeked: buf[:n]}
	if bytes.Equal(buf[:n], http2Preface) {
		grpcL.push(pc)
	} else {
		httpL.push(pc)
	}
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
	if a.ln != nil {
		_ = a.ln.Close()
	}
}

// connQueue is a net.Listener of the connections route hands it.
type connQueue struct {
	addr net.Addr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func newConnQueue(addr net.Addr) *connQueue {
	return &connQueue{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (q *connQueue) push(c net.Conn) {
	select {
	case q.ch <- c:
	case <-q.done:
		c.Close()
	}
}

func (q *connQueue) Accept() (net.Conn, error) {
	select {
	case c := <-q.ch:
		return c, nil
	case <-q.done:
		return nil, net.ErrClosed
	}
}

func (q *connQueue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

func (q *connQueue) Addr() net.Addr { return q.addr }

// peekedConn gives back the bytes route read before the rest.
type peekedConn struct {
	net.Conn
	peeked []byte
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if len(c.peeked) > 0 {
		n := copy(p, c.peeked)
		c.peeked = c.peeked[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
