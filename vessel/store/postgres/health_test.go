package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// storedTask creates a finished task for alice and returns its id.
func storedTask(t *testing.T, db *DB) a2a.TaskID {
	t.Helper()
	if _, err := db.Agent("alpha").Create(as("alice"), newTask("done", "c1", a2a.TaskStateCompleted)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	return "done"
}

// readsButRefusesWrites checks what the vessel relies on while the store
// cannot write: Ping fails naming why (so every agent goes out of service),
// while a stored task is still read, through a store that holds nothing of it
// in memory.
func readsButRefusesWrites(t *testing.T, db *DB, id a2a.TaskID, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := db.Ping(ctx)
	if err == nil || !strings.Contains(err.Error(), why) {
		t.Fatalf("Ping = %v, want a failure saying %q", err, why)
	}
	got, err := db.Agent("alpha").Get(as("alice"), id)
	if err != nil || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("Get of a stored task while writes fail = %+v, %v; want the completed task", got, err)
	}
	if _, err := db.Agent("alpha").Create(as("alice"), newTask("new", "c2", a2a.TaskStateSubmitted)); err == nil {
		t.Fatal("Create succeeded although Ping said writes fail")
	}
}

// TestPingReadOnlySession: a session PostgreSQL makes read-only (as
// default_transaction_read_only on the database or the role does, or a
// standby) keeps answering the connection ping and reads; Ping says the store
// takes no writes.
func TestPingReadOnlySession(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping of a writable store: %v", err)
	}
	id := storedTask(t, db)

	cfg := db.pool.Config().Copy()
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ro := newDB(pool, db.opts)
	if err := ro.pool.Ping(ctx); err != nil {
		t.Fatalf("the read-only session does not answer: %v", err)
	}
	readsButRefusesWrites(t, ro, id, "read-only")
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping on the writable sessions again: %v", err)
	}
}

// TestPingRoleMayNotWrite: a role that lost INSERT or UPDATE on a table the
// store writes fails Ping with the table's name, reads still work, and Ping
// passes again once the grant is back.
func TestPingRoleMayNotWrite(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := storedTask(t, db)
	// The test's own schema only: the owner revokes its own rights there.
	if _, err := db.pool.Exec(ctx, `REVOKE INSERT, UPDATE ON vessel_tasks FROM CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	readsButRefusesWrites(t, newDB(db.pool, db.opts), id, "may not insert into or update vessel_tasks")
	if _, err := db.pool.Exec(ctx, `GRANT INSERT, UPDATE ON vessel_tasks TO CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping once the grant is back: %v", err)
	}
	if _, err := db.Agent("alpha").Update(as("alice"), &taskstore.UpdateRequest{Task: newTask("done", "c1", a2a.TaskStateCompleted)}); err != nil {
		t.Fatalf("Update once the grant is back: %v", err)
	}
}

// TestPingRenewsTheLeaseDurably: the write probe is a real committed write,
// this replica's lease row renewed.
func TestPingRenewsTheLeaseDurably(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), func(o *Options) { o.HeartbeatInterval = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	expireLease(t, db, db.ReplicaID())
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var age time.Duration
	if err := db.pool.QueryRow(ctx, `SELECT extract(epoch FROM now() - heartbeat_at) * 1e9 FROM vessel_replicas WHERE id = $1`,
		db.ReplicaID()).Scan(&age); err != nil {
		t.Fatal(err)
	}
	if age > time.Minute {
		t.Fatalf("lease row %v old after Ping, want renewed", age)
	}
}

// TestPingAfterARefusedTaskWrite: a task write the database refused is
// noted, Ping fails while the database would refuse it, and once Ping's
// probes (the new-block one included) pass it clears the note, as a task
// write that goes through does.
func TestPingAfterARefusedTaskWrite(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := storedTask(t, db)
	if _, err := db.pool.Exec(ctx, `REVOKE UPDATE ON vessel_tasks FROM CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	// A store holding nothing in memory, so the update goes to the table.
	other := newDB(db.pool, db.opts)
	done := &taskstore.UpdateRequest{Task: newTask(string(id), "c1", a2a.TaskStateCompleted)}
	if _, err := other.Agent("alpha").Update(as("alice"), done); err == nil {
		t.Fatal("Update succeeded without the UPDATE privilege")
	}
	if err := other.writeFailure(); err == nil || !refusesWrites(err) {
		t.Fatalf("noted write failure = %v, want the refused update", err)
	}
	if err := other.Ping(ctx); err == nil {
		t.Fatal("Ping passed while the role may not update vessel_tasks")
	}
	if _, err := db.pool.Exec(ctx, `GRANT UPDATE ON vessel_tasks TO CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	if err := other.Ping(ctx); err != nil {
		t.Fatalf("Ping once the grant is back: %v", err)
	}
	if err := other.writeFailure(); err != nil {
		t.Fatalf("the note outlived a passing Ping: %v", err)
	}

	// A refusal the lease probe cannot see (a full data disk refuses a new
	// block only): Ping tries one itself, and a task write that goes
	// through clears the note too.
	other.noteWrite(&pgconn.PgError{Code: "53100", Message: "could not extend file"})
	if err := other.probeExtend(ctx); err != nil {
		t.Fatalf("probeExtend on a healthy database: %v", err)
	}
	other.noteWrite(&pgconn.PgError{Code: "53100", Message: "could not extend file"})
	if _, err := other.Agent("alpha").Update(as("alice"), done); err != nil {
		t.Fatal(err)
	}
	if err := other.writeFailure(); err != nil {
		t.Fatalf("the note outlived a task write that went through: %v", err)
	}
	// The store's own outcomes are no refusal, nor too many connections
	// (it refuses a connection, and passes by itself).
	for _, err := range []error{taskstore.ErrConcurrentModification, a2a.ErrTaskNotFound, context.Canceled,
		&pgconn.PgError{Code: "53300", Message: "too many connections"}} {
		if refusesWrites(err) {
			t.Errorf("refusesWrites(%v) = true", err)
		}
	}
}

// TestPingClearsOnlyWhatAProbeShowsOver: a new block written clears a
// noted disk refusal (class 53 or 58) only; a privilege refusal stays
// until the privilege check (which covers River's job table once pushes
// are enqueued) passes.
func TestPingClearsOnlyWhatAProbeShowsOver(t *testing.T) {
	dsn := testDSN(t)
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pushOutbox(t, db, "http://127.0.0.1:9")
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping of a writable store with pushes: %v", err)
	}
	if _, err := db.pool.Exec(ctx, `REVOKE INSERT ON river_job FROM CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	denied := &pgconn.PgError{Code: "42501", Message: "permission denied for table river_job"}
	db.noteWrite(denied)
	if err := db.Ping(ctx); err == nil || !strings.Contains(err.Error(), "river_job") {
		t.Fatalf("Ping without INSERT on river_job = %v, want a failure naming it", err)
	}
	if err := db.probeExtend(ctx); err != nil {
		t.Fatalf("probeExtend: %v", err)
	}
	db.clearWriteFailure(diskRefusal) // what a passing probeExtend clears
	if got := db.writeFailure(); got != denied {
		t.Fatalf("a new block written cleared the privilege refusal: note = %v", got)
	}
	if _, err := db.pool.Exec(ctx, `GRANT INSERT ON river_job TO CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping once the grant is back: %v", err)
	}
	if err := db.writeFailure(); err != nil {
		t.Fatalf("the privilege note outlived a passing privilege check: %v", err)
	}
}

// TestPingExtendProbeMayNotWrite: the new-block probe writes a table the
// store owns, no temporary table (TEMP on the database is not needed); a
// role refused that table too (migrated by another role) makes the probe
// unable to tell, and readiness does not wait on it forever.
func TestPingExtendProbeMayNotWrite(t *testing.T) {
	dsn := nonSuperuserDSN(t, testDSN(t))
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	full := &pgconn.PgError{Code: "53100", Message: "could not extend file"}
	db.noteWrite(full)
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping with the extend probe's table writable: %v", err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM vessel_extend_probe`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("vessel_extend_probe holds %d rows (%v), want none kept", n, err)
	}
	if _, err := db.pool.Exec(ctx, `REVOKE TRUNCATE, INSERT ON vessel_extend_probe FROM CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	db.noteWrite(full)
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping while the extend probe may not write its table = %v, want cannot tell (ready)", err)
	}
	if got := db.writeFailure(); got != full {
		t.Fatalf("note = %v, want the disk refusal kept until a task write goes through", got)
	}
}

// TestPingExtendProbeWithoutTruncate: a role granted only SELECT, INSERT,
// UPDATE and DELETE on the probe's table (no TRUNCATE) still gets the new
// block written: the probe fills past the blocks the table has, and does
// so again each time (the blocks of rolled-back rows stay).
func TestPingExtendProbeWithoutTruncate(t *testing.T) {
	dsn := nonSuperuserDSN(t, testDSN(t))
	db := openTest(t, dsn, testSchema(t, dsn), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := db.pool.Exec(ctx, `REVOKE ALL ON vessel_extend_probe FROM CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `GRANT SELECT, INSERT, UPDATE, DELETE ON vessel_extend_probe TO CURRENT_USER`); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		var n int64
		if err := db.pool.QueryRow(ctx, `SELECT pg_relation_size('vessel_extend_probe')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 3 {
		before := size()
		if err := db.probeExtend(ctx); err != nil {
			t.Fatalf("probe %d without TRUNCATE: %v", i, err)
		}
		if after := size(); after <= before {
			t.Fatalf("probe %d without TRUNCATE: the table stayed %d bytes, want a new block", i, after)
		}
	}
	db.noteWrite(&pgconn.PgError{Code: "53100", Message: "could not extend file"})
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping without TRUNCATE on the probe's table: %v", err)
	}
	if err := db.writeFailure(); err != nil {
		t.Fatalf("the disk note stayed although the probe wrote a new block: %v", err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM vessel_extend_probe`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("vessel_extend_probe holds %d rows (%v), want none kept", n, err)
	}

	// Grown past maxExtendBlocks (here with rows kept, so that no vacuum
	// gives the blocks back meanwhile), the table is not filled: the probe
	// cannot tell, and readiness does not wait.
	if _, err := db.pool.Exec(ctx, `INSERT INTO vessel_extend_probe
		SELECT decode(repeat(md5(g::text), $1), 'hex') FROM generate_series(0, $2) g`, extendRowBytes/16, 4*(maxExtendBlocks+1)); err != nil {
		t.Fatal(err)
	}
	before := size()
	if err := db.probeExtend(ctx); !errors.Is(err, errExtendTooBig) {
		t.Fatalf("probe past %d blocks = %v, want errExtendTooBig", maxExtendBlocks, err)
	}
	if after := size(); after != before {
		t.Fatalf("the probe past its bound wrote: %d bytes, then %d", before, after)
	}
	full := &pgconn.PgError{Code: "53100", Message: "could not extend file"}
	db.noteWrite(full)
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping with the probe's table past its bound = %v, want cannot tell (ready)", err)
	}
	if got := db.writeFailure(); got != full {
		t.Fatalf("note = %v, want the disk refusal kept until a task write goes through", got)
	}
}
