package outbox_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox/outboxtest"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// arrival is one delivery a loopback receiver took.
type arrival struct {
	id, token string
	event     *a2a.TaskStatusUpdateEvent
}

// TestSelfFailedPushedAfterRestart: a task left working when the vessel
// stopped is failed at the next start (the SQLite restart rule), and its
// push config is told: the failed status reaches a loopback receiver
// through the outbox, once, with the config's token. A second restart
// before the outbox ran loses nothing and adds nothing; a task without
// configs is failed and marks nothing.
func TestSelfFailedPushedAfterRestart(t *testing.T) {
	var mu sync.Mutex
	var got []arrival
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var sr a2a.StreamResponse
		if err := json.NewDecoder(req.Body).Decode(&sr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		su, _ := sr.Event.(*a2a.TaskStatusUpdateEvent)
		mu.Lock()
		got = append(got, arrival{id: req.Header.Get(outbox.DeliveryIDHeader), token: req.Header.Get(outbox.TokenHeader), event: su})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	ctx := context.Background()
	open := func() store.Backend {
		t.Helper()
		b, err := store.Open(ctx, "sqlite://"+path, store.Options{Agents: []string{"a"}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := open()
	alice := ownerCtx("app/alice")
	for _, id := range []a2a.TaskID{"with-hook", "no-hook"} {
		if _, err := b.Agent("a").Create(alice, &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.(store.PushBackend).PushConfigs("a").Save(alice, "with-hook", &a2a.PushConfig{ID: "h1", URL: srv.URL + "/hook", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	b.Close() // the vessel stops with both turns running

	b = open() // the restart fails them
	b.Close()
	b = open() // and a second one, before any outbox ran, finds them failed already
	defer b.Close()
	sf := b.(store.SelfFailures)
	marks, err := sf.SelfFailed(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].Agent != "a" || marks[0].Task.ID != "with-hook" || marks[0].Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("self-failed marks %+v, want the task with a hook, failed", marks)
	}

	pushes := b.(store.PushBackend).PushConfigs("a")
	pol, err := dest.NewPolicy([]string{srv.URL + "/"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ob, closeDB, err := outbox.OpenSQLite(ctx, path, outbox.Config{
		Configs: func(string) store.PushConfigStore { return pushes },
		Policy:  func(string) (dest.Policy, error) { return pol, nil },
		Deliver: outbox.NewDeliverer(nil, nil).Deliver,
		Workers: 2, PollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	if err := ob.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = ob.Stop(sctx)
	}()
	n, err := ob.EnqueueSelfFailed(ctx, sf)
	if err != nil || n != 1 {
		t.Fatalf("enqueued %d: %v; want 1", n, err)
	}
	if n, err := ob.EnqueueSelfFailed(ctx, sf); err != nil || n != 0 {
		t.Fatalf("a second pass enqueued %d: %v; want 0 (the mark is gone)", n, err)
	}

	outboxtest.WaitArrivedAndDrained(ctx, t, ob, func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}, "the failed task's push never arrived")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	a := got[0]
	if a.event == nil || a.event.TaskID != "with-hook" || a.event.Status.State != a2a.TaskStateFailed || a.token != "tok" || a.id == "" {
		t.Fatalf("delivery %+v", a)
	}
	if msg := a.event.Status.Message; msg == nil || len(msg.Parts) == 0 || msg.Parts[0].Text() != store.RestartReason {
		t.Fatalf("status message %+v, want %q", msg, store.RestartReason)
	}
}
