package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
