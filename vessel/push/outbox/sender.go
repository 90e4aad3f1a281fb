package outbox

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
)

// Sender is the push.Sender the SDK is given (it serves the push config
// methods only with one). It sends and enqueues nothing: the task store
// enqueues each delivery in the transaction that writes the status
// (EnqueueTx, store.PushQueuing), so no crash can come between the two.
// Given together with Configs, it is never even called.
var Sender push.Sender = noSends{}

type noSends struct{}

// SendPush implements push.Sender.
func (noSends) SendPush(context.Context, *a2a.PushConfig, a2a.Event) error { return nil }

// Configs wraps the push config store the SDK is given with Sender.
//
// The SDK's processor lists a task's configs for every event an execution
// emits, to hand each to the Sender: with the vessel's store that is one
// query per event (about 6 % of the vessel's CPU in the load scenario,
// issue 22) for deliveries the store enqueues anyway. The processor is
// internal to a2a-go and no option separates the store it lists from the
// one the push config methods serve, so the seam is here, behind
// push.ConfigStore: List answers only a caller's ListTaskPushConfigs (the
// method of the CallContext a2asrv's InterceptedHandler attaches to every
// call) and gives anything else, the processor included, no config and no
// query. Get, Save and Delete pass through.
func Configs(s push.ConfigStore) push.ConfigStore { return callerConfigs{s} }

type callerConfigs struct{ push.ConfigStore }

// listMethod is the method a CallContext names for a caller's listing.
const listMethod = "ListTaskPushConfigs"

// List implements push.ConfigStore.
func (c callerConfigs) List(ctx context.Context, taskID a2a.TaskID) ([]*a2a.PushConfig, error) {
	if cc, ok := a2asrv.CallContextFrom(ctx); !ok || cc.Method() != listMethod {
		return nil, nil
	}
	return c.ConfigStore.List(ctx, taskID)
}
