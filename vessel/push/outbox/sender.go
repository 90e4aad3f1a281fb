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
var Sender push.Sender = storeSends{}

type storeSends struct{}

// SendPush implements push.Sender.
func (storeSends) SendPush(context.Context, *a2a.PushConfig, a2a.Event) error { return nil }
