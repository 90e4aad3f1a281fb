package a2aserver_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// TestDrain: readiness goes false at once and new calls get 503; a turn
// that ends within the grace period finishes normally; the others end with
// turn.finished status shutdown and are stored failed.
func TestDrain(t *testing.T) {
	h := newHarness(t)
	type result struct {
		id    a2a.TaskID
		state a2a.TaskState
		data  map[string]any
		err   error
	}
	texts := []string{"#script:slowtext"} // about 5 s: inside the grace period
	for range 6 {
		texts = append(texts, "#script:sleeptool") // a 60 s tool call: stopped
	}
	results := make([]result, len(texts))
	started := make(chan struct{}, len(texts))
	var wg sync.WaitGroup
	for i, text := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last a2a.Event
			for ev, err := range h.client("field-guide").SendStreamingMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg(text)}) {
				if err != nil {
					results[i].err = err
					return
				}
				if task, ok := ev.(*a2a.Task); ok {
					results[i].id = task.ID
					started <- struct{}{}
				}
				last = ev
			}
			if su, ok := last.(*a2a.TaskStatusUpdateEvent); ok {
				results[i].state, results[i].data = su.Status.State, eventOf(su)
			}
		}()
	}
	for range texts {
		<-started
	}
	waitFor(t, "the tools to run", func() bool { _, _, running := h.sandbox.stats(); return running == len(texts)-1 })

	drained := make(chan [2]int, 1)
	go func() {
		running, stopped := h.srv.Drain(context.Background(), 8*time.Second)
		drained <- [2]int{running, stopped}
	}()
	waitFor(t, "readiness to go false", func() bool { ready, why := h.srv.Ready("field-guide"); return !ready && why != "" })
	if status, _, body := h.get("/health", nil); status != http.StatusOK || !strings.Contains(string(body), `"field-guide":false`) {
		t.Fatalf("health while draining: %d %s", status, body)
	}
	status, hdr, body := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, appHdr(h.keyApp1, "alice"))
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(string(body), "shutting down") {
		t.Fatalf("a new call while draining: %d %s", status, body)
	}
	var counts [2]int
	select {
	case counts = <-drained:
	case <-time.After(30 * time.Second):
		t.Fatal("Drain did not return")
	}
	wg.Wait()
	if counts != [2]int{len(texts), len(texts) - 1} {
		t.Fatalf("running, stopped = %v", counts)
	}
	for i, r := range results {
		want, wantState := "shutdown", a2a.TaskStateFailed
		if i == 0 {
			want, wantState = "ok", a2a.TaskStateCompleted
		}
		if r.err != nil || r.state != wantState || r.data["type"] != "turn.finished" || r.data["status"] != want {
			t.Fatalf("turn %d (%s): %v %s %v", i, texts[i], r.err, r.state, r.data)
		}
		if want == "shutdown" && !strings.Contains(r.data["error"].(string), "shutdown grace period") {
			t.Fatalf("turn %d: error %v", i, r.data["error"])
		}
		task, err := h.client("field-guide").GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: r.id})
		if err == nil {
			t.Fatalf("GetTask answered while draining: %v", task.Status.State)
		}
		stored, err := h.backend.Agent("field-guide").Get(ownerCtx("app1/alice"), r.id)
		if err != nil || stored.Task.Status.State != wantState {
			t.Fatalf("stored task %d: %+v %v", i, stored, err)
		}
	}
	waitFor(t, "the tool calls to be stopped", func() bool { _, _, running := h.sandbox.stats(); return running == 0 })
}

// ownerCtx is a call context owned by name, for reading the task store.
func ownerCtx(name string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(name, nil)
	return ctx
}
