// Package migrate applies the numbered SQL migrations of a task store,
// the same way for every backend: files "NNNN_name.sql" embedded in the
// backend, applied in version order, each in its own transaction together
// with its row in schema_migrations (version, name, applied_at), under a
// lock that keeps processes starting together apart, refusing a database
// whose schema is newer than the binary. A backend supplies a Target (how
// its database locks, reads and applies) and its files; the SQLite target
// is here (database/sql), the PostgreSQL one in store/postgres (pgx).
//
// Why not a migration library: pressly/goose and golang-migrate keep their
// own bookkeeping tables (goose_db_version; golang-migrate's own
// schema_migrations with other columns), so every deployed PostgreSQL
// database, which records each migration in this schema_migrations, would
// need a bridge; goose would also add a module for what is about a hundred
// lines here. tern (made for pgx) keeps one row of the current version and
// renders migrations as sprig templates (see store/postgres/migrate.go,
// issue 20). None of them is in the vessel's go.mod today. Revisit when a
// migration needs what this package lacks (down migrations, runs outside
// the vessel).
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

// Table is the bookkeeping table, one row per applied migration.
const Table = "schema_migrations"

// Migration is one numbered file, or a step written in Go.
type Migration struct {
	Version int
	Name    string // the file name, NNNN_name.sql
	SQL     string
	// Func, when set, runs after SQL in the same transaction: for what SQL
	// alone cannot say (SQLite: a statement per table found).
	Func func(ctx context.Context, tx sqldb.Querier) error
}

// Target is one database as the runner sees it.
type Target interface {
	// Lock keeps other processes from migrating the same database until
	// unlock is called.
	Lock(ctx context.Context) (unlock func(), err error)
	// Applied creates Table when it is missing and returns the versions it
	// records.
	Applied(ctx context.Context) ([]int, error)
	// Apply runs m and records it in Table, in one transaction.
	Apply(ctx context.Context, m Migration) error
}

// Load lists the files "NNNN_name.sql" of dir in fsys in version order.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: name must be NNNN_name.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: version must be a positive number", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, name, v)
		}
		seen[v] = name
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	Sort(out)
	return out, nil
}

// Sort orders ms by version (after adding steps written in Go).
func Sort(ms []Migration) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
}

// Check fails when two of ms share a version: a backend that adds steps
// written in Go to its loaded files calls it after adding them, so a file
// numbered like a Go step is refused instead of one silently shadowing
// the other.
func Check(ms []Migration) error {
	seen := make(map[int]string, len(ms))
	for _, m := range ms {
		if prev, dup := seen[m.Version]; dup {
			return fmt.Errorf("migrations %q and %q share version %d", prev, m.Name, m.Version)
		}
		seen[m.Version] = m.Name
	}
	return nil
}

// Latest is the highest version of ms, 0 for none.
func Latest(ms []Migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Gaps lists the versions missing between 1 and the newest of ms, which
// must be sorted by version, ascending, as Load returns them or Sort
// leaves them (Gaps does not sort them, as Latest does not).
// A gap cannot be filled later: Run applies a migration numbered into it
// on a database that recorded the versions after it, so such databases
// would run it after those and fresh ones before. A backend's test pins
// its known gaps, so none appears by accident.
func Gaps(ms []Migration) []int {
	var gaps []int
	next := 1
	for _, m := range ms {
		for ; next < m.Version; next++ {
			gaps = append(gaps, next)
		}
		next = m.Version + 1
	}
	return gaps
}

// Run applies, under t's lock, every migration of ms that t does not
// record yet, in version order. It fails, applying nothing, when t records
// a version newer than the newest of ms (a newer vessel migrated it).
func Run(ctx context.Context, t Target, ms []Migration) error {
	unlock, err := t.Lock(ctx)
	if err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer unlock()
	versions, err := t.Applied(ctx)
	if err != nil {
		return fmt.Errorf("migrate: read versions: %w", err)
	}
	applied := map[int]bool{}
	latest := Latest(ms)
	for _, v := range versions {
		if v > latest {
			return fmt.Errorf("database schema version %d is newer than this vessel (%d)", v, latest)
		}
		applied[v] = true
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if err := t.Apply(ctx, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return nil
}
