package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/jackc/pgx/v5"
)

// testDSN returns the DSN of a real PostgreSQL (deploy/postgres-test.sh prints
// one). Without it the test is skipped, except under CI=true where it fails.
func testDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	return dsn
}

// testSchema makes a fresh schema name and drops the schema after the test.
func testSchema(t *testing.T, dsn string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "vt_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

// nonSuperuserDSN returns dsn if its role is not a superuser, else the DSN
// of a new role that is not one (LOGIN, CREATE on the database), dropped
// with what it owns after the test: a superuser passes every privilege
// check, so tests that revoke one need a role it binds. Call it before
// testSchema and openTest, so that their cleanups run first.
func nonSuperuserDSN(t *testing.T, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var super bool
	var dbname string
	if err := conn.QueryRow(ctx, `SELECT rolsuper, current_database() FROM pg_roles WHERE rolname = current_user`).Scan(&super, &dbname); err != nil {
		t.Fatalf("is the role a superuser: %v", err)
	}
	if !super {
		return dsn
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	role, pass := "vt_role_"+hex.EncodeToString(b[:4]), hex.EncodeToString(b[4:])
	id := pgx.Identifier{role}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE ROLE `+id+` LOGIN NOSUPERUSER PASSWORD '`+pass+`'`); err != nil {
		t.Fatalf("create a role that is not a superuser: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop role %s: %v", role, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP OWNED BY `+id+`; DROP ROLE `+id); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	if _, err := conn.Exec(ctx, `GRANT CREATE ON DATABASE `+pgx.Identifier{dbname}.Sanitize()+` TO `+id); err != nil {
		t.Fatalf("grant the role CREATE: %v", err)
	}
	return dsnAs(dsn, role, pass)
}

// dsnAs returns dsn with its role and password replaced. In the URL form
// a user or password in the query overrides the one before the host, so
// both are replaced there; in the keyword/value form a later keyword
// overrides an earlier one.
func dsnAs(dsn, role, pass string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = url.UserPassword(role, pass)
		q := u.Query()
		q.Del("user")
		q.Del("password")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " user=" + role + " password=" + pass
}

// openTest opens a DB on a schema with fast background timers.
func openTest(t *testing.T, dsn, schema string, mod func(*Options)) *DB {
	t.Helper()
	opts := Options{
		Schema:             schema,
		HeartbeatInterval:  100 * time.Millisecond,
		LeaseTTL:           time.Hour, // tests expire leases by hand
		ReapInterval:       100 * time.Millisecond,
		CancelPollInterval: time.Hour, // only NOTIFY, so tests prove it works
		SubscribePoll:      20 * time.Millisecond,
		CancelWait:         10 * time.Second,
	}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := Open(ctx, dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// reapByHand stops the periodic reaper for tests that call ReapExpired
// themselves and count what it failed: a background pass on any of the
// test's replicas could otherwise fail the tasks first (seen in CI).
func reapByHand(o *Options) { o.ReapInterval = time.Hour }

// as returns a context whose caller is user, as the vessel's interceptor sets.
func as(user string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(user, nil)
	return ctx
}

// expireLease ages a replica's heartbeat so its tasks count as abandoned.
func expireLease(t *testing.T, db *DB, replica string) {
	t.Helper()
	if _, err := db.pool.Exec(context.Background(),
		`UPDATE vessel_replicas SET heartbeat_at = now() - interval '1 day' WHERE id = $1`, replica); err != nil {
		t.Fatal(err)
	}
}
