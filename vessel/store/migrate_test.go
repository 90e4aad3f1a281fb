package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/store/migrate"
)

// preVersioningSchema is the schema the SQLite store made before its
// migrations were versioned (no schema_migrations), as main created it.
var preVersioningSchema = []string{
	`CREATE TABLE IF NOT EXISTS vessel_push_configs (
	agent_id TEXT NOT NULL, task_id TEXT NOT NULL, id TEXT NOT NULL, owner TEXT NOT NULL,
	config BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (agent_id, task_id, id))`,
	`CREATE TABLE IF NOT EXISTS vessel_self_failed (
	agent_id TEXT NOT NULL, task_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (agent_id, task_id))`,
	`CREATE TABLE IF NOT EXISTS "tasks_a" (
			id TEXT PRIMARY KEY, owner TEXT NOT NULL, context_id TEXT NOT NULL, state TEXT NOT NULL,
			version INTEGER NOT NULL, updated_at INTEGER NOT NULL, task BLOB NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS "tasks_a_owner" ON "tasks_a" (owner, updated_at)`,
	`CREATE INDEX IF NOT EXISTS "tasks_a_updated" ON "tasks_a" (updated_at)`,
	`CREATE TABLE IF NOT EXISTS vessel_write_probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)`,
}

// A database made before migrations were versioned upgrades in place: its
// tasks move from each agent's table to vessel_tasks, push configs are
// kept, and every migration is recorded.
func TestSQLiteUpgradesUnversionedDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range preVersioningSchema {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO "tasks_a" (id, owner, context_id, state, version, updated_at, task)
		VALUES ('t1', 'app/alice', 'c1', 'TASK_STATE_COMPLETED', 3, 1, '{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(ctx, `INSERT INTO vessel_push_configs (agent_id, task_id, id, owner, config, created_at)
		VALUES ('a', 't1', 'p1', 'app/alice', '{"id":"p1","taskId":"t1","url":"https://example.invalid/hook"}', 1)`); err != nil {
		t.Fatal(err)
	}
	// An agent of a quoted name, and a task left running (failed at start).
	for _, q := range []string{
		`CREATE TABLE "tasks_b""x" (id TEXT PRIMARY KEY, owner TEXT NOT NULL, context_id TEXT NOT NULL, state TEXT NOT NULL,
			version INTEGER NOT NULL, updated_at INTEGER NOT NULL, task BLOB NOT NULL)`,
		`INSERT INTO "tasks_b""x" VALUES ('t2', 'app/alice', 'c2', 'TASK_STATE_WORKING', 2, 1, '{"id":"t2","contextId":"c2","status":{"state":"TASK_STATE_WORKING"}}')`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	b := open(t, path, Options{Agents: []string{"a", `b"x`}})
	defer b.Close()
	alice := asUser("app/alice")
	got, err := b.Agent("a").Get(alice, "t1")
	if err != nil || got.Version != 3 || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task after upgrade: %+v, %v", got, err)
	}
	got, err = b.Agent(`b"x`).Get(alice, "t2")
	if err != nil || got.Version != 3 || got.Task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("running task after upgrade: %+v, %v", got, err)
	}
	var left int
	if err := b.(DB).SQLDB().QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name LIKE 'tasks%'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("old agent tables and indexes left: %d, %v", left, err)
	}
	cfgs, err := b.(PushBackend).PushConfigs("a").List(alice, "t1")
	if err != nil || len(cfgs) != 1 || cfgs[0].ID != "p1" {
		t.Fatalf("push configs after upgrade: %+v, %v", cfgs, err)
	}
	ms, err := SQLiteMigrations()
	if err != nil {
		t.Fatal(err)
	}
	var n, top int
	if err := b.(DB).SQLDB().QueryRowContext(ctx, `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &top); err != nil {
		t.Fatal(err)
	}
	if n != len(ms) || top != ms[len(ms)-1].Version {
		t.Fatalf("schema_migrations: %d rows up to %d, want %d up to %d", n, top, len(ms), ms[len(ms)-1].Version)
	}
}

// Opening again applies nothing twice; a database migrated by a newer
// vessel is refused.
func TestSQLiteMigrationsVersioned(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tasks.sqlite")
	b := open(t, path, Options{})
	b.Close()
	b = open(t, path, Options{})
	if _, err := b.(DB).SQLDB().ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	b.Close()
	_, err := Open(ctx, "sqlite://"+path, Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than this vessel") {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

// A file numbered like the step in Go (version 5) is refused when the
// migrations are listed, instead of one of the two silently not running.
func TestSQLiteMigrationsRefuseAFileNumberedLikeTheGoStep(t *testing.T) {
	ms, err := SQLiteMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := migrate.Check(ms); err != nil {
		t.Fatal(err)
	}
	if gaps := migrate.Gaps(ms); len(gaps) != 0 {
		t.Fatalf("the SQLite migrations skip versions %v", gaps)
	}
	fsys := fstest.MapFS{
		"m/0001_a.sql":      {Data: []byte("CREATE TABLE a (x int);")},
		"m/0005_future.sql": {Data: []byte("CREATE TABLE b (x int);")},
	}
	_, err = sqliteMigrations(fsys, "m")
	if err == nil || !strings.Contains(err.Error(), "share version 5") {
		t.Fatalf("sqliteMigrations with a file 0005: %v, want a shared version 5", err)
	}
}
