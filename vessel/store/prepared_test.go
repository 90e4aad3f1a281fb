package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// TestPreparedPushListing: the push config listing prepared once per
// backend (listConfigs) serves writes from many goroutines at once, in
// their transactions on the pool's several connections, and a store opened
// again on the same file prepares its own: every write with a push enqueues
// it to the task's configs, in the order they were saved, before and after
// the reopen.
func TestPreparedPushListing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	ctx := context.Background()
	alice := asUser("app/alice")
	round := func(b Backend, prefix string, tasks int) {
		t.Helper()
		q := &tableQueue{}
		b.(PushQueuing).SetPushQueue(q)
		s := b.Agent("a")
		for i := range tasks {
			id := fmt.Sprintf("%s%d", prefix, i)
			if _, err := s.Create(alice, newTask(id, a2a.TaskStateSubmitted)); err != nil {
				t.Fatal(err)
			}
			for _, h := range []string{"h1", "h2"} {
				if _, err := b.(PushBackend).PushConfigs("a").Save(alice, a2a.TaskID(id), &a2a.PushConfig{ID: h, URL: "http://127.0.0.1:1/" + h}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var wg sync.WaitGroup
		errs := make(chan error, tasks)
		for i := range tasks {
			wg.Go(func() {
				id := fmt.Sprintf("%s%d", prefix, i)
				v := taskstore.TaskVersion(1)
				for _, st := range []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateCompleted} {
					ev := &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: st}}
					nv, err := s.Update(alice, &taskstore.UpdateRequest{Task: newTask(id, st), Event: ev, PrevVersion: v})
					if err != nil {
						errs <- fmt.Errorf("%s %s: %w", id, st, err)
						return
					}
					v = nv
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		db := b.(DB).SQLDB()
		for i := range tasks {
			id := fmt.Sprintf("%s%d", prefix, i)
			rows, err := db.QueryContext(ctx, `SELECT config, state FROM test_jobs WHERE task=? ORDER BY n`, id)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var c, st string
				if err := rows.Scan(&c, &st); err != nil {
					t.Fatal(err)
				}
				got = append(got, c+" "+st)
			}
			rows.Close()
			want := fmt.Sprint([]string{"h1 " + string(a2a.TaskStateInputRequired), "h2 " + string(a2a.TaskStateInputRequired),
				"h1 " + string(a2a.TaskStateCompleted), "h2 " + string(a2a.TaskStateCompleted)})
			if fmt.Sprint(got) != want {
				t.Fatalf("%s: jobs %v, want %v", id, got, want)
			}
		}
	}

	b := open(t, path, Options{Agents: []string{"a"}})
	if _, err := b.(DB).SQLDB().ExecContext(ctx, `CREATE TABLE test_jobs (n INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT, task TEXT, config TEXT, state TEXT)`); err != nil {
		t.Fatal(err)
	}
	round(b, "first", 12)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = open(t, path, Options{Agents: []string{"a"}})
	defer b.Close()
	round(b, "second", 12)
}

// TestEachAgentReadsOnlyItsOwnTasks: the agents of one database run the
// same prepared statements, the agent a parameter; each agent's store
// still reads and writes only its own tasks through them.
func TestEachAgentReadsOnlyItsOwnTasks(t *testing.T) {
	b, err := Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "tasks.sqlite"), Options{Agents: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	sa, sb := b.Agent("a").(*sqliteStore), b.Agent("b").(*sqliteStore)
	alice := asUser("app/alice")
	for _, s := range []*sqliteStore{sa, sb} {
		if _, err := s.Create(alice, newTask("t-"+s.agent, a2a.TaskStateSubmitted)); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*sqliteStore{sa, sb} {
		for _, id := range []string{"t-a", "t-b"} {
			_, err := s.Get(alice, a2a.TaskID(id))
			if mine := id == "t-"+s.agent; (err == nil) != mine {
				t.Errorf("agent %s reads task %s: %v", s.agent, id, err)
			}
		}
	}
}
