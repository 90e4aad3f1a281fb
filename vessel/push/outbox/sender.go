package outbox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
)

// Sender is the push.Sender of one agent: the SDK calls it for every event
// of a task with configs, and it enqueues those a webhook is told of.
func (o *Outbox) Sender(agent string) push.Sender { return &sender{o: o, agent: agent} }

type sender struct {
	o     *Outbox
	agent string
}

// Notified reports whether an event is pushed, and the state it reports:
// every status change to a terminal or interrupted state (input or auth
// required), and a task snapshot in such a state.
func Notified(event a2a.Event) (a2a.TaskState, bool) {
	var st a2a.TaskState
	switch e := event.(type) {
	case *a2a.TaskStatusUpdateEvent:
		st = e.Status.State
	case *a2a.Task:
		st = e.Status.State
	default:
		return "", false
	}
	return st, st.Terminal() || st == a2a.TaskStateInputRequired || st == a2a.TaskStateAuthRequired
}

// SendPush implements push.Sender. The job is inserted even when the
// call's context ends (a canceled turn's end is still told).
func (s *sender) SendPush(ctx context.Context, cfg *a2a.PushConfig, event a2a.Event) error {
	st, ok := Notified(event)
	if !ok || cfg == nil {
		return nil
	}
	body, err := json.Marshal(a2a.StreamResponse{Event: event})
	if err != nil {
		return fmt.Errorf("push: encode event: %w", err)
	}
	_, err = s.o.Enqueue(context.WithoutCancel(ctx), s.agent, cfg, st, body)
	return err
}
