package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

func newTask(id, ctxID string, state a2a.TaskState) *a2a.Task {
	now := time.Now().UTC()
	return &a2a.Task{
		ID:        a2a.TaskID(id),
		ContextID: ctxID,
		Status:    a2a.TaskStatus{State: state, Timestamp: &now},
	}
}

func TestMigrationsConcurrentReplicas(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	var wg sync.WaitGroup
	dbs := make([]*DB, 4)
	errs := make([]error, 4)
	for i := range dbs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			dbs[i], errs[i] = Open(context.Background(), dsn, Options{Schema: schema})
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: Open: %v", i, err)
		}
		t.Cleanup(func() { _ = dbs[i].Close() })
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dbs[0].pool.QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) {
		t.Fatalf("schema_migrations has %d rows, want %d", n, len(ms))
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	db := openTest(t, dsn, schema, nil)
	if _, err := db.pool.Exec(context.Background(), `INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')`); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), dsn, Options{Schema: schema})
	if err == nil {
		t.Fatal("Open accepted a database migrated by a newer vessel")
	}
}

func TestCreateGetUpdate(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	s := db.Agent("alpha")
	alice := as("alice")

	task := newTask("t1", "c1", a2a.TaskStateSubmitted)
	v1, err := s.Create(alice, task)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := s.Create(alice, task); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		t.Fatalf("second Create: got %v, want ErrTaskAlreadyExists", err)
	}

	got, err := s.Get(alice, "t1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Version != v1 || got.Task.ContextID != "c1" || got.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("Get = %+v (version %d), want the created task at version %d", got.Task, got.Version, v1)
	}

	// Another owner, and another agent, see nothing.
	if _, err := s.Get(as("bob"), "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob's Get: got %v, want ErrTaskNotFound", err)
	}
	if _, err := db.Agent("beta").Get(alice, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("other agent's Get: got %v, want ErrTaskNotFound", err)
	}

	working := newTask("t1", "c1", a2a.TaskStateWorking)
	v2, err := s.Update(alice, &taskstore.UpdateRequest{Task: working, PrevVersion: v1})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if !v2.After(v1) {
		t.Fatalf("version %d is not after %d", v2, v1)
	}
	// A stale version is a concurrent modification.
	_, err = s.Update(alice, &taskstore.UpdateRequest{Task: working, PrevVersion: v1})
	if !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("stale Update: got %v, want ErrConcurrentModification", err)
	}
	// Bob cannot write alice's task, nor learn that it exists.
	_, err = s.Update(as("bob"), &taskstore.UpdateRequest{Task: working, PrevVersion: v2})
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob's Update: got %v, want ErrTaskNotFound", err)
	}
	_, err = s.Update(alice, &taskstore.UpdateRequest{Task: newTask("nope", "c1", a2a.TaskStateWorking), PrevVersion: 1})
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("Update of a missing task: got %v, want ErrTaskNotFound", err)
	}
	// PrevVersion missing means "don't check".
	v3, err := s.Update(alice, &taskstore.UpdateRequest{Task: working})
	if err != nil || !v3.After(v2) {
		t.Fatalf("unversioned Update = %d, %v", v3, err)
	}
}

func TestConcurrentUpdatesOneWins(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	s := db.Agent("alpha")
	alice := as("alice")
	v, err := s.Create(alice, newTask("t1", "c1", a2a.TaskStateWorking))
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, conflicts := 0, 0
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(alice, &taskstore.UpdateRequest{Task: newTask("t1", "c1", a2a.TaskStateWorking), PrevVersion: v})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, taskstore.ErrConcurrentModification):
				conflicts++
			default:
				t.Errorf("Update: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || conflicts != n-1 {
		t.Fatalf("wins=%d conflicts=%d, want 1 and %d", wins, conflicts, n-1)
	}
}

func TestStoredTaskIsStripped(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	s := db.Agent("alpha")
	alice := as("alice")

	task := newTask("t1", "c1", a2a.TaskStateCompleted)
	task.History = []*a2a.Message{
		a2a.NewMessage(a2a.MessageRoleUser,
			a2a.NewTextPart("which birds hunt fish?"),
			&a2a.Part{Content: a2a.Raw(`{"version":1,"messages":[]}`), MediaType: "application/vnd.astralvessel.transcript+json"}),
		a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewDataPart(map[string]any{"type": "text.delta", "text": "x"})),
	}
	task.Artifacts = []*a2a.Artifact{
		{ID: "tr", Name: "transcript", Parts: a2a.ContentParts{{Content: a2a.Raw("{}"), MediaType: "application/vnd.astralvessel.transcript+json"}}},
		{ID: "f", Name: "chart.png", Parts: a2a.ContentParts{{Content: a2a.Raw("png"), MediaType: "image/png", Filename: "chart.png"}}},
		{ID: "ans", Name: "answer", Parts: a2a.ContentParts{{Content: a2a.Text("Kingfishers."), MediaType: "text/markdown"}}},
	}
	if _, err := s.Create(alice, task); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(alice, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Task.History) != 1 || len(got.Task.History[0].Parts) != 1 || got.Task.History[0].Parts[0].Text() != "which birds hunt fish?" {
		t.Fatalf("history = %+v, want only the user's text", got.Task.History)
	}
	if len(got.Task.Artifacts) != 1 || got.Task.Artifacts[0].ID != "ans" {
		t.Fatalf("artifacts = %+v, want only the answer", got.Task.Artifacts)
	}
}

func TestList(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	s := db.Agent("alpha")
	alice := as("alice")
	for i := range 7 {
		ctxID := "c1"
		if i%2 == 1 {
			ctxID = "c2"
		}
		if _, err := s.Create(alice, newTask(fmt.Sprintf("t%d", i), ctxID, a2a.TaskStateCompleted)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(as("bob"), newTask("b1", "c1", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Agent("beta").Create(alice, newTask("x1", "c1", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}

	seen := map[a2a.TaskID]bool{}
	req := &a2a.ListTasksRequest{PageSize: 3}
	pages := 0
	for {
		resp, err := s.List(alice, req)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		pages++
		if resp.TotalSize != 7 {
			t.Fatalf("TotalSize = %d, want 7", resp.TotalSize)
		}
		for _, task := range resp.Tasks {
			if seen[task.ID] {
				t.Fatalf("task %s listed twice", task.ID)
			}
			seen[task.ID] = true
		}
		if resp.NextPageToken == "" {
			break
		}
		req.PageToken = resp.NextPageToken
	}
	if len(seen) != 7 || pages != 3 {
		t.Fatalf("saw %d tasks in %d pages, want 7 in 3", len(seen), pages)
	}

	resp, err := s.List(alice, &a2a.ListTasksRequest{ContextID: "c2"})
	if err != nil || resp.TotalSize != 3 {
		t.Fatalf("List by context = %+v, %v; want 3 tasks", resp, err)
	}
	resp, err = s.List(alice, &a2a.ListTasksRequest{Status: a2a.TaskStateWorking})
	if err != nil || resp.TotalSize != 0 {
		t.Fatalf("List by state = %+v, %v; want none", resp, err)
	}
	if _, err := s.List(context.Background(), &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("anonymous List: got %v, want ErrUnauthenticated", err)
	}
	if _, err := s.List(alice, &a2a.ListTasksRequest{PageSize: 101}); !errors.Is(err, a2a.ErrInvalidRequest) {
		t.Fatalf("List page size 101: got %v, want ErrInvalidRequest", err)
	}
	if _, err := s.List(alice, &a2a.ListTasksRequest{PageToken: "%%%"}); err == nil {
		t.Fatal("List accepted a garbage page token")
	}
}

func TestTTLDeletesOldTasks(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), func(o *Options) { o.TTL = time.Hour })
	s := db.Agent("alpha")
	alice := as("alice")
	for _, id := range []string{"old", "new"} {
		if _, err := s.Create(alice, newTask(id, "c", a2a.TaskStateCompleted)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.pool.Exec(context.Background(),
		`UPDATE vessel_tasks SET updated_at = now() - interval '2 hours' WHERE id = 'old'`); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteExpired(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v; want 1", n, err)
	}
	if _, err := s.Get(alice, "old"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("old task: got %v, want ErrTaskNotFound", err)
	}
	if _, err := s.Get(alice, "new"); err != nil {
		t.Fatalf("new task: %v", err)
	}
}

func TestExpiredLeaseFailsOnlyThatReplicasTasks(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := openTest(t, dsn, schema, reapByHand)
	b := openTest(t, dsn, schema, reapByHand)
	alice := as("alice")
	if _, err := a.Agent("alpha").Create(alice, newTask("on-a", "c", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Agent("alpha").Create(alice, newTask("done-on-a", "c", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Agent("alpha").Create(alice, newTask("on-b", "c", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}

	// Both leases live: nothing is failed, by either replica.
	for _, db := range []*DB{a, b} {
		if n, err := db.ReapExpired(context.Background()); err != nil || n != 0 {
			t.Fatalf("ReapExpired with live leases = %d, %v", n, err)
		}
	}

	a.Abandon() // A dies without a word
	expireLease(t, b, a.ReplicaID())
	n, err := b.ReapExpired(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("ReapExpired = %d, %v; want 1", n, err)
	}
	got, err := b.Agent("alpha").Get(alice, "on-a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Task.Status.State != a2a.TaskStateFailed || got.Task.Status.Message == nil {
		t.Fatalf("on-a status = %+v, want failed with a reason", got.Task.Status)
	}
	for id, want := range map[a2a.TaskID]a2a.TaskState{"on-b": a2a.TaskStateWorking, "done-on-a": a2a.TaskStateCompleted} {
		got, err := b.Agent("alpha").Get(alice, id)
		if err != nil || got.Task.Status.State != want {
			t.Fatalf("%s = %v, %v; want %s", id, got, err, want)
		}
	}
}

func TestCleanCloseReleasesLease(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := openTest(t, dsn, schema, nil)
	if _, err := a.Agent("alpha").Create(as("alice"), newTask("t", "c", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// A replica starting later fails what the stopped one left running.
	b := openTest(t, dsn, schema, nil)
	got, err := b.Agent("alpha").Get(as("alice"), "t")
	if err != nil || got.Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("task after restart = %v, %v; want failed", got, err)
	}
}

func TestRunningTaskSeesChangesFromOtherReplicas(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := openTest(t, dsn, schema, nil)
	b := openTest(t, dsn, schema, nil)
	alice := as("alice")
	sa, sb := a.Agent("alpha"), b.Agent("alpha")

	v, err := sa.Create(alice, newTask("t1", "c1", a2a.TaskStateSubmitted))
	if err != nil {
		t.Fatal(err)
	}
	// A streams: a state change, then many same-state updates.
	if v, err = sa.Update(alice, &taskstore.UpdateRequest{Task: newTask("t1", "c1", a2a.TaskStateWorking), PrevVersion: v}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if v, err = sa.Update(alice, &taskstore.UpdateRequest{Task: newTask("t1", "c1", a2a.TaskStateWorking), PrevVersion: v}); err != nil {
			t.Fatal(err)
		}
	}
	// B sees the task working, and cancels it in the table (as when A did
	// not answer a forwarded cancel in time).
	onB, err := sb.Get(alice, "t1")
	if err != nil || onB.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("Get on B = %v, %v; want working", onB, err)
	}
	if _, err := sb.Update(alice, &taskstore.UpdateRequest{Task: newTask("t1", "c1", a2a.TaskStateCanceled), PrevVersion: onB.Version}); err != nil {
		t.Fatalf("cancel on B: %v", err)
	}
	// A's next write of a new state conflicts, and A then reads the truth.
	_, err = sa.Update(alice, &taskstore.UpdateRequest{Task: newTask("t1", "c1", a2a.TaskStateCompleted), PrevVersion: v})
	if !errors.Is(err, taskstore.ErrConcurrentModification) {
		t.Fatalf("A's final write: got %v, want ErrConcurrentModification", err)
	}
	got, err := sa.Get(alice, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("Get on A after the conflict = %v, %v; want canceled", got, err)
	}
}

func TestParseURLSettings(t *testing.T) {
	dsn, o, err := parseURL("postgres://u:p@127.0.0.1:5432/db?sslmode=disable&vessel_schema=s1&vessel_replica_id=r1&vessel_lease_ttl=20s")
	if err != nil {
		t.Fatal(err)
	}
	if dsn != "postgres://u:p@127.0.0.1:5432/db?sslmode=disable" || o.Schema != "s1" || o.ReplicaID != "r1" || o.LeaseTTL != 20*time.Second {
		t.Fatalf("parseURL = %q, %+v", dsn, o)
	}
	for _, bad := range []string{"postgres://h/db?vessel_nope=1", "postgres://h/db?vessel_lease_ttl=-1s", "postgres://%zz"} {
		if _, _, err := parseURL(bad); err == nil {
			t.Errorf("parseURL(%q) accepted", bad)
		}
	}
}

func TestRestartWithSameIDFailsItsOldTasks(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := openTest(t, dsn, schema, func(o *Options) { o.ReplicaID = "fixed" })
	if _, err := a.Agent("alpha").Create(as("alice"), newTask("t", "c", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	a.Abandon() // crash: the lease row stays and is still fresh
	again := openTest(t, dsn, schema, func(o *Options) { o.ReplicaID = "fixed" })
	got, err := again.Agent("alpha").Get(as("alice"), "t")
	if err != nil || got.Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("task after a restart under the same id = %v, %v; want failed", got, err)
	}
}
