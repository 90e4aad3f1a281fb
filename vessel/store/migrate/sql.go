package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// SQLite is the Target of a SQLite database opened with database/sql.
// One vessel owns a SQLite file, so Lock takes nothing; Apply runs in a
// transaction that (with the store's _txlock=immediate) holds the write
// lock from its start and checks the version again inside it, so a second
// process racing for the same file applies nothing twice.
func SQLite(db *sql.DB) Target { return sqliteTarget{db} }

type sqliteTarget struct{ db *sql.DB }

func (sqliteTarget) Lock(context.Context) (func(), error) { return func() {}, nil }

func (t sqliteTarget) Applied(ctx context.Context) ([]int, error) {
	if _, err := t.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+Table+` (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL DEFAULT (unixepoch()))`); err != nil {
		return nil, fmt.Errorf("create %s: %w", Table, err)
	}
	rows, err := t.db.QueryContext(ctx, `SELECT version FROM `+Table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (t sqliteTarget) Apply(ctx context.Context, m Migration) error {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+Table+` WHERE version=?`, m.Version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil // applied meanwhile by another process
	}
	if err := apply(ctx, sqldb.SQLTx(tx), m); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+Table+` (version, name) VALUES (?, ?)`, m.Version, m.Name); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// apply runs m's SQL, then its Func, in tx: what every Target's Apply does
// before recording m.
func apply(ctx context.Context, tx sqldb.Querier, m Migration) error {
	if strings.TrimSpace(m.SQL) != "" {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return err
		}
	}
	if m.Func != nil {
		return m.Func(ctx, tx)
	}
	return nil
}

// Apply runs m's SQL, then its Func, in tx, for a Target outside this
// package (store/postgres).
func Apply(ctx context.Context, tx sqldb.Querier, m Migration) error { return apply(ctx, tx, m) }
