package a2aserver_test

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc/codes"
)

// TestGRPCUnimplementedCodes: A2A 1.0 §5.4's UNIMPLEMENTED for push
// notifications not supported (a vessel without the outbox) and for an
// unsupported version, with the A2A reason kept; a2a-go's client reads both
// as the A2A error the reason names.
func TestGRPCUnimplementedCodes(t *testing.T) {
	h := newHarness(t)
	cl := h.grpcClient()
	alice := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice")
	_, err := cl.CreateTaskPushNotificationConfig(alice, &a2apb.TaskPushNotificationConfig{Tenant: "field-guide", TaskId: "t1", Url: "https://example.invalid/hook"})
	checkGRPCStatus(t, "push config without push", err, codes.Unimplemented, "PUSH_NOTIFICATION_NOT_SUPPORTED", a2a.ProtocolDomain)
	old := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice", "a2a-version", "0.3")
	_, err = cl.GetTask(old, &a2apb.GetTaskRequest{Tenant: "field-guide", Id: "t1"})
	checkGRPCStatus(t, "version 0.3", err, codes.Unimplemented, "VERSION_NOT_SUPPORTED", a2a.ProtocolDomain)
}

// TestGRPCClientReadsUnimplemented: a2a-go's gRPC client, from the card,
// reads a subscription to a finished task (UNIMPLEMENTED) as
// UnsupportedOperation.
func TestGRPCClientReadsUnimplemented(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	cl := h.cardClient("field-guide", a2a.TransportProtocolGRPC)
	res, err := cl.SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range cl.SubscribeToTask(as(h.keyApp1, "alice"), &a2a.SubscribeToTaskRequest{ID: res.(*a2a.Task).ID}) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("subscribe to a finished task: %v", err)
		}
		break
	}
}
