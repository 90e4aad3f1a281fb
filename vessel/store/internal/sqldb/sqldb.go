// Package sqldb is the little both task stores need of a database to share
// one implementation of a mechanism: a query runner over database/sql
// (SQLite) or pgx (PostgreSQL, in store/postgres), transactions, and one
// "no rows" error. Queries are written once with "?" placeholders; the pgx
// runner rewrites them to PostgreSQL's "$n" (Rebind).
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrNoRows is what Row.Scan returns when the query matched no row,
// whichever driver ran it.
var ErrNoRows = errors.New("no rows")

// Row is one row of a query.
type Row interface{ Scan(dest ...any) error }

// Rows are the rows of a query; Close may be called more than once.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Querier runs queries: a database or a transaction.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// DB is a database that begins transactions.
type DB interface {
	Querier
	Begin(ctx context.Context) (Tx, error)
}

// Tx is a transaction.
type Tx interface {
	Querier
	Commit(ctx context.Context) error
	// Rollback is a no-op after Commit.
	Rollback(ctx context.Context) error
	// Driver is the driver's own transaction (*sql.Tx or pgx.Tx), for
	// code that takes it as is (store.PushQueue).
	Driver() any
}

// Rebind rewrites the "?" placeholders of query to "$1", "$2", ... The
// stores' queries hold no "?" in their literals. The stores' queries are
// constants run again and again, so each is rewritten once and the result
// kept (up to rebindCacheMax queries; past that, one built on the fly is
// rewritten at every call, not kept).
func Rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	if v, ok := rebound.Load(query); ok {
		return v.(string)
	}
	out := rebind(query)
	if reboundN.Load() < rebindCacheMax {
		if _, loaded := rebound.LoadOrStore(query, out); !loaded {
			reboundN.Add(1)
		}
	}
	return out
}

// rebindCacheMax bounds the queries Rebind keeps: far more than the
// stores have, so only queries built with varying text go past it.
const rebindCacheMax = 4096

var (
	rebound  sync.Map // query -> rebound query
	reboundN atomic.Int64
)

func rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Collect reads every row of rows with scan, then closes them.
func Collect[T any](rows Rows, scan func(Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Bytes scans a row of one column into a byte slice (Collect).
func Bytes(r Row) ([]byte, error) {
	var b []byte
	err := r.Scan(&b)
	return b, err
}

// SQL is the runner of a database/sql database.
func SQL(db *sql.DB) DB { return sqlDB{db} }

type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type sqlRunner struct{ q sqlQuerier }

func (r sqlRunner) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := r.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (r sqlRunner) QueryRow(ctx context.Context, query string, args ...any) Row {
	return sqlRow{r.q.QueryRowContext(ctx, query, args...)}
}

func (r sqlRunner) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// SQLTx runs queries in a database/sql transaction.
func SQLTx(tx *sql.Tx) Querier { return sqlRunner{tx} }

// SQLRow is a database/sql row whose Scan returns ErrNoRows.
func SQLRow(r *sql.Row) Row { return sqlRow{r} }

type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	if err := r.r.Scan(dest...); errors.Is(err, sql.ErrNoRows) {
		return ErrNoRows
	} else if err != nil {
		return err
	}
	return nil
}

// SQLRows are database/sql rows (of a prepared statement, say) as Rows.
func SQLRows(r *sql.Rows) Rows { return sqlRows{r} }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlDB struct{ db *sql.DB }

func (d sqlDB) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return sqlRunner{d.db}.Exec(ctx, q, args...)
}

func (d sqlDB) QueryRow(ctx context.Context, q string, args ...any) Row {
	return sqlRunner{d.db}.QueryRow(ctx, q, args...)
}

func (d sqlDB) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	return sqlRunner{d.db}.Query(ctx, q, args...)
}

func (d sqlDB) Begin(ctx context.Context) (Tx, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqlTx{sqlRunner{tx}, tx}, nil
}

type sqlTx struct {
	sqlRunner
	tx *sql.Tx
}

func (t sqlTx) Commit(context.Context) error { return t.tx.Commit() }

func (t sqlTx) Rollback(context.Context) error {
	if err := t.tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return err
	}
	return nil
}

func (t sqlTx) Driver() any { return t.tx }
