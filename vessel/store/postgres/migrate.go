package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLock is the advisory lock key held while migrating, so replicas
// starting together apply each migration once.
const migrationLock int64 = 0x7665_7373_656c_0001 // "vessel", 1

type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded files "NNNN_name.sql" in version order.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: bad version: %w", name, err)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, name, v)
		}
		seen[v] = name
		body, err := migrationFiles.ReadFile("migrations/" + name)
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies every migration not yet recorded in schema_migrations, each
// in its own transaction, under a session advisory lock.
//
// Why this is not a migration library made for pgx (tern's migrate package,
// github.com/jackc/tern/v2/migrate, weighed in issue 20): its bookkeeping is
// one row holding the current version, while deployed databases already
// record each migration here (version, name, applied_at) in
// schema_migrations, so switching needs a bridge for every existing database
// and gains nothing this code lacks (the advisory lock, one transaction a
// migration, refusing a schema newer than the vessel); and its migrations are
// text/template files rendered with sprig, which would bring sprig and its
// dependencies into the vessel (and tern's go.mod the archived
// gopkg.in/yaml.v3 this project moved off) for a feature the store does not
// use.
// golang-migrate's pgx driver keeps its own table under the same name,
// schema_migrations, with other columns. Revisit when a migration needs
// something this file does not do (down migrations, out-of-band runs).
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres task store: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres task store: migrate: acquire: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("postgres task store: migrate: lock: %w", err)
	}
	defer func() {
		// Unlock on a fresh context: the caller's may be done already.
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	}()

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres task store: migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("postgres task store: migrate: read versions: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("postgres task store: migrate: read versions: %w", err)
	}
	for _, v := range versions {
		applied[int(v)] = true
	}
	latest := 0
	if len(ms) > 0 {
		latest = ms[len(ms)-1].version
	}
	for _, v := range versions {
		if int(v) > latest {
			return fmt.Errorf("postgres task store: database schema version %d is newer than this vessel (%d)", v, latest)
		}
	}
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// The pool runs with synchronous_commit off; schema changes do not.
			if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name)
			return err
		}); err != nil {
			return fmt.Errorf("postgres task store: migration %s: %w", m.name, err)
		}
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
