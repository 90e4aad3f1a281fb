package postgres

// A message on a task that waits (input-required, an approval) on another
// replica is forwarded there: the paused turn lives in that replica's
// memory. The caller's replica (which already authenticated the caller,
// bound the owner and checked the decision in its interceptor) writes a
// resume request and wakes the holding replica, which runs the message
// through its own handler as the task's owner, exactly as if it had come
// there. The caller's replica then answers from the store: SendMessage
// with the task once it leaves the paused version (final, or paused
// again), a stream by following the task's live events.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/jackc/pgx/v5"
)

// resumeWait bounds how long the caller's replica waits for the holding
// replica to take a forwarded message.
const resumeWait = 30 * time.Second

// pausedElsewhere is true when the message names a task that waits on
// another live replica.
func (h *replicaHandler) pausedElsewhere(ctx context.Context, req *a2a.SendMessageRequest) (taskPlacement, bool) {
	if req == nil || req.Message == nil || req.Message.TaskID == "" {
		return taskPlacement{}, false
	}
	p, err := h.store.placement(ctx, req.Message.TaskID)
	if err != nil || p.state != a2a.TaskStateInputRequired {
		return p, false
	}
	return p, p.runsElsewhere(h.db.opts.ReplicaID)
}

// SendMessage forwards a message on a task paused elsewhere.
func (h *replicaHandler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	p, ok := h.pausedElsewhere(ctx, req)
	if !ok {
		return h.RequestHandler.SendMessage(ctx, req)
	}
	version, err := h.forward(ctx, req, p.replica)
	if err != nil {
		return nil, err
	}
	// Wait for the turn to move on from the paused version and end or
	// pause again; the caller's ctx bounds the wait as it bounds a local
	// SendMessage.
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		st, _, err := h.store.followed(ctx, req.Message.TaskID)
		if err != nil {
			return nil, err
		}
		if int64(st.Version) > version && endsTurn(st.Task.Status.State) {
			return st.Task, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// SendStreamingMessage forwards a message on a task paused elsewhere and
// follows the resumed turn.
func (h *replicaHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	p, ok := h.pausedElsewhere(ctx, req)
	if !ok {
		return h.RequestHandler.SendStreamingMessage(ctx, req)
	}
	return func(yield func(a2a.Event, error) bool) {
		version, err := h.forward(ctx, req, p.replica)
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range h.store.follow(ctx, req.Message.TaskID, version) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// forward writes the resume request, waits until the holding replica has
// taken it (or refused it), and returns the task's version before the
// resumed turn's first write.
func (h *replicaHandler) forward(ctx context.Context, req *a2a.SendMessageRequest, replica string) (int64, error) {
	owner := ownerFrom(ctx)
	st, _, err := h.store.followed(ctx, req.Message.TaskID)
	if err != nil {
		return 0, err
	}
	version := int64(st.Version)
	body, err := json.Marshal(req)
	if err != nil {
		return 0, fmt.Errorf("forward message: %w", err)
	}
	id := req.Message.TaskID
	err = pgx.BeginFunc(ctx, h.db.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			INSERT INTO vessel_resume_requests (agent_id, task_id, replica_id, owner, request) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (agent_id, task_id) DO NOTHING`, h.store.agent, string(id), replica, owner, body)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return errResumePending
		}
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, cancelChannel, replica)
		return err
	})
	if errors.Is(err, errResumePending) {
		return 0, a2a.NewError(a2a.ErrInvalidParams, "another decision on this task is being delivered; read the task with GetTask")
	}
	if err != nil {
		return 0, fmt.Errorf("postgres task store: forward message on %s: %w", id, err)
	}
	wctx, cancel := context.WithTimeout(ctx, resumeWait)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		var taken bool
		var msg *string
		err := h.db.pool.QueryRow(wctx, `SELECT taken, error FROM vessel_resume_requests WHERE agent_id = $1 AND task_id = $2`,
			h.store.agent, string(id)).Scan(&taken, &msg)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return version, nil // taken and run
		case err != nil:
			h.clearResume(id)
			return 0, fmt.Errorf("postgres task store: forwarded message on %s: %w", id, err)
		case msg != nil:
			h.clearResume(id)
			return 0, a2a.NewError(a2a.ErrInvalidParams, *msg)
		case taken:
			// Taken: wait (about a second) for the holding replica to say
			// whether its handler took the message or refused it.
		}
		select {
		case <-wctx.Done():
			h.clearResume(id)
			return 0, a2a.NewError(a2a.ErrInternalError, "the replica holding the paused task did not take the message in time; try again")
		case <-t.C:
		}
	}
}

var errResumePending = errors.New("a resume request is pending")

func (h *replicaHandler) clearResume(id a2a.TaskID) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = h.db.pool.Exec(ctx, `DELETE FROM vessel_resume_requests WHERE agent_id = $1 AND task_id = $2`, h.store.agent, string(id))
}

// resumeHere runs a forwarded message as the task's owner. An error the
// handler returns before the turn goes on (a refused decision) goes back
// to the sender.
func (h *replicaHandler) resumeHere(ctx context.Context, req *a2a.SendMessageRequest, owner string) error {
	ctx, cc := a2asrv.NewCallContext(ctx, nil)
	cc.User = a2asrv.NewAuthenticatedUser(owner, nil)
	_, err := h.RequestHandler.SendMessage(ctx, req)
	return err
}

// takeRequests claims this replica's cancel and resume requests.
func (db *DB) takeRequests(ctx context.Context) error {
	return errors.Join(db.takeCancelRequests(ctx), db.takeResumeRequests(ctx))
}

// takeResumeRequests claims this replica's forwarded messages (taken =
// true is the claim) and runs each apart.
func (db *DB) takeResumeRequests(ctx context.Context) error {
	rows, err := db.pool.Query(ctx, `
		UPDATE vessel_resume_requests SET taken = true WHERE replica_id = $1 AND NOT taken
		RETURNING agent_id, task_id, owner, request`, db.opts.ReplicaID)
	if err != nil {
		return fmt.Errorf("postgres task store: take resume requests: %w", err)
	}
	type request struct {
		agent, task, owner string
		body               []byte
	}
	var reqs []request
	for rows.Next() {
		var r request
		if err := rows.Scan(&r.agent, &r.task, &r.owner, &r.body); err != nil {
			rows.Close()
			return fmt.Errorf("postgres task store: take resume requests: %w", err)
		}
		reqs = append(reqs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres task store: take resume requests: %w", err)
	}
	for _, r := range reqs {
		db.mu.Lock()
		resume := db.resumers[r.agent]
		db.mu.Unlock()
		var req a2a.SendMessageRequest
		if resume == nil || json.Unmarshal(r.body, &req) != nil || req.Message == nil {
			db.finishResume(r.agent, r.task, "the message could not be delivered to the replica holding the task")
			continue
		}
		db.wg.Add(1)
		go func() {
			defer db.wg.Done()
			// The turn runs detached from this ctx (the SDK detaches it);
			// this bounds only the wait for SendMessage to return.
			rctx, cancel := context.WithTimeout(db.bg, forwardedCancelTimeout*30)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- resume(rctx, &req, r.owner) }()
			select {
			case err := <-done:
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				db.finishResume(r.agent, r.task, msg)
			case <-time.After(time.Second):
				// Still running after a second: the turn went on; the sender
				// follows it in the store.
				db.finishResume(r.agent, r.task, "")
				<-done
			}
		}()
	}
	return nil
}

// finishResume deletes a taken request, or records its error for the
// sender (who deletes it).
func (db *DB) finishResume(agent, task, msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	if msg == "" {
		_, err = db.pool.Exec(ctx, `DELETE FROM vessel_resume_requests WHERE agent_id = $1 AND task_id = $2`, agent, task)
	} else {
		_, err = db.pool.Exec(ctx, `UPDATE vessel_resume_requests SET error = $3 WHERE agent_id = $1 AND task_id = $2`, agent, task, msg)
	}
	if err != nil {
		db.log.Warn("could not finish a forwarded message", "task", task, "error", err)
	}
}
