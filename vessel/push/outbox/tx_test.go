package outbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox/outboxtest"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// hookReceiver is a loopback webhook that records the status updates it
// takes.
type hookReceiver struct {
	url string
	mu  sync.Mutex
	got []arrival
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
		r.got = append(r.got, arrival{id: req.Header.Get(outbox.DeliveryIDHeader), token: req.Header.Get(outbox.TokenHeader), event: su})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *hookReceiver) arrivals() []arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.got...)
}

// openOutbox opens (not starts) an outbox on the SQLite task store at
// path delivering to rcv, and hands it to the store.
func openOutbox(t *testing.T, b store.Backend, path string, rcv *hookReceiver) *outbox.Outbox {
	t.Helper()
	pushes := b.(store.PushBackend).PushConfigs("a")
	pol, err := dest.NewPolicy([]string{rcv.url + "/"}, false)
	if err != nil {
		t.Fatal(err)
	}
	ob, closeDB, err := outbox.OpenSQLite(context.Background(), path, outbox.Config{
		Configs: func(string) store.PushConfigStore { return pushes },
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
		_ = closeDB()
	})
	b.(store.PushQueuing).SetPushQueue(ob)
	return ob
}

// diskView reads the task table and River's jobs from the file, apart
// from the store (which serves a running task from memory).
type diskView struct{ db *sql.DB }

func openDiskView(t *testing.T, path string) diskView {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return diskView{db}
}

func (d diskView) state(t *testing.T, task string) string {
	t.Helper()
	var st string
	if err := d.db.QueryRow(`SELECT state FROM vessel_tasks WHERE agent_id='a' AND id=?`, task).Scan(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func (d diskView) jobs(t *testing.T) int {
	t.Helper()
	var n int
	if err := d.db.QueryRow(`SELECT count(*) FROM river_job WHERE kind=?`, outbox.Kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// failingQueue enqueues through the outbox, then fails while on: the
// jobs were inserted in the store's transaction, which must then take
// them back with the status.
type failingQueue struct {
	ob *outbox.Outbox
	mu sync.Mutex
	on bool
}

var errInjected = errors.New("injected failure after the enqueue")

func (q *failingQueue) EnqueueTx(ctx context.Context, tx any, agent string, cfgs []*a2a.PushConfig, p store.Push) error {
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

func (q *failingQueue) set(on bool) {
	q.mu.Lock()
	q.on = on
	q.mu.Unlock()
}

// finish stores the task's end as the SDK does.
func finish(t *testing.T, ts taskstore.Store, id a2a.TaskID, v taskstore.TaskVersion, state a2a.TaskState) taskstore.TaskVersion {
	t.Helper()
	ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "c", Status: a2a.TaskStatus{State: state}}
	nv, err := ts.Update(ownerCtx("app/alice"), &taskstore.UpdateRequest{
		Task: &a2a.Task{ID: id, ContextID: "c", Status: ev.Status}, Event: ev, PrevVersion: v})
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

// TestPushAtomicWithStatus (issue 17): on SQLite, a status write and the
// enqueue of its pushes are one transaction. When the enqueue fails (a
// trigger refusing River's insert, or a failure after the job was
// inserted) neither the status nor a job is on disk; the store keeps the
// end (served from memory, Ping failing) and writes both together once
// the failure is gone, and the one delivery reaches a loopback receiver.
func TestPushAtomicWithStatus(t *testing.T) {
	for _, mode := range []string{"trigger", "after-insert"} {
		t.Run(mode, func(t *testing.T) {
			rcv := newHookReceiver(t)
			path := filepath.Join(t.TempDir(), "tasks.sqlite")
			ctx := context.Background()
			b, err := store.Open(ctx, "sqlite://"+path, store.Options{Agents: []string{"a"}})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			ob := openOutbox(t, b, path, rcv)
			disk := openDiskView(t, path)
			fq := &failingQueue{ob: ob}
			switch mode {
			case "trigger":
				if _, err := disk.db.Exec(`CREATE TRIGGER fail_push BEFORE INSERT ON river_job BEGIN SELECT RAISE(ABORT, 'injected'); END`); err != nil {
					t.Fatal(err)
				}
			case "after-insert":
				fq.set(true)
				b.(store.PushQueuing).SetPushQueue(fq)
			}

			ts := b.Agent("a")
			alice := ownerCtx("app/alice")
			v, err := ts.Create(alice, &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.(store.PushBackend).PushConfigs("a").Save(alice, "t1", &a2a.PushConfig{ID: "h1", URL: rcv.url + "/hook", Token: "tok"}); err != nil {
				t.Fatal(err)
			}
			finish(t, ts, "t1", v, a2a.TaskStateCompleted)
			if st, n := disk.state(t, "t1"), disk.jobs(t); st != string(a2a.TaskStateWorking) || n != 0 {
				t.Fatalf("after the failed write: state %s and %d jobs on disk, want WORKING and none", st, n)
			}
			got, err := ts.Get(alice, "t1")
			if err != nil || got.Task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("the store serves %+v, %v; want the end kept", got, err)
			}
			if err := b.(store.Pinger).Ping(ctx); err == nil {
				t.Fatal("Ping succeeds while the end is not stored")
			}

			switch mode {
			case "trigger":
				if _, err := disk.db.Exec(`DROP TRIGGER fail_push`); err != nil {
					t.Fatal(err)
				}
			case "after-insert":
				fq.set(false)
			}
			// The flush (every store.FlushInterval) writes both together.
			deadline := time.Now().Add(30 * time.Second)
			for {
				// Jobs first, then the state: the two are committed together, so a
				// job seen before the state was read means the state is there too.
				// (The other order races the flush between the two reads.)
				n := disk.jobs(t)
				if disk.state(t, "t1") == string(a2a.TaskStateCompleted) {
					break
				}
				if n != 0 {
					t.Fatalf("%d jobs on disk before the status", n)
				}
				if time.Now().After(deadline) {
					t.Fatal("the end was never written")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if n := disk.jobs(t); n != 1 {
				t.Fatalf("%d jobs with the stored end, want 1", n)
			}
			if err := ob.Start(ctx); err != nil {
				t.Fatal(err)
			}
			waitDelivered(t, ob, rcv, "t1", a2a.TaskStateCompleted)
		})
	}
}

// waitDelivered waits for the one delivery of a task's state and for
// nothing to be pending.
func waitDelivered(t *testing.T, ob *outbox.Outbox, rcv *hookReceiver, task a2a.TaskID, state a2a.TaskState) {
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

// crashEnv names the child's store file and receiver.
const crashEnv = "PUSHTX_CRASH_CHILD"

// TestPushSurvivesCrashAfterSave (issue 17): a vessel process stores a
// task's end and is killed (SIGKILL) the moment the store's Update
// returns, before anything else runs (where the SDK's push sender used to
// enqueue); its outbox never ran. Started again on the same SQLite file,
// the outbox delivers the end to a loopback receiver, once.
func TestPushSurvivesCrashAfterSave(t *testing.T) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashChild(t, dir)
		return
	}
	rcv := newHookReceiver(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "url"), []byte(rcv.url), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPushSurvivesCrashAfterSave$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed after the save: %v\n%s", err, out)
	}
	if len(rcv.arrivals()) != 0 {
		t.Fatal("the child delivered: its outbox must not have run")
	}

	path := filepath.Join(dir, "tasks.sqlite")
	b, err := store.Open(context.Background(), "sqlite://"+path, store.Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Agent("a").Get(ownerCtx("app/alice"), "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("stored task %+v, %v; want COMPLETED", got, err)
	}
	ob := openOutbox(t, b, path, rcv)
	if err := ob.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, ob, rcv, "t1", a2a.TaskStateCompleted)
}

// crashChild is the vessel that dies: a store with its outbox (not
// started), a task with a config, its end stored, then SIGKILL.
func crashChild(t *testing.T, dir string) {
	url, err := os.ReadFile(filepath.Join(dir, "url"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tasks.sqlite")
	b, err := store.Open(context.Background(), "sqlite://"+path, store.Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	rcv := &hookReceiver{url: string(url)}
	openOutbox(t, b, path, rcv)
	ts := b.Agent("a")
	alice := ownerCtx("app/alice")
	v, err := ts.Create(alice, &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.(store.PushBackend).PushConfigs("a").Save(alice, "t1", &a2a.PushConfig{ID: "h1", URL: rcv.url + "/hook", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	finish(t, ts, "t1", v, a2a.TaskStateCompleted)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
