package server

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"
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

// Handler serves gRPC (by content type) and HTTP/JSON on one handler. The
// HTTP/JSON gateway reaches the same gRPC server through an in-memory
// connection, so both paths pass the same token check; the caller must
// call the returned stop function on shutdown.
func (s *Server) Handler(ctx context.Context) (http.Handler, func(), error) {
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
	gs := grpc.NewServer(grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(streamAuth),
		grpc.MaxRecvMsgSize(maxRequest))
	sandboxv1.RegisterRunServiceServer(gs, s)

	mem := bufconn.Listen(1 << 20)
	go func() { _ = gs.Serve(mem) }()
	conn, err := grpc.NewClient("passthrough:///sandboxd",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return mem.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(maxRequest)))
	if err != nil {
		gs.Stop()
		return nil, nil, err
	}
	gw := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}))
	if err := sandboxv1.RegisterRunServiceHandlerClient(ctx, gw, sandboxv1.NewRunServiceClient(conn)); err != nil {
		conn.Close()
		gs.Stop()
		return nil, nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			gs.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRequest)
		gw.ServeHTTP(w, r)
	})
	stop := func() {
		conn.Close()
		done := make(chan struct{})
		go func() { gs.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			gs.Stop()
		}
	}
	return h, stop, nil
}

// NewHTTPServer serves h with HTTP/1.1 and unencrypted HTTP/2 (for gRPC).
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		Protocols:         &p,
		ReadHeaderTimeout: 10 * time.Second,
	}
}
