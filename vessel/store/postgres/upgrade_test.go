package postgres

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"
)

// TestUpgradeInPlace: a database migrated by the runner the PostgreSQL store
// had before the shared one (the same files and schema_migrations table,
// applied by hand here as it did) opens with the shared runner, applies
// nothing twice and keeps its tasks.
func TestUpgradeInPlace(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	ctx := context.Background()
	first := openTest(t, dsn, schema, nil) // creates the schema
	_ = first.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sch := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, `DROP SCHEMA `+sch+` CASCADE; CREATE SCHEMA `+sch+`; SET search_path = `+sch); err != nil {
		t.Fatal(err)
	}
	// What the former runner (store/postgres/migrate.go before issue 32) did.
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, err := conn.Exec(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO vessel_tasks (agent_id, id, owner, context_id, state, version, replica_id, task)
		VALUES ('alpha', 't1', 'alice', 'c1', 'TASK_STATE_COMPLETED', 4, 'gone', '{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}')`); err != nil {
		t.Fatal(err)
	}

	db := openTest(t, dsn, schema, nil)
	got, err := db.Agent("alpha").Get(as("alice"), "t1")
	if err != nil || got.Version != 4 || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task after upgrade: %+v, %v", got, err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("schema_migrations: %d rows, want %d (%v)", n, len(ms), err)
	}
}
