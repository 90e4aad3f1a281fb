package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// pgxQuerier is the pool or a transaction.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// runner is sqldb's query runner over pgx: the shared store code's "?"
// placeholders become "$n", unless verbatim (migration files, written
// for PostgreSQL as they are).
type runner struct {
	q        pgxQuerier
	verbatim bool
}

func (r runner) sql(query string) string {
	if r.verbatim {
		return query
	}
	return sqldb.Rebind(query)
}

func (r runner) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := r.q.Exec(ctx, r.sql(query), args...)
	return tag.RowsAffected(), err
}

func (r runner) QueryRow(ctx context.Context, query string, args ...any) sqldb.Row {
	return pgxRow{r.q.QueryRow(ctx, r.sql(query), args...)}
}

func (r runner) Query(ctx context.Context, query string, args ...any) (sqldb.Rows, error) {
	rows, err := r.q.Query(ctx, r.sql(query), args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

type pgxRow struct{ r pgx.Row }

func (r pgxRow) Scan(dest ...any) error {
	if err := r.r.Scan(dest...); errors.Is(err, pgx.ErrNoRows) {
		return sqldb.ErrNoRows
	} else if err != nil {
		return err
	}
	return nil
}

// poolDB is the pool as the shared store code sees it.
type poolDB struct {
	runner
	pool *pgxpool.Pool
}

func newPoolDB(pool *pgxpool.Pool) poolDB { return poolDB{runner{q: pool}, pool} }

func (d poolDB) Begin(ctx context.Context) (sqldb.Tx, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return pgxTx{runner{q: tx}, tx}, nil
}

type pgxTx struct {
	runner
	tx pgx.Tx
}

func (t pgxTx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

func (t pgxTx) Rollback(ctx context.Context) error {
	if err := t.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
		return err
	}
	return nil
}

func (t pgxTx) Driver() any { return t.tx }
