package postgres

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox/outboxtest"
	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// marks lists the self-failed marks as "agent/task".
func marks(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.pool.Query(context.Background(), `SELECT agent_id || '/' || task_id FROM vessel_self_failed ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReapedTaskPushed (issue 17): a task of a replica that died, with a
// push config, is failed by another replica's lease reaper, which marks
// it in the same statement; two live replicas, each with an outbox, pass
// over the marks at once and exactly one FAILED delivery reaches a
// loopback receiver. A task without configs is failed and marked nothing.
func TestReapedTaskPushed(t *testing.T) {
	type arrival struct {
		id, token string
		event     *a2a.TaskStatusUpdateEvent
	}
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

	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	dead := openTest(t, dsn, schema, reapByHand)
	b := openTest(t, dsn, schema, reapByHand)
	c := openTest(t, dsn, schema, reapByHand)
	ctx := context.Background()
	alice := as("alice")
	for _, id := range []string{"with-hook", "no-hook"} {
		if _, err := dead.Agent("alpha").Create(alice, newTask(id, "c", a2a.TaskStateWorking)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dead.PushConfigs("alpha").Save(alice, "with-hook", &a2a.PushConfig{ID: "h1", URL: srv.URL + "/hook", Token: "tok"}); err != nil {
		t.Fatal(err)
	}

	dead.Abandon()
	expireLease(t, b, dead.ReplicaID())
	if n, err := b.ReapExpired(ctx); err != nil || n != 2 {
		t.Fatalf("ReapExpired = %d, %v; want 2", n, err)
	}
	if m := marks(t, b); len(m) != 1 || m[0] != "alpha/with-hook" {
		t.Fatalf("marks %v, want only alpha/with-hook", m)
	}
	// A second reaper finds nothing more to fail or mark.
	if n, err := c.ReapExpired(ctx); err != nil || n != 0 {
		t.Fatalf("second ReapExpired = %d, %v; want 0", n, err)
	}

	pol, err := dest.NewPolicy([]string{srv.URL + "/"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var obs []*outbox.Outbox
	for _, db := range []*DB{b, c} {
		ob, err := outbox.OpenPostgres(ctx, db.Pool(), outbox.Config{
			Configs: db.PushConfigs,
			Policy:  func(string) (dest.Policy, error) { return pol, nil },
			Deliver: outbox.NewDeliverer(nil, nil).Deliver,
			Workers: 2, PollInterval: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := ob.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_ = ob.Stop(sctx)
		}()
		obs = append(obs, ob)
	}
	// Both replicas' passes run together; one takes the mark.
	var wg sync.WaitGroup
	ns := make([]int, len(obs))
	errs := make([]error, len(obs))
	for i, ob := range obs {
		wg.Go(func() { ns[i], errs[i] = ob.EnqueueSelfFailed(ctx, []vstore.SelfFailures{b, c}[i]) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || ns[0]+ns[1] != 1 {
		t.Fatalf("passes enqueued %v (%v); want 1 in all", ns, errs)
	}
	if m := marks(t, b); len(m) != 0 {
		t.Fatalf("marks %v left after the pass", m)
	}

	outboxtest.WaitArrivedAndDrained(ctx, t, obs[0], func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}, "the reaped task's push never arrived")
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	a := got[0]
	if a.event == nil || a.event.TaskID != "with-hook" || a.event.Status.State != a2a.TaskStateFailed || a.token != "tok" || a.id == "" {
		t.Fatalf("delivery %+v", a)
	}
	if msg := a.event.Status.Message; msg == nil || len(msg.Parts) == 0 || msg.Parts[0].Text() != vstore.RestartReason {
		t.Fatalf("status message %+v, want %q", msg, vstore.RestartReason)
	}
}

// TestSelfFailedClaims: a mark claimed by one replica is not handed to
// another until the claim is stale (its replica died mid-pass); a mark
// whose task is gone is dropped, not returned.
func TestSelfFailedClaims(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	b := openTest(t, dsn, schema, nil)
	c := openTest(t, dsn, schema, nil)
	ctx := context.Background()
	alice := as("alice")
	for _, id := range []string{"t1", "t2"} {
		if _, err := b.Agent("alpha").Create(alice, newTask(id, "c", a2a.TaskStateFailed)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO vessel_self_failed (agent_id, task_id, created_at) VALUES
		('alpha', 't1', now() - interval '2 seconds'), ('alpha', 't2', now() - interval '1 second'), ('alpha', 'gone', now())`); err != nil {
		t.Fatal(err)
	}
	got, err := b.SelfFailed(ctx, 1)
	if err != nil || len(got) != 1 || got[0].Agent != "alpha" || got[0].Task.ID != "t1" {
		t.Fatalf("b.SelfFailed = %+v, %v; want t1, the oldest", got, err)
	}
	got, err = c.SelfFailed(ctx, 10)
	if err != nil || len(got) != 1 || got[0].Task.ID != "t2" {
		t.Fatalf("c.SelfFailed = %+v, %v; want t2 only (t1 is b's, gone has no task)", got, err)
	}
	if m := marks(t, b); len(m) != 2 || m[0] != "alpha/t1" || m[1] != "alpha/t2" {
		t.Fatalf("marks %v, want t1 and t2 (claimed, not done)", m)
	}
	if got, err := c.SelfFailed(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("again = %+v, %v; want nothing while the claims hold", got, err)
	}
	// b dies mid-pass: once its claim is stale, c takes t1.
	if _, err := b.pool.Exec(ctx, `UPDATE vessel_self_failed SET claimed_at = now() - interval '2 minutes' WHERE task_id = 't1'`); err != nil {
		t.Fatal(err)
	}
	got, err = c.SelfFailed(ctx, 10)
	if err != nil || len(got) != 1 || got[0].Task.ID != "t1" {
		t.Fatalf("after a stale claim = %+v, %v; want t1", got, err)
	}
	for _, id := range []a2a.TaskID{"t1", "t2"} {
		if err := c.SelfFailedDone(ctx, "alpha", id); err != nil {
			t.Fatal(err)
		}
	}
	if m := marks(t, b); len(m) != 0 {
		t.Fatalf("marks %v left after done", m)
	}
}
