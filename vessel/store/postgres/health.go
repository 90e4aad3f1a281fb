package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// writtenTables are the tables the store inserts into and updates; the
// readiness probe asks whether the role may still do both on each (and on
// riverJobTable once the store enqueues pushes).
var writtenTables = []string{
	"vessel_tasks", "vessel_replicas", "vessel_cancel_requests", "vessel_resume_requests",
	"vessel_push_configs", "vessel_admission_counts", "vessel_self_failed",
}

// riverJobTable is River's job table, which a status write inserts its
// pushes into, in the same transaction, once the push outbox is set.
const riverJobTable = "river_job"

// Ping implements store.Pinger for /health and readiness: the server answers
// and takes writes. A store that still reads but cannot write would keep
// every agent ready while each turn fails to be kept, so Ping fails then too
// (the vessel keeps serving reads of stored tasks while it does).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := db.probeWrite(ctx); err != nil {
		return fmt.Errorf("postgres: writes fail: %w", err)
	}
	// probeWrite asked about everything a read-only or privilege refusal
	// comes from, on every table the store writes (River's job table
	// included), and it passed: such a noted refusal is over.
	db.clearWriteFailure(func(err error) bool { return !diskRefusal(err) })
	failing := db.writeFailure()
	if failing == nil {
		return nil
	}
	// A task write was refused for want of space or another resource
	// although the probe's write went through: its one-row update fits the
	// page the row is on, while a task write may need a new block (a full
	// data disk refuses that alone). Until a task write or probeExtend
	// succeeds, the store is failing.
	if err := db.probeExtend(ctx); err != nil {
		if sqlState(err) == "42501" || errors.Is(err, errExtendTooBig) {
			// The role may not write the probe's table (the migrations
			// ran as another role that granted it nothing), or may not
			// truncate it and it has grown past what the probe will
			// fill on a disk that was just full: this probe cannot
			// tell, and readiness does not wait on it (the note stays
			// until a task write goes through).
			if db.extendDenied.CompareAndSwap(false, true) {
				db.log.Warn("task store: the new-block probe cannot run; readiness does not wait on it", "error", err.Error())
			}
			return nil
		}
		return fmt.Errorf("postgres: writes fail: %w (a new block: %w)", failing, err)
	}
	db.clearWriteFailure(diskRefusal)
	// The probe ran: a later episode in which it cannot is logged again.
	db.extendDenied.Store(false)
	return nil
}

// noteWrite records how a task write went: nil after one succeeded, else
// the error of one the database refused.
func (db *DB) noteWrite(err error) {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	if err != nil && db.writeErr == nil {
		db.log.Warn("task store writes refused", "error", err.Error())
	}
	db.writeErr = err
}

// clearWriteFailure drops the noted refusal if match says a probe that
// passed shows it is over.
func (db *DB) clearWriteFailure(match func(error) bool) {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	if db.writeErr != nil && match(db.writeErr) {
		db.writeErr = nil
	}
}

func (db *DB) writeFailure() error {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	return db.writeErr
}

// sqlState is the SQLSTATE of a PostgreSQL error, "" for another error.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	return pe.Code
}

// refusesWrites tells a write the database refused (no space or another
// resource, an I/O error, a read-only transaction, a missing privilege) from
// the store's own outcomes (a conflict, a missing row) and a cancelled call.
func refusesWrites(err error) bool {
	if diskRefusal(err) {
		return true
	}
	code := sqlState(err)
	return code == "25006" || code == "42501"
}

// diskRefusal is a write refused for want of space or another resource
// (class 53) or for an I/O or system error (class 58): what only a write
// that needs a new block may show. Too many connections (53300) is not
// one: it refuses a connection, not a write, and passes by itself.
func diskRefusal(err error) bool {
	code := sqlState(err)
	if code == "53300" {
		return false
	}
	return strings.HasPrefix(code, "53") || strings.HasPrefix(code, "58")
}

// probeExtend writes a new block in the store's own table
// vessel_extend_probe (migration 8), in one transaction rolled back
// whatever happens, in the tablespace of the store's tables (a full data
// disk refuses it); neither TEMP on the database nor temp_tablespaces take
// part. It runs only after a task write was refused for a disk reason.
//
// It first empties the table with TRUNCATE (a new, empty file; the lock is
// on that table only, held for the transaction). A role granted only
// SELECT, INSERT, UPDATE and DELETE may not, and then the table keeps the
// blocks earlier probes added (past maxExtendBlocks of them the probe
// writes nothing and cannot tell). Otherwise it then inserts rows of
// extendRowBytes, which no page holds more than four of, one more than
// four times the blocks the file has: together they cannot fit the room
// left in its pages, so PostgreSQL must add a block, which the rows'
// ctids confirm.
func (db *DB) probeExtend(ctx context.Context) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '2s'`); err != nil {
		return fmt.Errorf("set lock_timeout: %w", err)
	}
	if _, err := tx.Exec(ctx, `SAVEPOINT truncate_probe`); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if _, err := tx.Exec(ctx, `TRUNCATE vessel_extend_probe`); err != nil {
		if sqlState(err) != "42501" {
			return fmt.Errorf("truncate vessel_extend_probe: %w", err)
		}
		// No TRUNCATE privilege: fill past the blocks the table has.
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT truncate_probe`); err != nil {
			return fmt.Errorf("rollback to savepoint: %w", err)
		}
	}
	var blocks int64
	if err := tx.QueryRow(ctx, `SELECT pg_relation_size('vessel_extend_probe') / current_setting('block_size')::bigint`).Scan(&blocks); err != nil {
		return fmt.Errorf("size of vessel_extend_probe: %w", err)
	}
	if blocks > maxExtendBlocks {
		return fmt.Errorf("vessel_extend_probe has %d blocks (more than %d): vacuum it, or grant TRUNCATE on it: %w", blocks, maxExtendBlocks, errExtendTooBig)
	}
	var last int64
	err = tx.QueryRow(ctx, `WITH ins AS (
		INSERT INTO vessel_extend_probe
		SELECT decode(repeat(md5(g::text || random()::text), $1), 'hex') FROM generate_series(0, $2) g
		RETURNING ctid)
	SELECT max((ctid::text::point)[0])::bigint FROM ins`, extendRowBytes/16, 4*blocks).Scan(&last)
	if err != nil {
		return fmt.Errorf("insert into vessel_extend_probe: %w", err)
	}
	if last < blocks {
		return fmt.Errorf("insert into vessel_extend_probe: no new block (last row in block %d of %d)", last, blocks)
	}
	return nil
}

// extendRowBytes is the size of probeExtend's rows: four fit a page of
// 8 KiB (8168 bytes for tuples), five do not, and it is under the size at
// which PostgreSQL compresses or moves a value out of line (about 2 KiB).
const extendRowBytes = 1792

// maxExtendBlocks bounds the rows probeExtend writes when it may not
// truncate its table (vacuum gives back the blocks of rolled-back rows):
// at most 4×64+1 rows, under 0.5 MB (and their WAL), on a disk that was
// just full. Past it the probe does not write (errExtendTooBig).
const maxExtendBlocks = 64

// errExtendTooBig: the probe's table, which the role may not truncate,
// has more blocks than the probe fills; it cannot tell.
var errExtendTooBig = errors.New("the probe's table is too big to fill")

// tablesWritten are the tables whose privileges probeWrite checks.
func (db *DB) tablesWritten() []string {
	if db.queue.Load() == nil {
		return writtenTables
	}
	return append(slices.Clip(writtenTables), riverJobTable)
}

// probeWrite is one short transaction on a pooled connection: first what
// PostgreSQL would refuse every write for, named (a standby in recovery, a
// read-only session or database, a role without INSERT or UPDATE on a table
// the store writes), then one real write, this replica's lease row renewed
// as the heartbeat does, committed with synchronous_commit on so that the
// commit waits for its WAL record to reach the disk (the pool's sessions
// commit asynchronously). A database whose WAL cannot be written refuses
// that commit (or the server stops, which the ping above sees next time).
func (db *DB) probeWrite(ctx context.Context) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // a no-op once committed
	var (
		recovery, readOnly bool
		denied             []string
	)
	if err := tx.QueryRow(ctx, `
		SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on',
		       coalesce(array_agg(t ORDER BY t) FILTER (WHERE NOT (has_table_privilege(t, 'INSERT') AND has_table_privilege(t, 'UPDATE'))), '{}')
		FROM unnest($1::text[]) AS t`, db.tablesWritten()).Scan(&recovery, &readOnly, &denied); err != nil {
		return fmt.Errorf("read-only checks: %w", err)
	}
	switch {
	case recovery:
		return errors.New("the server is a standby in recovery (pg_is_in_recovery): it takes no writes")
	case readOnly:
		return errors.New("the session is read-only (default_transaction_read_only is on for the database, the role or the server)")
	case len(denied) > 0:
		return fmt.Errorf("the role may not insert into or update %s", strings.Join(denied, ", "))
	}
	if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
		return fmt.Errorf("set synchronous_commit: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO vessel_replicas (id) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, db.opts.ReplicaID); err != nil {
		return fmt.Errorf("write probe (lease renewal): %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("write probe commit: %w", err)
	}
	return nil
}
