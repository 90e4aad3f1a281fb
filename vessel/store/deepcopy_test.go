package store_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// TestDeepCopyPooled checks the vendored a2a-go patches (third_party/a2a-go/
// PATCHES.md): the SDK's task copies, made by hand or, for what the hand
// copy does not know, through pooled gob encoder and decoder pairs, equal
// the original, share no memory with it, stay right
// when made concurrently, and stay right after a copy that failed.
func TestDeepCopyPooled(t *testing.T) {
	ctx := context.Background()
	mem := taskstore.NewInMemory(nil)
	task := func(id string) *a2a.Task {
		return &a2a.Task{
			ID: a2a.TaskID(id), ContextID: "ctx",
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{ID: "s", Role: a2a.MessageRoleAgent,
				Parts: a2a.ContentParts{a2a.NewDataPart(map[string]any{"type": "tool.started", "args": []any{1.5, "x", map[string]any{"k": true}}})}}},
			History: []*a2a.Message{{ID: "u", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("question " + id)}}},
			Artifacts: []*a2a.Artifact{{ID: "a", Name: "answer", Parts: a2a.ContentParts{
				{Content: a2a.Raw([]byte{0, 1, 2}), MediaType: "application/octet-stream"}, a2a.NewTextPart("answer")}}},
			Metadata: map[string]any{"vessel.event": "turn.finished"},
		}
	}
	// A copy that fails (gob cannot encode a channel) must not spoil the
	// pairs that later copies use.
	bad := task("bad")
	bad.Metadata = map[string]any{"c": make(chan int)}
	if _, err := mem.Create(ctx, bad); err == nil {
		t.Fatal("a task holding a channel was copied")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 32 {
		wg.Go(func() {
			id := string(rune('a'+i%26)) + string(rune('0'+i/26))
			want := task(id)
			if _, err := mem.Create(ctx, want); err != nil {
				errs <- err.Error()
				return
			}
			for range 20 {
				got, err := mem.Get(ctx, want.ID)
				if err != nil {
					errs <- err.Error()
					return
				}
				if !reflect.DeepEqual(got.Task, want) {
					errs <- "copy differs from the original"
					return
				}
				// The copy shares nothing with the stored task.
				got.Task.Artifacts[0].Parts[0].Content.(a2a.Raw)[0] = 9
				got.Task.Status.Message.Parts[0].Content.(a2a.Data).Value.(map[string]any)["type"] = "changed"
				got.Task.Metadata["vessel.event"] = "changed"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
