package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// writtenTables are the tables the store inserts into and updates; the
// readiness probe asks whether the role may still do both on each.
var writtenTables = []string{
	"vessel_tasks", "vessel_replicas", "vessel_cancel_requests", "vessel_resume_requests",
	"vessel_push_configs", "vessel_admission_counts", "vessel_self_failed",
}

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
	failing := db.writeFailure()
	if failing == nil {
		return nil
	}
	// A task write was refused although the probe's write went through:
	// its one-row update fits the page the row is on, while a task write
	// may need a new block (a full data disk refuses that alone). Until
	// a task write or probeExtend succeeds, the store is failing.
	if err := db.probeExtend(ctx); err != nil {
		return fmt.Errorf("postgres: writes fail: %w (a new block: %w)", failing, err)
	}
	db.noteWrite(nil)
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

func (db *DB) writeFailure() error {
	db.failMu.Lock()
	defer db.failMu.Unlock()
	return db.writeErr
}

// refusesWrites tells a write the database refused (no space or another
// resource, an I/O error, a read-only transaction, a missing privilege) from
// the store's own outcomes (a conflict, a missing row) and a cancelled call.
func refusesWrites(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch {
	case strings.HasPrefix(pe.Code, "53"), strings.HasPrefix(pe.Code, "58"):
		return true
	}
	return pe.Code == "25006" || pe.Code == "42501"
}

// probeExtend writes a new block: a temporary table made for the
// transaction (dropped at its end) gets one row, which makes PostgreSQL
// extend the table's new file on disk right away. It runs only after a task
// write was refused, so the catalog rows it adds and drops stay few.
func (db *DB) probeExtend(ctx context.Context) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE vessel_extend_probe (b bytea) ON COMMIT DROP`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO vessel_extend_probe VALUES ('probe')`)
		return err
	})
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
		FROM unnest($1::text[]) AS t`, writtenTables).Scan(&recovery, &readOnly, &denied); err != nil {
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
