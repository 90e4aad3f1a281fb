package a2aserver_test

// How a turn ends other than by finishing: cancelled mid model stream, mid
// tool call or right after its task frame; stopped by its deadline or step
// limit or a model error; and not cancelled when the client goes away.

import (
	"context"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // generous: a loaded CI machine stretched a 5 s turn past 10 s
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cancelMidTurn(t *testing.T, h *harness, text string, ready func([]a2a.Event) bool) []a2a.Event {
	t.Helper()
	cl := h.client("field-guide")
	ctx := as(h.keyApp1, "alice")
	type frame struct {
		ev  a2a.Event
		err error
	}
	ch := make(chan frame, 256)
	go func() {
		for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMsg(text)}) {
			ch <- frame{ev, err}
		}
		close(ch)
	}()
	var evs []a2a.Event
	cancelled := false
	timeout := time.After(20 * time.Second)
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				return evs
			}
			if f.err != nil {
				t.Fatal(f.err)
			}
			evs = append(evs, f.ev)
			if !cancelled && ready(evs) {
				cancelled = true
				task, err := cl.CancelTask(ctx, &a2a.CancelTaskRequest{ID: evs[0].(*a2a.Task).ID})
				if err != nil {
					t.Fatal(err)
				}
				if task.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("cancel result: %s", task.Status.State)
				}
			}
		case <-timeout:
			t.Fatal("turn did not end")
		}
	}
}

func lastEvent(t *testing.T, evs []a2a.Event) (a2a.TaskState, map[string]any) {
	t.Helper()
	su, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok {
		t.Fatalf("last frame %T", evs[len(evs)-1])
	}
	return su.Status.State, eventOf(su)
}

func TestCancelMidModelStream(t *testing.T) {
	h := newHarness(t)
	evs := cancelMidTurn(t, h, "#script:slowtext", func(evs []a2a.Event) bool {
		return eventOf(evs[len(evs)-1])["type"] == "text.delta"
	})
	state, data := lastEvent(t, evs)
	if state != a2a.TaskStateCanceled || data["type"] != "turn.finished" || data["status"] != "cancelled" {
		t.Fatalf("final: %s %v", state, data)
	}
	ended, _, _ := h.sandbox.stats()
	if len(ended) != 1 {
		t.Fatalf("EndTurn: %v", ended)
	}
}

func TestCancelMidToolCall(t *testing.T) {
	h := newHarness(t)
	evs := cancelMidTurn(t, h, "#script:sleeptool", func(evs []a2a.Event) bool {
		if eventOf(evs[len(evs)-1])["type"] != "tool.started" {
			return false
		}
		waitFor(t, "the tool to run", func() bool { _, _, running := h.sandbox.stats(); return running == 1 })
		return true
	})
	state, data := lastEvent(t, evs)
	if state != a2a.TaskStateCanceled || data["status"] != "cancelled" {
		t.Fatalf("final: %s %v", state, data)
	}
	waitFor(t, "the tool call to be cancelled", func() bool {
		_, cancelled, running := h.sandbox.stats()
		return cancelled == 1 && running == 0
	})
	ended, _, _ := h.sandbox.stats()
	if len(ended) != 1 {
		t.Fatalf("EndTurn: %v", ended)
	}
}

func TestDeadlineStepLimitModelErrors(t *testing.T) {
	h := newHarness(t, func(d *settings.Deployment) { d.Agents[0].Manifest.DeadlineSecs = 1 })
	run := func(text string) (a2a.TaskState, map[string]any, *a2a.Task) {
		res, err := h.client("field-guide").SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg(text)})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		var data map[string]any
		if task.Status.Message != nil {
			data, _ = task.Status.Message.Parts[0].Data().(map[string]any)
		}
		return task.Status.State, data, task
	}
	if state, data, _ := run("#script:slowtext"); state != a2a.TaskStateFailed || data["status"] != "deadline" {
		t.Fatalf("deadline: %s %v", state, data)
	}
	h.deploy.Agents[0].Manifest.DeadlineSecs = 0 // read at start only; the next runs use the "reader" agent
	agent := "reader"
	run = func(text string) (a2a.TaskState, map[string]any, *a2a.Task) {
		res, err := h.client(agent).SendMessage(as(h.keyApp2, "alice"), &a2a.SendMessageRequest{Message: textMsg(text)})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		var data map[string]any
		if task.Status.Message != nil {
			data, _ = task.Status.Message.Parts[0].Data().(map[string]any)
		}
		return task.Status.State, data, task
	}
	if state, data, _ := run("#script:loop"); state != a2a.TaskStateCompleted || data["status"] != "step_limit" || data["steps"] != float64(4) {
		t.Fatalf("step limit: %s %v", state, data)
	}
	if state, data, task := run("#script:flaky"); state != a2a.TaskStateCompleted || data["status"] != "ok" || task.Artifacts[0].Parts[0].Text() != "recovered" {
		t.Fatalf("retry: %s %v", state, data)
	}
	if state, data, _ := run("#script:broken"); state != a2a.TaskStateFailed || data["status"] != "model_error" {
		t.Fatalf("model error: %s %v", state, data)
	}
	if state, data, _ := run("#script:badreq"); state != a2a.TaskStateFailed || data["status"] != "model_error" {
		t.Fatalf("4xx is not retried: %s %v", state, data)
	}
}

func TestClientDisconnectDoesNotCancel(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(as(h.keyApp1, "alice"))
	var id a2a.TaskID
	for ev, err := range h.client("field-guide").SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMsg("#script:slowtext")}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			id = task.ID
			break
		}
	}
	cancel()
	waitFor(t, "the turn to finish", func() bool {
		task, err := h.client("field-guide").GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: id})
		return err == nil && task.Status.State == a2a.TaskStateCompleted
	})
}

func TestCancelRightAfterTaskFrame(t *testing.T) {
	h := newHarness(t)
	for i := range 20 {
		evs := cancelMidTurn(t, h, "#script:slowtext", func(evs []a2a.Event) bool { return len(evs) == 1 })
		state, data := lastEvent(t, evs)
		if state != a2a.TaskStateCanceled || data["status"] != "cancelled" {
			t.Fatalf("run %d: %s %v", i, state, data)
		}
	}
}
