package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/jackc/pgx/v5"
)

// With a2a-go in local mode every replica runs the turns it accepted; only
// the task table is shared. GetTask and ListTasks therefore work from any
// replica as they are. Two methods need help when the task runs elsewhere:
//
//   - CancelTask: the replica that got the call writes a cancel request for the
//     running replica (a row, then NOTIFY). That replica calls its own inner
//     handler's CancelTask, which is exactly the path of a local cancel (the
//     executor's Cancel runs in the running turn's pipe), so its model stream
//     and tool calls stop and its clients see the usual final events. The
//     forwarding replica waits (up to CancelWait) for the task to end, then
//     answers through its own inner handler, which returns the stored
//     CANCELED task — or cancels it in the store itself when the running
//     replica did not answer in time.
//   - SubscribeToTask: served by polling the stored snapshot and sending a
//     `task` frame whenever its version changes, until a final state. The
//     stored task is stripped (no streamed pieces), so a remote subscriber
//     sees status changes and the answer, not every text piece. A task whose
//     replica died is failed by the lease reaper, which ends the stream.

// WrapHandler makes an agent's handler replica-aware. Given the handler that
// a2asrv.NewHandler returned, it replaces the inner handler behind the call
// interceptors (so the caller is authenticated before the wrapper runs) and
// returns the same handler. Any other handler is wrapped as a whole.
func (db *DB) WrapHandler(agentID string, h a2asrv.RequestHandler) a2asrv.RequestHandler {
	if ih, ok := h.(*a2asrv.InterceptedHandler); ok {
		ih.Handler = db.Replicated(agentID, ih.Handler)
		return ih
	}
	return db.Replicated(agentID, h)
}

// Replicated wraps the handler that runs an agent's turns on this replica,
// and registers it to receive cancel requests sent by other replicas.
func (db *DB) Replicated(agentID string, inner a2asrv.RequestHandler) a2asrv.RequestHandler {
	h := &replicaHandler{RequestHandler: inner, db: db, store: db.agentStore(agentID)}
	db.mu.Lock()
	db.cancelers[agentID] = h.cancelHere
	db.mu.Unlock()
	return h
}

type replicaHandler struct {
	a2asrv.RequestHandler
	db    *DB
	store *Store
}

// taskPlacement says where a task runs, as far as the store knows.
type taskPlacement struct {
	state     a2a.TaskState
	replica   string
	leaseLive bool
}

// placement reads the caller's task's state and its replica's lease.
func (s *Store) placement(ctx context.Context, id a2a.TaskID) (taskPlacement, error) {
	var p taskPlacement
	var state string
	err := s.db.pool.QueryRow(ctx, `
		SELECT t.state, t.replica_id,
		       COALESCE(r.heartbeat_at > now() - make_interval(secs => $4), false)
		FROM vessel_tasks t LEFT JOIN vessel_replicas r ON r.id = t.replica_id
		WHERE t.agent_id = $1 AND t.id = $2 AND t.owner = $3`,
		s.agent, string(id), ownerFrom(ctx), s.db.opts.LeaseTTL.Seconds()).Scan(&state, &p.replica, &p.leaseLive)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, a2a.ErrTaskNotFound
	}
	if err != nil {
		return p, fmt.Errorf("locate task %s: %w", id, err)
	}
	p.state = a2a.TaskState(state)
	return p, nil
}

// runsElsewhere is true when another live replica is running the task.
func (p taskPlacement) runsElsewhere(self string) bool {
	return !p.state.Terminal() && p.replica != self && p.leaseLive
}

// CancelTask forwards the cancel to the running replica when that is not this
// one, then answers through the inner handler.
func (h *replicaHandler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if req != nil && req.ID != "" {
		p, err := h.store.placement(ctx, req.ID)
		if err == nil && p.runsElsewhere(h.db.opts.ReplicaID) {
			if err := h.db.requestCancel(ctx, h.store.agent, req.ID, p.replica); err != nil {
				h.db.log.Error("forward cancel", "task", req.ID, "error", err)
			} else {
				h.waitFinal(ctx, req.ID, h.db.opts.CancelWait)
			}
		}
	}
	return h.RequestHandler.CancelTask(ctx, req)
}

// waitFinal polls the store until the task is final or d passes.
func (h *replicaHandler) waitFinal(ctx context.Context, id a2a.TaskID, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		p, err := h.store.placement(ctx, id)
		if err != nil || p.state.Terminal() || !p.leaseLive {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// cancelHere runs a cancel request that another replica forwarded, as the
// task's owner, through the same path a local CancelTask takes.
func (h *replicaHandler) cancelHere(ctx context.Context, id a2a.TaskID, owner string) {
	ctx, cc := a2asrv.NewCallContext(ctx, nil)
	cc.User = a2asrv.NewAuthenticatedUser(owner, nil)
	if _, err := h.RequestHandler.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil &&
		!errors.Is(err, a2a.ErrTaskNotCancelable) {
		h.db.log.Warn("forwarded cancel failed", "task", id, "error", err)
	}
}

// SubscribeToTask serves a task running on another replica from the store;
// anything else goes to the inner handler.
func (h *replicaHandler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	if req == nil || req.ID == "" {
		return h.RequestHandler.SubscribeToTask(ctx, req)
	}
	p, err := h.store.placement(ctx, req.ID)
	if err != nil || p.state.Terminal() || p.replica == h.db.opts.ReplicaID {
		return h.RequestHandler.SubscribeToTask(ctx, req)
	}
	return h.store.Follow(ctx, req.ID)
}

// Follow yields the stored task each time its version changes, ending after
// a final state (or an input-required/auth-required pause). Its first event is
// the current snapshot.
func (s *Store) Follow(ctx context.Context, id a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t := time.NewTicker(s.db.opts.SubscribePoll)
		defer t.Stop()
		var last int64 = -1
		for {
			st, err := s.Get(ctx, id)
			if err != nil {
				yield(nil, err)
				return
			}
			if int64(st.Version) != last {
				last = int64(st.Version)
				if !yield(st.Task, nil) {
					return
				}
			}
			switch st.Task.Status.State {
			case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
				return
			}
			if st.Task.Status.State.Terminal() {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}
}
