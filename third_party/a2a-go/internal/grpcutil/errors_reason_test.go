// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package grpcutil

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func withReason(t *testing.T, code codes.Code, reason string) error {
	t.Helper()
	st, err := status.New(code, "m").WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: a2a.ProtocolDomain})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// TestFromGRPCErrorReadsReason: the ErrorInfo reason names the error under
// the code this package sends and under the code A2A 1.0 §5.4 gives.
func TestFromGRPCErrorReadsReason(t *testing.T) {
	cases := []struct {
		code   codes.Code
		reason string
		want   error
	}{
		{codes.Unimplemented, "UNSUPPORTED_OPERATION", a2a.ErrUnsupportedOperation},
		{codes.FailedPrecondition, "UNSUPPORTED_OPERATION", a2a.ErrUnsupportedOperation},
		{codes.Unimplemented, "VERSION_NOT_SUPPORTED", a2a.ErrVersionNotSupported},
		{codes.FailedPrecondition, "VERSION_NOT_SUPPORTED", a2a.ErrVersionNotSupported},
		{codes.Unimplemented, "PUSH_NOTIFICATION_NOT_SUPPORTED", a2a.ErrPushNotificationNotSupported},
		{codes.Unimplemented, "METHOD_NOT_FOUND", a2a.ErrMethodNotFound},
		{codes.InvalidArgument, "INVALID_PARAMS", a2a.ErrInvalidParams},
		{codes.NotFound, "TASK_NOT_FOUND", a2a.ErrTaskNotFound},
		{codes.Unimplemented, "NO_SUCH_REASON", a2a.ErrInternalError},
	}
	for _, c := range cases {
		got := FromGRPCError(withReason(t, c.code, c.reason))
		if !errors.Is(got, c.want) {
			t.Errorf("%s %s: %v, want %v", c.code, c.reason, got, c.want)
		}
	}
}
