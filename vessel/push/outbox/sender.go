package outbox

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
)

// Sender is the push.Sender the SDK is given (it serves the push config
// methods only with one). It sends and enqueues nothing: the task store
// enqueues each delivery in the transaction that writes the status
// (EnqueueTx, store.PushQueuing), so no crash can come between the two.
// As a push.StoreSender it also spares the SDK's processor a listing of
// the task's configs for every event (vendored patch, PATCHES.md).
var Sender push.Sender = storeSends{}

var _ push.StoreSender = storeSends{}

type storeSends struct{}

// StoreSends implements push.StoreSender.
func (storeSends) StoreSends() {}

// SendPush implements push.Sender.
func (storeSends) SendPush(context.Context, *a2a.PushConfig, a2a.Event) error { return nil }
