package a2aserver

import (
	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// unimplementedReasons are the A2A errors A2A 1.0 §5.4 maps to gRPC
// UNIMPLEMENTED, which a2a-go v2.4.0's a2agrpc answers as
// FAILED_PRECONDITION: the operation, the push notifications or the
// protocol version is not supported.
var unimplementedReasons = map[string]bool{
	a2a.ErrorReason(a2a.ErrUnsupportedOperation):         true,
	a2a.ErrorReason(a2a.ErrPushNotificationNotSupported): true,
	a2a.ErrorReason(a2a.ErrVersionNotSupported):          true,
}

// specCode gives an A2A error of a gRPC call the code §5.4 says, keeping
// its message and details; any other error is returned as it is. It runs
// in the vessel's interceptors, the seam between a2agrpc and the wire.
func specCode(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.FailedPrecondition {
		return err
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.Domain != a2a.ProtocolDomain || !unimplementedReasons[info.Reason] {
			continue
		}
		p := st.Proto()
		p.Code = int32(codes.Unimplemented)
		return status.FromProto(p).Err()
	}
	return err
}
