package outbox_test

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"

	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
)

// workingAgent emits a few working updates and completes.
type workingAgent struct{}

func (workingAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		for range 3 {
			if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (workingAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {}
}

// countingStore counts List calls.
type countingStore struct {
	*push.InMemoryPushConfigStore
	lists atomic.Int64
}

func (s *countingStore) List(ctx context.Context, id a2a.TaskID) ([]*a2a.PushConfig, error) {
	s.lists.Add(1)
	return s.InMemoryPushConfigStore.List(ctx, id)
}

type countingSender struct{ sends atomic.Int64 }

func (s *countingSender) SendPush(context.Context, *a2a.PushConfig, a2a.Event) error {
	s.sends.Add(1)
	return nil
}

// TestConfigsSpareThePerEventPush: through Configs the SDK's processor
// lists no configs and sends nothing per event, while a caller's
// ListTaskPushConfigs still gets the task's configs; a plain store is
// listed (and the sender called) for every event. This is what a2a-go
// needs no patch for (PATCHES.md).
func TestConfigsSpareThePerEventPush(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wrap      func(push.ConfigStore) push.ConfigStore
		wantCalls bool
	}{
		{"plain store", func(s push.ConfigStore) push.ConfigStore { return s }, true},
		{"outbox.Configs", outbox.Configs, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &countingStore{InMemoryPushConfigStore: push.NewInMemoryStore()}
			sender := &countingSender{}
			h := a2asrv.NewHandler(workingAgent{}, a2asrv.WithPushNotifications(tc.wrap(store), sender))
			res, err := h.SendMessage(t.Context(), &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")),
				Config:  &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "https://receiver.test/hook"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			lists, sends := store.lists.Load(), sender.sends.Load()
			if tc.wantCalls && (lists < 5 || sends < 5) {
				t.Fatalf("%d lists, %d sends; want one of each per event (5 events)", lists, sends)
			}
			if !tc.wantCalls && (lists != 0 || sends != 0) {
				t.Fatalf("%d lists, %d sends; want none", lists, sends)
			}
			task, ok := res.(*a2a.Task)
			if !ok {
				t.Fatalf("SendMessage gave %T, want a task", res)
			}
			got, err := h.ListTaskPushConfigs(t.Context(), &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Configs) != 1 || got.Configs[0].URL != "https://receiver.test/hook" {
				t.Fatalf("ListTaskPushConfigs = %+v, want the one config", got.Configs)
			}
		})
	}
}
