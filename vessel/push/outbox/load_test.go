package outbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

func ownerCtx(owner string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(owner, nil)
	return ctx
}

// rig is an outbox on a real SQLite task store, delivering signed to a
// loopback receiver that counts distinct delivery ids.
type rig struct {
	ob     *outbox.Outbox
	tasks  taskstore.Store
	pushes store.PushConfigStore
	url    string
	mu     sync.Mutex
	seen   map[string]int // delivery id -> arrivals
	order  map[string][]int
	total  atomic.Int64
}

func newRig(tb testing.TB, workers int) *rig {
	tb.Helper()
	return newRigSnooze(tb, workers, 20*time.Millisecond)
}

// newRigSnooze is newRig with an OrderSnooze (0: the default).
func newRigSnooze(tb testing.TB, workers int, snooze time.Duration) *rig {
	tb.Helper()
	r := &rig{seen: map[string]int{}, order: map[string][]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var sr a2a.StreamResponse
		if err := json.NewDecoder(req.Body).Decode(&sr); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		su := sr.Event.(*a2a.TaskStatusUpdateEvent)
		var seq int
		_, _ = fmt.Sscanf(su.Status.Message.Parts[0].Text(), "%d", &seq)
		r.mu.Lock()
		id := req.Header.Get(outbox.DeliveryIDHeader)
		if r.seen[id] == 0 {
			r.order[string(su.TaskID)] = append(r.order[string(su.TaskID)], seq)
		}
		r.seen[id]++
		r.mu.Unlock()
		r.total.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(srv.Close)
	r.url = srv.URL
	path := filepath.Join(tb.TempDir(), "tasks.sqlite")
	b, err := store.Open(context.Background(), "sqlite://"+path, store.Options{Agents: []string{"a"}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	r.tasks = b.Agent("a")
	r.pushes = b.(store.PushBackend).PushConfigs("a")
	raw, _ := cardsign.Generate()
	keys, err := cardsign.ParseKeys(raw)
	if err != nil {
		tb.Fatal(err)
	}
	pol, err := dest.NewPolicy([]string{srv.URL + "/"}, false)
	if err != nil {
		tb.Fatal(err)
	}
	ob, closeDB, err := outbox.OpenSQLite(context.Background(), path, outbox.Config{
		Configs: func(string) store.PushConfigStore { return r.pushes },
		Policy:  func(string) (dest.Policy, error) { return pol, nil },
		Deliver: outbox.NewDeliverer(nil, keys.SignPush).Deliver,
		Workers: workers, PollInterval: 50 * time.Millisecond, OrderSnooze: snooze,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := ob.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ob.Stop(ctx)
		_ = closeDB()
	})
	b.(store.PushQueuing).SetPushQueue(ob)
	r.ob = ob
	return r
}

// enqueue stores n status updates (numbered) of each of tasks tasks in
// the task store, as the SDK does while turns run: each is pushed, the
// store enqueuing its delivery with the status write (a pause twice in a
// row is pushed twice).
func (r *rig) enqueue(tb testing.TB, tasks, n int) {
	tb.Helper()
	ctx := ownerCtx("app/alice")
	var wg sync.WaitGroup
	for i := range tasks {
		id := a2a.TaskID(fmt.Sprintf("task-%d", i))
		task := &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		v, err := r.tasks.Create(ctx, task)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := r.pushes.Save(ctx, id, &a2a.PushConfig{URL: r.url + "/hook"}); err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				st := a2a.TaskStateInputRequired
				if j == n-1 {
					st = a2a.TaskStateCompleted
				}
				ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "c", Status: a2a.TaskStatus{State: st,
					Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(fmt.Sprint(j)))}}
				next := *task
				next.Status = ev.Status
				if v, err = r.tasks.Update(ctx, &taskstore.UpdateRequest{Task: &next, Event: ev, PrevVersion: v}); err != nil {
					tb.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func (r *rig) wait(tb testing.TB, want int) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		r.mu.Lock()
		n := len(r.seen)
		r.mu.Unlock()
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d deliveries arrived", n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *rig) checkOrder(tb testing.TB, tasks, n int) {
	tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range tasks {
		got := r.order[fmt.Sprintf("task-%d", i)]
		if len(got) != n {
			tb.Fatalf("task-%d: %d events, want %d", i, len(got), n)
		}
		for j, s := range got {
			if s != j {
				tb.Fatalf("task-%d: events out of order: %v", i, got)
			}
		}
	}
}

// Every event of every task arrives once per delivery id, in order.
func TestDeliveriesInOrder(t *testing.T) {
	r := newRig(t, 8)
	r.enqueue(t, 5, 6)
	r.wait(t, 30)
	r.checkOrder(t, 5, 6)
	// River records completions in batches, shortly after.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := r.ob.Pending(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after all arrived", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneConfigChainWoken: one config's deliveries (a task's many
// events, as the push-working extension makes) follow each other as each
// ends here, without waiting for River to record the end. With an
// OrderSnooze of an hour, a delivery that had to poll or snooze for its
// predecessor would not come back within the wait's minutes.
func TestOneConfigChainWoken(t *testing.T) {
	r := newRigSnooze(t, 16, time.Hour)
	r.enqueue(t, 1, 60)
	r.wait(t, 60)
	r.checkOrder(t, 1, 60)
}

// BenchmarkPushDeliveries is the load run (make load-push: 10,000
// deliveries): b.N events, two per task (a pause, then the end), enqueued
// and delivered signed to a loopback receiver through River on SQLite.
func BenchmarkPushDeliveries(b *testing.B) {
	const per = 2
	tasks := max(b.N/per, 1)
	r := newRig(b, outbox.DefaultWorkers)
	b.ResetTimer()
	start := time.Now()
	r.enqueue(b, tasks, per)
	enq := time.Since(start)
	r.wait(b, tasks*per)
	all := time.Since(start)
	b.StopTimer()
	r.checkOrder(b, tasks, per)
	b.ReportMetric(float64(tasks*per)/all.Seconds(), "deliveries/s")
	b.ReportMetric(float64(enq.Microseconds())/float64(tasks*per), "enqueue-µs/op")
	b.ReportMetric(float64(r.total.Load()-int64(tasks*per)), "duplicates")
}
