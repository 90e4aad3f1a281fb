// AstralVessel patch test (see third_party/a2a-go/PATCHES.md).

package a2asrv_test

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
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

type storeSender struct{ countingSender }

func (*storeSender) StoreSends() {}

// TestStoreSenderSkipsPerEventPush: with a push.StoreSender the processor
// lists no configs and sends nothing per event; with a plain Sender it
// lists the task's configs for every event and sends to each.
func TestStoreSenderSkipsPerEventPush(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sender    push.Sender
		wantCalls bool
	}{
		{"plain sender", &countingSender{}, true},
		{"store sender", &storeSender{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &countingStore{InMemoryPushConfigStore: push.NewInMemoryStore()}
			h := a2asrv.NewHandler(workingAgent{}, a2asrv.WithPushNotifications(store, tc.sender))
			_, err := h.SendMessage(t.Context(), &a2a.SendMessageRequest{
				Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("go")),
				Config:  &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "https://receiver.test/hook"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var sends int64
			switch s := tc.sender.(type) {
			case *countingSender:
				sends = s.sends.Load()
			case *storeSender:
				sends = s.sends.Load()
			}
			lists := store.lists.Load()
			if tc.wantCalls && (lists < 5 || sends < 5) {
				t.Fatalf("plain sender: %d lists, %d sends; want one of each per event (5 events)", lists, sends)
			}
			if !tc.wantCalls && (lists != 0 || sends != 0) {
				t.Fatalf("store sender: %d lists, %d sends; want none", lists, sends)
			}
		})
	}
}
