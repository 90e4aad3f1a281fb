package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/store/internal/sqldb"
)

var _ vstore.SelfFailures = (*DB)(nil)

// selfFailedClaim is how long a replica's claim on a mark keeps the other
// replicas off it: far longer than enqueueing a task's few deliveries, so
// only a replica that died mid-pass loses its claims to another.
const selfFailedClaim = time.Minute

// SelfFailed implements store.SelfFailures for the tasks the lease reaper
// failed (reap writes the marks). It claims up to limit marks, oldest
// first, skipping those another replica holds (FOR UPDATE SKIP LOCKED, then
// claimed_at), so each mark is taken by one replica; SelfFailedDone drops
// them. A mark whose task is gone, or no longer decodes, is dropped here.
func (db *DB) SelfFailed(ctx context.Context, limit int) ([]vstore.SelfFailed, error) {
	rows, err := db.pool.Query(ctx, `
		WITH claimed AS (
			UPDATE vessel_self_failed m SET claimed_at = now()
			WHERE (m.agent_id, m.task_id) IN (
				SELECT agent_id, task_id FROM vessel_self_failed
				WHERE claimed_at IS NULL OR claimed_at < now() - make_interval(secs => $2)
				ORDER BY created_at, agent_id, task_id
				LIMIT $1
				FOR UPDATE SKIP LOCKED)
			RETURNING m.agent_id, m.task_id, m.created_at)
		SELECT c.agent_id, c.task_id, t.task FROM claimed c
		LEFT JOIN vessel_tasks t ON t.agent_id = c.agent_id AND t.id = c.task_id
		ORDER BY c.created_at, c.agent_id, c.task_id`, limit, selfFailedClaim.Seconds())
	if err != nil {
		return nil, fmt.Errorf("postgres task store: claim self-failed tasks: %w", err)
	}
	marks, err := sqldb.Collect[vstore.SelfFailedMark](rows, vstore.ScanSelfFailedMark)
	if err != nil {
		return nil, fmt.Errorf("postgres task store: claim self-failed tasks: %w", err)
	}
	return vstore.ResolveSelfFailed(ctx, marks, db.log, db.SelfFailedDone)
}

// SelfFailedDone implements store.SelfFailures.
func (db *DB) SelfFailedDone(ctx context.Context, agent string, taskID a2a.TaskID) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM vessel_self_failed WHERE agent_id = $1 AND task_id = $2`, agent, string(taskID)); err != nil {
		return fmt.Errorf("postgres task store: drop self-failed mark of %s of %s: %w", taskID, agent, err)
	}
	return nil
}
