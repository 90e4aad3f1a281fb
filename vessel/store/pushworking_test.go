package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// TestPushWorkingSQLite: a config saved with Working (before its task
// exists, as SendMessage does) is enqueued every WORKING status update,
// in order before the end; a config without it only the end; a task
// without such configs writes nothing for its WORKING updates. The flag
// is kept in the config's row across a reopen (Get and List return the
// A2A config alone), and a task taken up after the reopen learns it from
// the row at its first write with pushes.
func TestPushWorkingSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	b := open(t, path, Options{Agents: []string{"a"}})
	ctx := context.Background()
	setup := func(b Backend) {
		if _, err := b.(DB).SQLDB().ExecContext(ctx, `CREATE TABLE IF NOT EXISTS test_jobs (n INTEGER PRIMARY KEY AUTOINCREMENT,
			agent TEXT, task TEXT, config TEXT, state TEXT)`); err != nil {
			t.Fatal(err)
		}
		b.(PushQueuing).SetPushQueue(&tableQueue{})
	}
	setup(b)
	alice := asUser("app/alice")
	pcs := b.(PushBackend).PushConfigs("a")
	save := func(pcs PushConfigStore, task, id string, working bool) {
		t.Helper()
		if _, err := pcs.SaveWith(alice, a2a.TaskID(task), &a2a.PushConfig{ID: id, URL: "http://127.0.0.1:1/" + id, Token: "k"},
			SaveOptions{Working: working}); err != nil {
			t.Fatal(err)
		}
	}
	save(pcs, "t1", "w", true)
	save(pcs, "t1", "plain", false)
	save(pcs, "t2", "w", true) // t2 is created after the reopen
	jobs := func(b Backend, task string) []string {
		t.Helper()
		rows, err := b.(DB).SQLDB().QueryContext(ctx, `SELECT config, state FROM test_jobs WHERE task=? ORDER BY n`, task)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var c, st string
			if err := rows.Scan(&c, &st); err != nil {
				t.Fatal(err)
			}
			out = append(out, c+":"+strings.TrimPrefix(st, "TASK_STATE_"))
		}
		return out
	}
	s := b.Agent("a")
	update := func(s taskstore.Store, id string, v taskstore.TaskVersion, st a2a.TaskState, ev a2a.Event) taskstore.TaskVersion {
		t.Helper()
		if ev == nil {
			ev = &a2a.TaskStatusUpdateEvent{TaskID: a2a.TaskID(id), ContextID: "c1", Status: a2a.TaskStatus{State: st}}
		}
		nv, err := s.Update(alice, &taskstore.UpdateRequest{Task: newTask(id, st), Event: ev, PrevVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		return nv
	}
	for _, id := range []string{"t1", "bare"} {
		if _, err := s.Create(alice, newTask(id, a2a.TaskStateWorking)); err != nil {
			t.Fatal(err)
		}
	}
	v, vb := taskstore.TaskVersion(1), taskstore.TaskVersion(1)
	for range 3 {
		v = update(s, "t1", v, a2a.TaskStateWorking, nil)
		vb = update(s, "bare", vb, a2a.TaskStateWorking, nil)
	}
	// An artifact update is no status update: not pushed.
	art := &a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: &a2a.Artifact{ID: "x", Name: AnswerArtifactName}}
	v = update(s, "t1", v, a2a.TaskStateWorking, art)
	update(s, "t1", v, a2a.TaskStateCompleted, nil)
	if got, want := jobs(b, "t1"), []string{"w:WORKING", "w:WORKING", "w:WORKING", "w:COMPLETED", "plain:COMPLETED"}; !slices.Equal(got, want) {
		t.Fatalf("jobs of t1 %v, want %v", got, want)
	}
	var diskVersion int
	if err := b.(DB).SQLDB().QueryRowContext(ctx, `SELECT version FROM vessel_tasks WHERE agent_id='a' AND id='bare'`).Scan(&diskVersion); err != nil {
		t.Fatal(err)
	}
	if got := jobs(b, "bare"); len(got) != 0 || diskVersion != 1 {
		t.Fatalf("a task without configs: jobs %v, disk version %d after its WORKING updates; want none and 1", got, diskVersion)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = open(t, path, Options{Agents: []string{"a"}})
	defer b.Close()
	setup(b)
	pcs = b.(PushBackend).PushConfigs("a")
	list, err := pcs.List(alice, "t1")
	if err != nil || len(list) != 2 {
		t.Fatalf("list after reopen: %v %v", list, err)
	}
	for _, c := range list {
		raw, _ := json.Marshal(c)
		if strings.Contains(string(raw), WorkingMember) || c.URL != "http://127.0.0.1:1/"+c.ID || c.Token != "k" {
			t.Fatalf("config as listed: %s", raw)
		}
	}
	rows, err := b.(DB).SQLDB().QueryContext(ctx, `SELECT id, config FROM vessel_push_configs WHERE task_id='t1'`)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]bool{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			t.Fatal(err)
		}
		_, opt, err := DecodePushConfigWith(raw)
		if err != nil {
			t.Fatal(err)
		}
		flags[id] = opt.Working
	}
	rows.Close()
	if !flags["w"] || flags["plain"] {
		t.Fatalf("flags after reopen %v", flags)
	}
	// t2 was given its config before the reopen: the store learns of the
	// flag from the row at the pause (a write with pushes).
	s = b.Agent("a")
	if _, err := s.Create(alice, newTask("t2", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	v = update(s, "t2", 1, a2a.TaskStateWorking, nil)
	v = update(s, "t2", v, a2a.TaskStateInputRequired, nil)
	v = update(s, "t2", v, a2a.TaskStateWorking, nil)
	update(s, "t2", v, a2a.TaskStateCompleted, nil)
	if got, want := jobs(b, "t2"), []string{"w:INPUT_REQUIRED", "w:WORKING", "w:COMPLETED"}; !slices.Equal(got, want) {
		t.Fatalf("jobs of t2 %v, want %v", got, want)
	}
}

// TestWorkingTurnCap: at most MaxWorkingPushesPerTurn WORKING pushes a
// turn; another state starts a new turn; nothing without a config.
func TestWorkingTurnCap(t *testing.T) {
	task := newTask("t", a2a.TaskStateWorking)
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	var w WorkingTurn
	if w.Next(ev, task, "a") != nil {
		t.Fatal("a push without a config wanting it")
	}
	w.On()
	n := 0
	for range MaxWorkingPushesPerTurn + 5 {
		if w.Next(ev, task, "a") != nil {
			n++
		}
	}
	if n != MaxWorkingPushesPerTurn {
		t.Fatalf("%d pushes in a turn, want %d", n, MaxWorkingPushesPerTurn)
	}
	w.Next(&a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}},
		newTask("t", a2a.TaskStateInputRequired), "a")
	if w.Next(ev, task, "a") == nil {
		t.Fatal("no push after a new turn began")
	}
	w.Seen(PushSeen{Known: true, Working: false})
	if w.Next(ev, task, "a") != nil {
		t.Fatal("a push after the config wanting them went")
	}
}
