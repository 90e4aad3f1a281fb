package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestDSNAs: the role nonSuperuserDSN makes is the one pgx connects as,
// whatever form the DSN has and wherever it names a user (no database).
func TestDSNAs(t *testing.T) {
	for _, dsn := range []string{
		"host=localhost port=5432 dbname=vessel user=postgres password=pw sslmode=disable",
		"host=localhost dbname=vessel sslmode=disable",
		"postgres://postgres:pw@localhost:5432/vessel?sslmode=disable",
		"postgresql://localhost/vessel?user=postgres&password=pw&sslmode=disable",
		"postgres://other:x@localhost/vessel?sslmode=disable&user=postgres",
	} {
		cfg, err := pgx.ParseConfig(dsnAs(dsn, "vt_role_1", "secret1"))
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if cfg.User != "vt_role_1" || cfg.Password != "secret1" {
			t.Errorf("%s connects as %q (password set: %v), want vt_role_1", dsn, cfg.User, cfg.Password == "secret1")
		}
		if cfg.Database != "vessel" || cfg.Host != "localhost" {
			t.Errorf("%s: database %q on %q, want vessel on localhost", dsn, cfg.Database, cfg.Host)
		}
	}
}
