package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"
)

// cancelChannel carries the id of the replica that has new cancel requests.
const cancelChannel = "vessel_cancel"

// forwardedCancelTimeout bounds a forwarded cancel run on this replica.
const forwardedCancelTimeout = time.Minute

// requestCancel records a cancel request for the replica running the task and
// wakes it. The NOTIFY is sent on commit, so the row is there when it lands.
func (db *DB) requestCancel(ctx context.Context, agentID string, taskID a2a.TaskID, replica string) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			INSERT INTO vessel_cancel_requests (agent_id, task_id, replica_id) VALUES ($1, $2, $3)
			ON CONFLICT (agent_id, task_id) DO UPDATE SET replica_id = EXCLUDED.replica_id, requested_at = now()`,
			agentID, string(taskID), replica); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, cancelChannel, replica)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres task store: request cancel of %s: %w", taskID, err)
	}
	return nil
}

// takeCancelRequests claims this replica's pending cancel requests and runs
// each through the agent's registered handler. Deleting the row is the claim,
// so a NOTIFY and a poll seeing the same request run it once.
func (db *DB) takeCancelRequests(ctx context.Context) error {
	rows, err := db.pool.Query(ctx, `
		DELETE FROM vessel_cancel_requests c WHERE replica_id = $1
		RETURNING c.agent_id, c.task_id,
		          (SELECT t.owner FROM vessel_tasks t WHERE t.agent_id = c.agent_id AND t.id = c.task_id)`,
		db.opts.ReplicaID)
	if err != nil {
		return fmt.Errorf("postgres task store: take cancel requests: %w", err)
	}
	type request struct {
		agent, task string
		owner       *string
	}
	var reqs []request
	for rows.Next() {
		var r request
		if err := rows.Scan(&r.agent, &r.task, &r.owner); err != nil {
			rows.Close()
			return fmt.Errorf("postgres task store: take cancel requests: %w", err)
		}
		reqs = append(reqs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres task store: take cancel requests: %w", err)
	}
	for _, r := range reqs {
		if r.owner == nil {
			continue // the task is gone
		}
		db.mu.Lock()
		cancelFn := db.cancelers[r.agent]
		db.mu.Unlock()
		if cancelFn == nil {
			db.log.Warn("cancel request for an agent not served here", "agent", r.agent, "task", r.task)
			continue
		}
		// A cancel waits for the turn to finish: run it apart so that one slow
		// turn does not hold up other cancels. It ends with the background
		// work (db.bg), so Close does not wait for it.
		db.wg.Add(1)
		go func(taskID a2a.TaskID, owner string) {
			defer db.wg.Done()
			cctx, cancel := context.WithTimeout(db.bg, forwardedCancelTimeout)
			defer cancel()
			cancelFn(cctx, taskID, owner)
		}(a2a.TaskID(r.task), *r.owner)
	}
	return nil
}

// listen holds one connection LISTENing for cancel requests aimed at this
// replica (it wakes the background loop), follow announcements and live
// events of followed tasks (follow.go). When the connection breaks it
// reconnects; the periodic poll covers the gap.
func (db *DB) listen(ctx context.Context) {
	defer db.wg.Done()
	for ctx.Err() == nil {
		err := db.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		db.log.Warn("cancel listener lost its connection; reconnecting", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	for _, ch := range []string{cancelChannel, followChannel, eventsChannel, workingChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+ch); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
	}
	db.listening.Store(true)
	defer db.listening.Store(false)
	// Requests made while no listener was connected.
	db.poke()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return fmt.Errorf("wait: %w", err)
		}
		switch n.Channel {
		case cancelChannel:
			if n.Payload == db.opts.ReplicaID {
				db.poke()
			}
		case followChannel:
			db.noteFollowed(n.Payload)
		case eventsChannel:
			db.deliver(n.Payload)
		case workingChannel:
			db.learnWorking(n.Payload)
		}
	}
}

// poke wakes the background loop without blocking.
func (db *DB) poke() {
	select {
	case db.wake <- struct{}{}:
	default:
	}
}
