package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
)

// Each replica holds one lease row (vessel_replicas) and renews it every
// HeartbeatInterval; every task a replica writes carries its replica_id. A
// task that is still submitted or working while its replica's lease is older
// than LeaseTTL (or gone) was left behind by a replica that stopped, and is
// failed. Times come from the database clock only, so replica clocks may drift.

// heartbeat renews this replica's lease.
func (db *DB) heartbeat(ctx context.Context) error {
	_, err := db.pool.Exec(ctx, `
		INSERT INTO vessel_replicas (id) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, db.opts.ReplicaID)
	if err != nil {
		return fmt.Errorf("postgres task store: heartbeat: %w", err)
	}
	return nil
}

// reapedStatus is the status written on a task whose replica stopped.
func reapedStatus(taskID, contextID string) ([]byte, error) {
	now := time.Now().UTC()
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(vstore.RestartReason))
	msg.TaskID = a2a.TaskID(taskID)
	msg.ContextID = contextID
	b, err := json.Marshal(a2a.TaskStatus{State: a2a.TaskStateFailed, Message: msg, Timestamp: &now})
	if err != nil {
		return nil, fmt.Errorf("encode failed status: %w", err)
	}
	return b, nil
}

// ReapExpired fails every submitted, working or input-required task whose replica's lease has
// expired, on any agent, and returns how many it failed. It never touches a
// task of a replica whose lease is current, this one's included.
func (db *DB) ReapExpired(ctx context.Context) (int, error) { return db.reap(ctx, false) }

// reap fails expired tasks; with self it also fails tasks carrying this
// replica's id, which is only right before this process runs any turn.
func (db *DB) reap(ctx context.Context, self bool) (int, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT agent_id, id, context_id, version FROM vessel_tasks t
		WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_INPUT_REQUIRED')
		  AND (($2 AND t.replica_id = $3)
		       OR NOT EXISTS (SELECT 1 FROM vessel_replicas r
		                      WHERE r.id = t.replica_id
		                        AND r.heartbeat_at > now() - make_interval(secs => $1)))`,
		db.opts.LeaseTTL.Seconds(), self, db.opts.ReplicaID)
	if err != nil {
		return 0, fmt.Errorf("postgres task store: find expired tasks: %w", err)
	}
	type orphan struct {
		agent, id, contextID string
		version              int64
	}
	var orphans []orphan
	for rows.Next() {
		var o orphan
		if err := rows.Scan(&o.agent, &o.id, &o.contextID, &o.version); err != nil {
			rows.Close()
			return 0, fmt.Errorf("postgres task store: find expired tasks: %w", err)
		}
		orphans = append(orphans, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("postgres task store: find expired tasks: %w", err)
	}

	n := 0
	for _, o := range orphans {
		status, err := reapedStatus(o.id, o.contextID)
		if err != nil {
			return n, err
		}
		// The version check makes this a no-op if the task moved meanwhile
		// (its replica came back, or another reaper got there first). The
		// same statement marks the failed task for its push when it has
		// configs (selffailed.go), so a failure is never stored untold.
		var failed int
		err = db.pool.QueryRow(ctx, `
			WITH failed AS (
				UPDATE vessel_tasks
				SET task = jsonb_set(task, '{status}', $1::jsonb), state = 'TASK_STATE_FAILED',
				    status_ts = now(), version = version + 1, updated_at = now()
				WHERE agent_id = $2 AND id = $3 AND version = $4
				RETURNING agent_id, id),
			marked AS (
				INSERT INTO vessel_self_failed (agent_id, task_id)
				SELECT f.agent_id, f.id FROM failed f
				WHERE EXISTS (SELECT 1 FROM vessel_push_configs p WHERE p.agent_id = f.agent_id AND p.task_id = f.id)
				ON CONFLICT (agent_id, task_id) DO NOTHING)
			SELECT count(*) FROM failed`,
			status, o.agent, o.id, o.version).Scan(&failed)
		if err != nil {
			return n, fmt.Errorf("postgres task store: fail expired task %s: %w", o.id, err)
		}
		n += failed
	}
	if n > 0 {
		db.log.Warn("failed tasks left running by stopped replicas", "count", n)
	}
	return n, nil
}

// DeleteExpired deletes tasks not updated for Options.TTL, and lease rows of
// replicas gone for a day, and returns how many tasks it deleted.
func (db *DB) DeleteExpired(ctx context.Context) (int64, error) {
	if db.opts.TTL <= 0 {
		return 0, nil
	}
	tag, err := db.pool.Exec(ctx, `DELETE FROM vessel_tasks WHERE updated_at < now() - make_interval(secs => $1)`,
		db.opts.TTL.Seconds())
	if err != nil {
		return 0, fmt.Errorf("postgres task store: delete expired tasks: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM vessel_push_configs p WHERE created_at < now() - make_interval(secs => $1)
		AND NOT EXISTS (SELECT 1 FROM vessel_tasks t WHERE t.agent_id = p.agent_id AND t.id = p.task_id)`, db.opts.TTL.Seconds()); err != nil {
		return tag.RowsAffected(), fmt.Errorf("postgres task store: delete push configs of expired tasks: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM vessel_admission_counts c WHERE NOT EXISTS
		(SELECT 1 FROM vessel_replicas r WHERE r.id = c.replica_id AND r.heartbeat_at > now() - interval '1 day')`); err != nil {
		return tag.RowsAffected(), fmt.Errorf("postgres task store: delete old admission counts: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM vessel_replicas WHERE heartbeat_at < now() - interval '1 day'`); err != nil {
		return tag.RowsAffected(), fmt.Errorf("postgres task store: delete old leases: %w", err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM vessel_cancel_requests WHERE requested_at < now() - interval '1 hour'`); err != nil {
		return tag.RowsAffected(), fmt.Errorf("postgres task store: delete old cancel requests: %w", err)
	}
	return tag.RowsAffected(), nil
}

// heartbeats renews the lease until ctx ends. It runs apart from the other
// background work so that a slow cleanup never delays it, and each renewal
// is bounded so that a hung connection shows as a failure.
func (db *DB) heartbeats(ctx context.Context) {
	defer db.wg.Done()
	t := time.NewTicker(db.opts.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Generous against a slow but working database, short of the TTL.
		hctx, cancel := context.WithTimeout(ctx, max(db.opts.HeartbeatInterval, db.opts.LeaseTTL/3))
		err := db.heartbeat(hctx)
		cancel()
		switch {
		case err != nil:
			db.healthySince.Store(0)
			if ctx.Err() == nil {
				db.log.Error("lease renewal failed", "error", err)
			}
		case db.healthySince.Load() == 0:
			db.healthySince.Store(time.Now().UnixNano())
		}
	}
}

// background runs the periodic work until ctx ends.
func (db *DB) background(ctx context.Context) {
	defer db.wg.Done()
	reap := time.NewTicker(db.opts.ReapInterval)
	clean := time.NewTicker(db.opts.CleanupInterval)
	poll := time.NewTicker(db.opts.CancelPollInterval)
	defer reap.Stop()
	defer clean.Stop()
	defer poll.Stop()
	for {
		var work func(context.Context) error
		select {
		case <-ctx.Done():
			return
		case <-reap.C:
			// After this replica lost the database, the others' leases look
			// stale until they too have reconnected and renewed them: reap
			// only once our own heartbeats have succeeded for a lease TTL.
			since := db.healthySince.Load()
			if since == 0 || time.Since(time.Unix(0, since)) < db.opts.LeaseTTL {
				continue
			}
			work = func(ctx context.Context) error { _, err := db.ReapExpired(ctx); return err }
		case <-clean.C:
			work = func(ctx context.Context) error { _, err := db.DeleteExpired(ctx); return err }
		case <-poll.C:
			work = db.takeRequests
		case <-db.wake:
			work = db.takeRequests
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := work(wctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			db.log.Error("background task store work failed", "error", err)
		}
	}
}
