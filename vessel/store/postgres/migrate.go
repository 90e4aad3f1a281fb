package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/astraldeep/astralvessel-go/vessel/store/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key held while migrating, so replicas
// starting together apply each migration once.
const migrationLock int64 = 0x7665_7373_656c_0001 // "vessel", 1

// migrations lists the embedded files "NNNN_name.sql" in version order.
func migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFiles, "migrations")
}

// runMigrations applies, through the runner both stores share (store/migrate,
// which says why it is not a library), every migration not yet recorded in
// schema_migrations, each in its own transaction, under a session advisory
// lock. The table's shape (version, name, applied_at) is the one deployed
// databases have had since the first migration, so they upgrade in place.
//
// tern (github.com/jackc/tern/v2/migrate, made for pgx, weighed in issue
// 20) keeps one row of the current version instead and renders migrations
// as text/template files with sprig, which would bring sprig and the
// archived gopkg.in/yaml.v3 into the vessel for a feature it does not use.
func runMigrations(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres task store: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres task store: migrate: acquire: %w", err)
	}
	defer conn.Release()
	if err := migrate.Run(ctx, pgTarget{conn.Conn()}, ms); err != nil {
		return fmt.Errorf("postgres task store: %w", err)
	}
	return nil
}

// pgTarget is the runner's view of one connection of the pool.
type pgTarget struct{ conn *pgx.Conn }

func (t pgTarget) Lock(ctx context.Context) (func(), error) {
	if _, err := t.conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return nil, err
	}
	return func() {
		// Unlock on a fresh context: the caller's may be done already.
		_, _ = t.conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	}, nil
}

func (t pgTarget) Applied(ctx context.Context) ([]int, error) {
	if _, err := t.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+migrate.Table+` (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("create %s: %w", migrate.Table, err)
	}
	rows, err := t.conn.Query(ctx, `SELECT version FROM `+migrate.Table)
	if err != nil {
		return nil, err
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out, nil
}

func (t pgTarget) Apply(ctx context.Context, m migrate.Migration) error {
	return pgx.BeginFunc(ctx, t.conn, func(tx pgx.Tx) error {
		// The pool runs with synchronous_commit off; schema changes do not.
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
			return err
		}
		if err := migrate.Apply(ctx, runner{q: tx, verbatim: true}, m); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+migrate.Table+` (version, name) VALUES ($1, $2)`, m.Version, m.Name)
		return err
	})
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
