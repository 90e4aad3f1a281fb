package client

import (
	"context"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the ErrorInfo domain of the vessel's own refusals (the
// agent unavailable or unknown, the request too large).
const ErrorDomain = "astralvessel"

// grpcRefusal turns a gRPC status the vessel answered before the A2A layer
// into the *HTTPError the HTTP bindings give for it, so that errors.Is
// with ErrUnauthorized, ErrForbidden, ErrNotFound, ErrTooLarge and
// ErrUnavailable works on every binding: UNAUTHENTICATED (401),
// PERMISSION_DENIED (403), RESOURCE_EXHAUSTED (413, the message limit,
// which the transport answers with no ErrorInfo) and every status in the
// vessel's domain (AGENT_UNAVAILABLE 503, AGENT_NOT_FOUND 404). Other
// statuses are A2A errors and go on to a2a-go, which reads them as
// a2a.ErrTaskNotFound and so on.
func grpcRefusal(err error) error {
	st, ok := status.FromError(err)
	if !ok || err == nil {
		return err
	}
	var reason, domain string
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			reason, domain = info.Reason, info.Domain
		}
	}
	code := 0
	switch {
	case st.Code() == codes.Unauthenticated:
		code = http.StatusUnauthorized
	case st.Code() == codes.PermissionDenied:
		code = http.StatusForbidden
	case st.Code() == codes.ResourceExhausted && (domain == "" || domain == ErrorDomain):
		code = http.StatusRequestEntityTooLarge
	case domain == ErrorDomain && st.Code() == codes.Unavailable:
		code = http.StatusServiceUnavailable
	case domain == ErrorDomain && st.Code() == codes.NotFound:
		code = http.StatusNotFound
	case domain == ErrorDomain && st.Code() == codes.DeadlineExceeded:
		code = http.StatusRequestTimeout
	case domain == ErrorDomain && st.Code() == codes.InvalidArgument:
		code = http.StatusBadRequest
	}
	if code == 0 || (domain != "" && domain != ErrorDomain && domain != a2a.ProtocolDomain) {
		return err
	}
	return &HTTPError{StatusCode: code, Message: st.Message(), Reason: reason, Domain: domain}
}

func grpcUnaryRefusals(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return grpcRefusal(invoker(ctx, method, req, reply, cc, opts...))
}

func grpcStreamRefusals(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, grpcRefusal(err)
	}
	return refusalStream{s}, nil
}

// refusalStream reads a stream's refusal (it comes with the first
// receive) as grpcRefusal does.
type refusalStream struct{ grpc.ClientStream }

func (s refusalStream) RecvMsg(m any) error { return grpcRefusal(s.ClientStream.RecvMsg(m)) }
