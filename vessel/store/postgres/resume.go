package postgres

// A message on a task that waits (input-required, an approval) on another
// replica is forwarded there: the paused turn lives in that replica's
// memory. The caller's replica (which already authenticated the caller,
// bound the owner and checked the decision in its interceptor) writes a
// resume request and wakes the holding replica, which runs the message
// through its own handler as the task's owner, exactly as if it had come
// there: with the agent's CallCarrier, the caller's call travels with the
// message (who called, with which tools and added approvals) and the
// message goes through the holding replica's interceptors. A SendMessage
// gets the answer the holding replica's SendMessage gave (transcript and
// files included), written back into the request's row; a stream follows
// the task's live events.

import (
	"context"
	"crypto/rand"
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

// SendMessage forwards a message on a task paused elsewhere and returns the
// answer the holding replica gave.
func (h *replicaHandler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	p, ok := h.pausedElsewhere(ctx, req)
	if !ok {
		return h.RequestHandler.SendMessage(ctx, req)
	}
	f, err := h.forward(ctx, req, p.replica, true)
	if err != nil {
		return nil, err
	}
	return h.awaitResult(ctx, f)
}

// SendStreamingMessage forwards a message on a task paused elsewhere and
// follows the resumed turn.
func (h *replicaHandler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	p, ok := h.pausedElsewhere(ctx, req)
	if !ok {
		return h.RequestHandler.SendStreamingMessage(ctx, req)
	}
	return func(yield func(a2a.Event, error) bool) {
		f, err := h.forward(ctx, req, p.replica, false)
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range h.store.follow(ctx, f.task, f.version) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// forwarding is one message forwarded to the replica holding its task.
type forwarding struct {
	id      string // forward_id: this forwarding's row
	task    a2a.TaskID
	version int64 // the task's version before the resumed turn's first write
}

// forward writes the resume request, with the caller's call when the agent
// has a CallCarrier, and waits until the holding replica has taken it (or
// refused it). A stream's request is deleted once the holding replica's
// handler took the message; a SendMessage's stays for its result
// (awaitResult).
func (h *replicaHandler) forward(ctx context.Context, req *a2a.SendMessageRequest, replica string, wantResult bool) (forwarding, error) {
	owner := ownerFrom(ctx)
	id := req.Message.TaskID
	st, _, err := h.store.followed(ctx, id)
	if err != nil {
		return forwarding{}, err
	}
	f := forwarding{id: rand.Text(), task: id, version: int64(st.Version)}
	body, err := json.Marshal(req)
	if err != nil {
		return forwarding{}, fmt.Errorf("forward message: %w", err)
	}
	var call []byte
	if c := h.db.carrier(h.store.agent); c != nil {
		if call, err = c.Capture(ctx); err != nil {
			return forwarding{}, fmt.Errorf("forward message: the caller's call: %w", err)
		}
	}
	err = pgx.BeginFunc(ctx, h.db.pool, func(tx pgx.Tx) error {
		// A row whose answer or error nobody read (its sender went away)
		// does not block the next decision.
		tag, err := tx.Exec(ctx, `
			INSERT INTO vessel_resume_requests (agent_id, task_id, replica_id, owner, request, forward_id, call, want_result)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (agent_id, task_id) DO UPDATE SET replica_id = EXCLUDED.replica_id, owner = EXCLUDED.owner,
				request = EXCLUDED.request, forward_id = EXCLUDED.forward_id, call = EXCLUDED.call,
				want_result = EXCLUDED.want_result, taken = false, error = NULL, result = NULL, requested_at = now()
			WHERE vessel_resume_requests.result IS NOT NULL OR vessel_resume_requests.error IS NOT NULL`,
			h.store.agent, string(id), replica, owner, body, f.id, call, wantResult)
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
		return forwarding{}, a2a.NewError(a2a.ErrInvalidParams, "another decision on this task is being delivered; read the task with GetTask")
	}
	if err != nil {
		return forwarding{}, fmt.Errorf("postgres task store: forward message on %s: %w", id, err)
	}
	wctx, cancel := context.WithTimeout(ctx, resumeWait)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		var taken bool
		var msg *string
		err := h.db.pool.QueryRow(wctx, `SELECT taken, error FROM vessel_resume_requests WHERE agent_id = $1 AND task_id = $2 AND forward_id = $3`,
			h.store.agent, string(id), f.id).Scan(&taken, &msg)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return f, nil // taken and run
		case err != nil:
			h.clearResume(f)
			return forwarding{}, fmt.Errorf("postgres task store: forwarded message on %s: %w", id, err)
		case msg != nil:
			h.clearResume(f)
			return forwarding{}, a2a.NewError(a2a.ErrInvalidParams, *msg)
		case taken && wantResult:
			return f, nil // awaitResult reads the answer or the error
		case taken:
			// Taken: wait (about a second) for the holding replica to say
			// whether its handler took the message or refused it.
		}
		select {
		case <-wctx.Done():
			h.clearResume(f)
			return forwarding{}, a2a.NewError(a2a.ErrInternalError, "the replica holding the paused task did not take the message in time; try again")
		case <-t.C:
		}
	}
}

// resultGrace is how long the sender of a forwarded SendMessage waits for
// the holding replica's answer once the store shows the turn ended or
// paused again; past it (the holding replica died) it answers with the
// stored task.
const resultGrace = 5 * time.Second

// awaitResult waits for the holding replica's answer to a forwarded
// SendMessage: the task as it would have answered it (transcript and files
// included), or the error its handler returned. The caller's ctx bounds the
// wait as it bounds a local SendMessage.
func (h *replicaHandler) awaitResult(ctx context.Context, f forwarding) (a2a.SendMessageResult, error) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	var ended time.Time
	for {
		var msg *string
		var result []byte
		err := h.db.pool.QueryRow(ctx, `SELECT error, result FROM vessel_resume_requests WHERE agent_id = $1 AND task_id = $2 AND forward_id = $3`,
			h.store.agent, string(f.task), f.id).Scan(&msg, &result)
		gone := errors.Is(err, pgx.ErrNoRows)
		switch {
		case gone:
			// A holding replica that writes no answers deleted the row:
			// answer from the store below.
		case err != nil && ctx.Err() == nil:
			h.clearResume(f)
			return nil, fmt.Errorf("postgres task store: answer of the forwarded message on %s: %w", f.task, err)
		case err != nil:
		case msg != nil:
			h.clearResume(f)
			return nil, a2a.NewError(a2a.ErrInvalidParams, *msg)
		case result != nil:
			h.clearResume(f)
			var task a2a.Task
			if err := json.Unmarshal(result, &task); err != nil {
				return nil, fmt.Errorf("postgres task store: answer of the forwarded message on %s: %w", f.task, err)
			}
			return &task, nil
		}
		if ctx.Err() == nil {
			st, _, err := h.store.followed(ctx, f.task)
			if err != nil {
				h.clearResume(f)
				return nil, err
			}
			if int64(st.Version) > f.version && endsTurn(st.Task.Status.State) {
				if ended.IsZero() {
					ended = time.Now()
				}
				if gone || time.Since(ended) > resultGrace {
					h.clearResume(f)
					return st.Task, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			h.clearResume(f)
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

var errResumePending = errors.New("a resume request is pending")

// clearResume deletes this forwarding's request.
func (h *replicaHandler) clearResume(f forwarding) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = h.db.pool.Exec(ctx, `DELETE FROM vessel_resume_requests WHERE agent_id = $1 AND task_id = $2 AND forward_id = $3`,
		h.store.agent, string(f.task), f.id)
}

// resumeRequest is a forwarded message as the holding replica takes it.
type resumeRequest struct {
	agent, task, owner, forwardID string
	body, call                    []byte
	wantResult                    bool
	req                           *a2a.SendMessageRequest
}

// resumer runs a forwarded message on the replica holding its task.
type resumer func(ctx context.Context, r *resumeRequest) (*a2a.Task, error)

// resumeHere runs a forwarded message. With the caller's call carried, it
// goes through the intercepted handler as if the caller had sent it here
// (its tools, added approvals and output modes; the answer SendMessage
// gives); without, through the inner handler as the task's owner. An error
// the handler returns before the turn goes on (a refused decision) goes
// back to the sender.
func (h *replicaHandler) resumeHere(ctx context.Context, r *resumeRequest) (*a2a.Task, error) {
	if c := h.db.carrier(h.store.agent); c != nil && h.outer != nil && r.call != nil {
		cctx, end, err := c.Restore(ctx, r.call)
		if err != nil {
			return nil, fmt.Errorf("the caller's call could not be restored: %w", err)
		}
		defer end()
		res, err := h.outer.SendMessage(cctx, r.req)
		if err != nil {
			return nil, err
		}
		task, _ := res.(*a2a.Task)
		return task, nil
	}
	ctx, cc := a2asrv.NewCallContext(ctx, nil)
	cc.User = a2asrv.NewAuthenticatedUser(r.owner, nil)
	res, err := h.RequestHandler.SendMessage(ctx, r.req)
	if err != nil {
		return nil, err
	}
	task, _ := res.(*a2a.Task)
	return task, nil
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
		RETURNING agent_id, task_id, owner, request, forward_id, call, want_result`, db.opts.ReplicaID)
	if err != nil {
		return fmt.Errorf("postgres task store: take resume requests: %w", err)
	}
	var reqs []*resumeRequest
	for rows.Next() {
		r := &resumeRequest{}
		if err := rows.Scan(&r.agent, &r.task, &r.owner, &r.body, &r.forwardID, &r.call, &r.wantResult); err != nil {
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
			db.finishResume(r, nil, errors.New("the message could not be delivered to the replica holding the task"))
			continue
		}
		r.req = &req
		db.wg.Add(1)
		go func() {
			defer db.wg.Done()
			// The turn runs detached from this ctx (the SDK detaches it);
			// this bounds only the wait for SendMessage to return.
			rctx, cancel := context.WithTimeout(db.bg, forwardedCancelTimeout*30)
			defer cancel()
			type outcome struct {
				task *a2a.Task
				err  error
			}
			done := make(chan outcome, 1)
			go func() {
				t, err := resume(rctx, r)
				done <- outcome{t, err}
			}()
			if r.wantResult {
				// The sender waits for the answer SendMessage gives here.
				o := <-done
				db.finishResume(r, o.task, o.err)
				return
			}
			select {
			case o := <-done:
				db.finishResume(r, nil, o.err)
			case <-time.After(time.Second):
				// Still running after a second: the turn went on; the sender
				// follows it in the store.
				db.finishResume(r, nil, nil)
				<-done
			}
		}()
	}
	return nil
}

// finishResume answers a taken request: its error for the sender (who
// deletes the row), the answer of a SendMessage (task), or, for a stream,
// deletes it.
func (db *DB) finishResume(r *resumeRequest, task *a2a.Task, failed error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const where = ` WHERE agent_id = $1 AND task_id = $2 AND forward_id = $3`
	var err error
	switch {
	case failed != nil:
		_, err = db.pool.Exec(ctx, `UPDATE vessel_resume_requests SET error = $4`+where, r.agent, r.task, r.forwardID, failed.Error())
	case r.wantResult && task != nil:
		var body []byte
		if body, err = json.Marshal(task); err == nil {
			_, err = db.pool.Exec(ctx, `UPDATE vessel_resume_requests SET result = $4`+where, r.agent, r.task, r.forwardID, body)
		}
	default:
		// A stream's request, or an answer that is no task: the sender
		// answers from the store.
		_, err = db.pool.Exec(ctx, `DELETE FROM vessel_resume_requests`+where, r.agent, r.task, r.forwardID)
	}
	if err != nil {
		db.log.Warn("could not finish a forwarded message", "task", r.task, "error", err)
	}
}
