package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox/outboxtest"
	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// hookArrival is one delivery a loopback receiver took.
type hookArrival struct {
	id, token string
	event     *a2a.TaskStatusUpdateEvent
}

// hookReceiver is a loopback webhook recording what it takes.
type hookReceiver struct {
	url string
	mu  sync.Mutex
	got []hookArrival
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var sr a2a.StreamResponse
		if err := json.NewDecoder(req.Body).Decode(&sr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		su, _ := sr.Event.(*a2a.TaskStatusUpdateEvent)
		r.mu.Lock()
		r.got = append(r.got, hookArrival{id: req.Header.Get(outbox.DeliveryIDHeader), token: req.Header.Get(outbox.TokenHeader), event: su})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *hookReceiver) arrivals() []hookArrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookArrival(nil), r.got...)
}

// pushOutbox opens (not starts) an outbox on db delivering to url's host,
// and hands it to the store.
func pushOutbox(t *testing.T, db *DB, url string) *outbox.Outbox {
	t.Helper()
	pol, err := dest.NewPolicy([]string{url + "/"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := outbox.OpenPostgres(context.Background(), db.Pool(), outbox.Config{
		Configs: db.PushConfigs,
		Policy:  func(string) (dest.Policy, error) { return pol, nil },
		Deliver: outbox.NewDeliverer(nil, nil).Deliver,
		Workers: 2, PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ob.Stop(ctx)
	})
	db.SetPushQueue(ob)
	return ob
}

// stored is a task's stored state and how many deliveries River holds.
func stored(t *testing.T, db *DB, task string) (string, int) {
	t.Helper()
	ctx := context.Background()
	var st string
	if err := db.pool.QueryRow(ctx, `SELECT state FROM vessel_tasks WHERE agent_id = 'alpha' AND id = $1`, task).Scan(&st); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, outbox.Kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return st, n
}

// failingQueue enqueues through the outbox, then fails while on: the
// jobs were inserted in the store's transaction, which must take them
// back with the status.
type failingQueue struct {
	ob *outbox.Outbox
	mu sync.Mutex
	on bool
}

var errInjected = errors.New("injected failure after the enqueue")

func (q *failingQueue) EnqueueTx(ctx context.Context, tx any, agent string, cfgs []*a2a.PushConfig, p vstore.Push) error {
	if err := q.ob.EnqueueTx(ctx, tx, agent, cfgs, p); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.on {
		return errInjected
	}
	return nil
}

// endTask stores a task's end as the SDK does.
func endTask(ctx context.Context, s taskstore.Store, id string, v taskstore.TaskVersion, state a2a.TaskState) (taskstore.TaskVersion, error) {
	ev := &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state}}
	return s.Update(ctx, &taskstore.UpdateRequest{Task: &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: ev.Status},
		Event: ev, PrevVersion: v})
}

// waitPushed waits for the one delivery of a task's state and for nothing
// to be pending.
func waitPushed(t *testing.T, ob *outbox.Outbox, rcv *hookReceiver, task a2a.TaskID, state a2a.TaskState) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	outboxtest.WaitArrived(t, func() int { return len(rcv.arrivals()) }, deadline, "the delivery never arrived")
	outboxtest.WaitNothingPending(context.Background(), t, ob, deadline)
	got := rcv.arrivals()
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1: %+v", len(got), got)
	}
	a := got[0]
	if a.event == nil || a.event.TaskID != task || a.event.Status.State != state || a.token != "tok" || a.id == "" {
		t.Fatalf("delivery %+v", a)
	}
}

// TestPushAtomicWithStatusPostgres (issue 17): the write of a task's end
// and the enqueue of its push are one transaction. When the enqueue fails
// (a trigger refusing River's insert, or a failure after the job was
// inserted) Update fails and neither the status nor a job is stored; the
// same update once the failure is gone stores both, and the one delivery
// reaches a loopback receiver.
func TestPushAtomicWithStatusPostgres(t *testing.T) {
	dsn := testDSN(t)
	for _, mode := range []string{"trigger", "after-insert"} {
		t.Run(mode, func(t *testing.T) {
			rcv := newHookReceiver(t)
			db := openTest(t, dsn, testSchema(t, dsn), nil)
			ob := pushOutbox(t, db, rcv.url)
			ctx := context.Background()
			fq := &failingQueue{ob: ob, on: true}
			switch mode {
			case "trigger":
				if _, err := db.pool.Exec(ctx, `CREATE FUNCTION fail_push() RETURNS trigger LANGUAGE plpgsql AS
					$$ BEGIN RAISE EXCEPTION 'injected'; END $$`); err != nil {
					t.Fatal(err)
				}
				if _, err := db.pool.Exec(ctx, `CREATE TRIGGER fail_push BEFORE INSERT ON river_job
					FOR EACH ROW EXECUTE FUNCTION fail_push()`); err != nil {
					t.Fatal(err)
				}
			case "after-insert":
				db.SetPushQueue(fq)
			}
			s := db.Agent("alpha")
			alice := as("alice")
			v, err := s.Create(alice, newTask("t1", "c", a2a.TaskStateWorking))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.PushConfigs("alpha").Save(alice, "t1", &a2a.PushConfig{ID: "h1", URL: rcv.url + "/hook", Token: "tok"}); err != nil {
				t.Fatal(err)
			}
			if _, err := endTask(alice, s, "t1", v, a2a.TaskStateCompleted); err == nil {
				t.Fatal("the end was stored though its push could not be")
			}
			if st, n := stored(t, db, "t1"); st != string(a2a.TaskStateWorking) || n != 0 {
				t.Fatalf("after the failed write: state %s and %d jobs, want WORKING and none", st, n)
			}

			switch mode {
			case "trigger":
				if _, err := db.pool.Exec(ctx, `DROP TRIGGER fail_push ON river_job`); err != nil {
					t.Fatal(err)
				}
			case "after-insert":
				fq.mu.Lock()
				fq.on = false
				fq.mu.Unlock()
			}
			// The SDK stores again from the version it had (the store
			// forgot the task it runs: the table is the truth now).
			if _, err := endTask(alice, s, "t1", v, a2a.TaskStateCompleted); err != nil {
				t.Fatal(err)
			}
			if st, n := stored(t, db, "t1"); st != string(a2a.TaskStateCompleted) || n != 1 {
				t.Fatalf("after the write: state %s and %d jobs, want COMPLETED and 1", st, n)
			}
			if err := ob.Start(ctx); err != nil {
				t.Fatal(err)
			}
			waitPushed(t, ob, rcv, "t1", a2a.TaskStateCompleted)
		})
	}
}

// pgCrashEnv carries the child's schema and receiver URL.
const pgCrashEnv = "PUSHTX_PG_CRASH_CHILD"

// TestPushSurvivesCrashAfterSavePostgres (issue 17): a replica stores a
// task's end and is killed (SIGKILL) the moment the store's Update
// returns, its outbox never having run. A replica started on the same
// database delivers the end to a loopback receiver, once.
func TestPushSurvivesCrashAfterSavePostgres(t *testing.T) {
	dsn := testDSN(t)
	if v := os.Getenv(pgCrashEnv); v != "" {
		var c struct{ Schema, URL string }
		if err := json.Unmarshal([]byte(v), &c); err != nil {
			t.Fatal(err)
		}
		pgCrashChild(t, dsn, c.Schema, c.URL)
		return
	}
	rcv := newHookReceiver(t)
	schema := testSchema(t, dsn)
	arg, err := json.Marshal(struct{ Schema, URL string }{schema, rcv.url})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPushSurvivesCrashAfterSavePostgres$", "-test.count=1")
	cmd.Env = append(os.Environ(), pgCrashEnv+"="+string(arg))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed after the save: %v\n%s", err, out)
	}
	if len(rcv.arrivals()) != 0 {
		t.Fatal("the child delivered: its outbox must not have run")
	}

	db := openTest(t, dsn, schema, nil)
	got, err := db.Agent("alpha").Get(as("alice"), "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stored task %+v, %v; want COMPLETED", got, err)
	}
	ob := pushOutbox(t, db, rcv.url)
	if err := ob.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitPushed(t, ob, rcv, "t1", a2a.TaskStateCompleted)
}

// pgCrashChild is the replica that dies: a store with its outbox (not
// started), a task with a config, its end stored, then SIGKILL.
func pgCrashChild(t *testing.T, dsn, schema, url string) {
	db := openTest(t, dsn, schema, nil)
	pushOutbox(t, db, url)
	s := db.Agent("alpha")
	alice := as("alice")
	v, err := s.Create(alice, newTask("t1", "c", a2a.TaskStateWorking))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PushConfigs("alpha").Save(alice, "t1", &a2a.PushConfig{ID: "h1", URL: url + "/hook", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := endTask(alice, s, "t1", v, a2a.TaskStateCompleted); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
