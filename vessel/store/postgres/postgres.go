// Package postgres is the PostgreSQL task store that lets several vessel
// replicas share tasks. It implements a2a-go's taskstore.Store per agent, keeps
// a lease per replica (a heartbeat row) so that tasks of a replica that died are
// failed by the others, and carries cancel requests between replicas.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// Options tune a DB. Zero values mean the defaults noted on each field.
type Options struct {
	// ReplicaID names this process in the lease table; default random.
	ReplicaID string
	// Schema, when set, is created if missing and used as search_path.
	Schema string
	// TTL deletes tasks this long after their last update; 0 keeps them.
	TTL time.Duration
	// HeartbeatInterval is how often the replica renews its lease; default 2s.
	HeartbeatInterval time.Duration
	// LeaseTTL is how long a lease lives without a heartbeat; default 15s.
	LeaseTTL time.Duration
	// ReapInterval is how often expired leases are looked for; default 5s.
	ReapInterval time.Duration
	// CleanupInterval is how often the TTL is applied; default 10m.
	CleanupInterval time.Duration
	// CancelPollInterval bounds how late a cancel request is seen when a
	// NOTIFY was missed; default 1s.
	CancelPollInterval time.Duration
	// CancelWait is how long a replica forwarding a cancel waits for the
	// running replica to finish the turn before cancelling in the store;
	// default 5s.
	CancelWait time.Duration
	// SubscribePoll is the snapshot polling period of a SubscribeToTask
	// served for a task running on another replica; default 250ms.
	SubscribePoll time.Duration
	// FollowAnnounce is how often a replica following a task that runs
	// elsewhere repeats its interest in the task's live events; the running
	// replica stops publishing them four periods after the last one.
	// Default 2s.
	FollowAnnounce time.Duration
	// FollowGrace is how long a follower that has received live events
	// waits, once the stored task is final, for the turn's last live events
	// before it ends anyway; default 1s.
	FollowGrace time.Duration
	// Strip reduces a task to what is stored; default store.Strip, so both
	// backends keep the same things.
	Strip func(*a2a.Task) *a2a.Task
	// Logger receives background errors; default slog.Default().
	Logger *slog.Logger
	// MaxConns caps the pool; default 16 unless the DSN sets pool_max_conns.
	MaxConns int32
}

func (o *Options) defaults() {
	if o.ReplicaID == "" {
		o.ReplicaID = randomID()
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 2 * time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.LeaseTTL < 2*o.HeartbeatInterval {
		o.LeaseTTL = 2 * o.HeartbeatInterval
	}
	if o.ReapInterval <= 0 {
		o.ReapInterval = 5 * time.Second
	}
	if o.CleanupInterval <= 0 {
		o.CleanupInterval = 10 * time.Minute
	}
	if o.CancelPollInterval <= 0 {
		o.CancelPollInterval = time.Second
	}
	if o.CancelWait <= 0 {
		o.CancelWait = 5 * time.Second
	}
	if o.SubscribePoll <= 0 {
		o.SubscribePoll = 250 * time.Millisecond
	}
	if o.FollowAnnounce <= 0 {
		o.FollowAnnounce = 2 * time.Second
	}
	if o.FollowGrace <= 0 {
		o.FollowGrace = time.Second
	}
	if o.Strip == nil {
		o.Strip = vstore.Strip
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// DB is one replica's connection to the shared task database. It runs the
// heartbeat, the reaper of expired leases, the TTL cleanup, the listener (of
// cancel requests and live events) and the live-event publisher until Close.
type DB struct {
	pool *pgxpool.Pool
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	stores    map[string]*Store
	cancelers map[string]func(ctx context.Context, taskID a2a.TaskID, owner string)
	resumers  map[string]resumer
	carriers  map[string]vstore.CallCarrier

	wake chan struct{}

	// Live events (follow.go). followed: tasks running here that other
	// replicas follow, until when; followers: Follows in progress here.
	followMu    sync.Mutex
	followed    map[followKey]time.Time
	nFollowed   atomic.Int64
	subMu       sync.Mutex
	followers   map[followKey]map[*follower]struct{}
	pubQueue    chan publishItem
	pubSent     atomic.Int64
	pubDropped  atomic.Int64
	pubOversize atomic.Int64
	pubFailed   atomic.Int64
	// listening is true while the listener connection is LISTENing.
	listening atomic.Bool

	// queue, once set, enqueues the pushes of status writes (push.go).
	queue atomic.Pointer[vstore.PushQueue]
	// writeErr is the error of the last task write if the database
	// refused it (refusesWrites), nil once one succeeds (health.go).
	failMu   sync.Mutex
	writeErr error
	// extendDenied is set once the new-block probe could not run: refused
	// the privilege to write its table, or its table too big to fill
	// (logged once).
	extendDenied atomic.Bool
	// healthySince is when the current run of successful lease renewals
	// began (unix ns), 0 after a failed one.
	healthySince atomic.Int64
	bg           context.Context // ends at Close
	stop         context.CancelFunc
	wg           sync.WaitGroup
	closed       sync.Once
}

// Open connects, applies pending migrations (serialized across replicas by an
// advisory lock), registers this replica's lease, fails tasks left running by
// replicas whose lease expired, and starts the background work.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	opts.defaults()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres task store: parse dsn: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else if !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default (the CPU count, at least 4) is small for many
		// concurrent turns each writing its state changes.
		cfg.MaxConns = 16
	}
	if opts.Schema != "" {
		if err := createSchema(ctx, cfg.ConnConfig.Copy(), opts.Schema); err != nil {
			return nil, err
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = opts.Schema
	}
	// Task writes would otherwise each wait for a WAL flush; losing the last
	// fraction of a second of task progress on a database crash is
	// acceptable for snapshots the app does not depend on.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	cfg.ConnConfig.RuntimeParams["application_name"] = "vessel-" + opts.ReplicaID

	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres task store: connect: %w", err)
	}
	db := newDB(pool, opts)
	if err := runMigrations(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.heartbeat(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	// Tasks left running under this replica id by an earlier process (a
	// configured id survives restarts) cannot be running now.
	if _, err := db.reap(ctx, true); err != nil {
		pool.Close()
		return nil, err
	}
	if db.opts.TTL > 0 {
		if _, err := db.DeleteExpired(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}

	// Open just renewed the lease; count it as healthy for a full TTL so that
	// the periodic reaper starts at once.
	db.healthySince.Store(time.Now().Add(-db.opts.LeaseTTL).UnixNano())
	bg, stop := context.WithCancel(context.Background())
	db.bg, db.stop = bg, stop
	db.wg.Add(4)
	go db.heartbeats(bg)
	go db.background(bg)
	go db.listen(bg)
	go db.publisher(bg)
	return db, nil
}

// newDB is a DB on pool with no background work started (Open starts it).
func newDB(pool *pgxpool.Pool, opts Options) *DB {
	return &DB{
		pool:      pool,
		opts:      opts,
		log:       opts.Logger.With("component", "store/postgres", "replica", opts.ReplicaID),
		stores:    map[string]*Store{},
		cancelers: map[string]func(context.Context, a2a.TaskID, string){},
		resumers:  map[string]resumer{},
		carriers:  map[string]vstore.CallCarrier{},
		wake:      make(chan struct{}, 1),
		followed:  map[followKey]time.Time{},
		followers: map[followKey]map[*follower]struct{}{},
		pubQueue:  make(chan publishItem, publishQueue),
	}
}

// ReplicaID is this process's id in the lease table.
func (db *DB) ReplicaID() string { return db.opts.ReplicaID }

// Close stops the background work and removes this replica's lease row, so
// that its unfinished tasks are failed by the next reaper on any replica.
func (db *DB) Close() error {
	var err error
	db.closed.Do(func() {
		db.stop()
		db.wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, e := db.pool.Exec(ctx, `DELETE FROM vessel_admission_counts WHERE replica_id = $1`, db.opts.ReplicaID); e != nil {
			err = fmt.Errorf("postgres task store: drop admission counts: %w", e)
		}
		if _, e := db.pool.Exec(ctx, `DELETE FROM vessel_replicas WHERE id = $1`, db.opts.ReplicaID); e != nil {
			err = fmt.Errorf("postgres task store: drop lease: %w", e)
		}
		db.pool.Close()
	})
	return err
}

// Abandon stops the background work without removing the lease, as a crash
// would. Tests use it to play a replica dying mid-turn.
func (db *DB) Abandon() {
	db.closed.Do(func() {
		db.stop()
		db.wg.Wait()
		db.pool.Close()
	})
}

func createSchema(ctx context.Context, cfg *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres task store: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		// Two replicas may race on CREATE SCHEMA IF NOT EXISTS; a unique
		// violation means the other one won.
		if !isUniqueViolation(err) {
			return fmt.Errorf("postgres task store: create schema %q: %w", schema, err)
		}
	}
	return nil
}

func randomID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a fixed fallback keeps Open total.
		return fmt.Sprintf("replica-%d", time.Now().UnixNano())
	}
	return hex.EncodeToString(b[:])
}
