package postgres

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// ShareAdmission makes the [limits] turn caps hold across replicas: every
// interval it replaces this replica's rows in vessel_admission_counts with
// snap() (its running turns by admission key) and reads the sums of the
// other replicas whose lease is current. The returned lookup gives those
// sums; it is cheap (an atomic load and a map read) and may lag the other
// replicas by up to one interval, so a burst arriving on several replicas
// at once can pass a cap by what they admitted in that interval
// (docs/scaling.md). It runs until the DB closes.
func (db *DB) ShareAdmission(snap func() map[string]int, interval time.Duration) func(key string) int {
	if interval <= 0 {
		interval = time.Second
	}
	var peers atomic.Pointer[map[string]int]
	empty := map[string]int{}
	peers.Store(&empty)
	db.wg.Add(1)
	go func() {
		defer db.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		var last map[string]int
		for {
			ctx, cancel := context.WithTimeout(db.bg, max(interval, 2*time.Second))
			mine := snap()
			if !maps.Equal(mine, last) {
				if err := db.publishCounts(ctx, mine); err != nil {
					if db.bg.Err() == nil {
						db.log.Warn("admission counts not published", "error", err)
					}
				} else {
					last = mine
				}
			}
			if others, err := db.peerCounts(ctx); err == nil {
				peers.Store(&others)
			} else if db.bg.Err() == nil {
				db.log.Warn("admission counts of the other replicas not read", "error", err)
			}
			cancel()
			select {
			case <-db.bg.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func(key string) int { return (*peers.Load())[key] }
}

// publishCounts replaces this replica's rows with counts.
func (db *DB) publishCounts(ctx context.Context, counts map[string]int) error {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres task store: admission counts: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `DELETE FROM vessel_admission_counts WHERE replica_id = $1`, db.opts.ReplicaID); err != nil {
		return fmt.Errorf("postgres task store: admission counts: %w", err)
	}
	if len(counts) > 0 {
		rows := make([][]any, 0, len(counts))
		for k, n := range counts {
			if n > 0 {
				rows = append(rows, []any{db.opts.ReplicaID, k, int32(n)})
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"vessel_admission_counts"}, []string{"replica_id", "key", "n"}, pgx.CopyFromRows(rows)); err != nil {
			return fmt.Errorf("postgres task store: admission counts: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres task store: admission counts: %w", err)
	}
	return nil
}

// peerCounts sums the rows of the other replicas with a current lease.
func (db *DB) peerCounts(ctx context.Context) (map[string]int, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT c.key, sum(c.n)::bigint FROM vessel_admission_counts c
		JOIN vessel_replicas r ON r.id = c.replica_id
		WHERE c.replica_id <> $1 AND r.heartbeat_at > now() - make_interval(secs => $2)
		GROUP BY c.key`, db.opts.ReplicaID, db.opts.LeaseTTL.Seconds())
	if err != nil {
		return nil, fmt.Errorf("postgres task store: peer admission counts: %w", err)
	}
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres task store: peer admission counts: %w", err)
		}
		out[k] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres task store: peer admission counts: %w", err)
	}
	return out, nil
}
