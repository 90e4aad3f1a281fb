package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// OpenSQLite opens the outbox in the SQLite task store at path. River gets
// a pool of its own with one connection, as its SQLite driver wants.
func OpenSQLite(ctx context.Context, path string, cfg Config) (*Outbox, func() error, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("push outbox: open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	drv := riversqlite.New(db)
	mig, err := rivermigrate.New(drv, nil)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("push outbox: %w", err)
	}
	if _, err := mig.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("push outbox: migrate River's tables: %w", err)
	}
	o, err := build(drv, cfg)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return o, db.Close, nil
}

// OpenPostgres opens the outbox in the PostgreSQL task store. River's
// tables are migrated under an advisory lock, so replicas starting
// together take turns.
func OpenPostgres(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Outbox, error) {
	drv := riverpgxv5.New(pool)
	mig, err := rivermigrate.New(drv, nil)
	if err != nil {
		return nil, fmt.Errorf("push outbox: %w", err)
	}
	// River's migrations each run in their own transaction (one adds an
	// enum value another uses); a session lock keeps replicas apart.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("push outbox: %w", err)
	}
	defer conn.Release()
	const lock = `hashtext('astralvessel river migrate')`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+lock+`)`); err != nil {
		return nil, fmt.Errorf("push outbox: lock for River's migrations: %w", err)
	}
	_, err = mig.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+lock+`)`); uerr != nil && err == nil {
		err = uerr
	}
	if err != nil {
		return nil, fmt.Errorf("push outbox: migrate River's tables: %w", err)
	}
	return build(drv, cfg)
}

func build[TTx any](drv riverdriver.Driver[TTx], cfg Config) (*Outbox, error) {
	cfg.defaults()
	o := &Outbox{cfg: cfg}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{o: o}); err != nil {
		return nil, fmt.Errorf("push outbox: %w", err)
	}
	client, err := river.NewClient(drv, &river.Config{
		Queues:                      map[string]river.QueueConfig{Queue: {MaxWorkers: cfg.Workers}},
		Workers:                     workers,
		MaxAttempts:                 cfg.MaxAttempts,
		JobTimeout:                  cfg.Timeout,
		RetryPolicy:                 retryPolicy{base: cfg.BackoffBase, limit: cfg.BackoffCap},
		RescueStuckJobsAfter:        cfg.RescueAfter,
		FetchPollInterval:           cfg.PollInterval,
		FetchCooldown:               min(100*time.Millisecond, cfg.PollInterval),
		CancelledJobRetentionPeriod: 7 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 7 * 24 * time.Hour,
		CompletedJobRetentionPeriod: time.Hour,
		Logger:                      telemetry.Slog(cfg.Log.With(zap.String("component", "push"))),
	})
	if err != nil {
		return nil, fmt.Errorf("push outbox: %w", err)
	}
	o.insert = func(ctx context.Context, a Args) error {
		_, err := client.Insert(ctx, a, nil)
		return err
	}
	o.insertTx = func(ctx context.Context, tx any, as []Args) error {
		ttx, ok := tx.(TTx)
		if !ok {
			return fmt.Errorf("a %T is not a transaction of the outbox's database", tx)
		}
		params := make([]river.InsertManyParams, len(as))
		for i, a := range as {
			params[i] = river.InsertManyParams{Args: a}
		}
		_, err := client.InsertManyTx(ctx, ttx, params)
		return err
	}
	o.start = client.Start
	o.stop = client.Stop
	o.list = client.JobList
	return o, nil
}
