package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/jackc/pgx/v5"

	vstore "github.com/astraldeep/astralvessel-go/vessel/store"
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
//   - SubscribeToTask: served by Follow, which asks the running replica for
//     the task's live events (over NOTIFY) and also polls the stored snapshot,
//     sending a `task` frame whenever its version changes, until a final
//     state. The stored task is stripped (no streamed pieces), so the live
//     events are what carries the text pieces; the snapshot carries the
//     states and the answer even when a live event is lost. A task whose
//     replica died is failed by the lease reaper, which ends the stream.

// WrapHandler makes an agent's handler replica-aware. Given the handler that
// a2asrv.NewHandler returned, it replaces the inner handler behind the call
// interceptors (so the caller is authenticated before the wrapper runs) and
// returns the same handler. Any other handler is wrapped as a whole.
func (db *DB) WrapHandler(agentID string, h a2asrv.RequestHandler) a2asrv.RequestHandler {
	if ih, ok := h.(*a2asrv.InterceptedHandler); ok {
		ih.Handler = db.replicated(agentID, ih.Handler, ih)
		return ih
	}
	return db.Replicated(agentID, h)
}

// Replicated wraps the handler that runs an agent's turns on this replica,
// and registers it to receive cancel requests sent by other replicas.
func (db *DB) Replicated(agentID string, inner a2asrv.RequestHandler) a2asrv.RequestHandler {
	return db.replicated(agentID, inner, nil)
}

// replicated is Replicated; outer, when not nil, is the intercepted handler
// around it, which forwarded messages go through when the agent has a
// CallCarrier.
func (db *DB) replicated(agentID string, inner, outer a2asrv.RequestHandler) *replicaHandler {
	h := &replicaHandler{RequestHandler: inner, outer: outer, db: db, store: db.agentStore(agentID)}
	db.mu.Lock()
	db.cancelers[agentID] = h.cancelHere
	db.resumers[agentID] = h.resumeHere
	db.mu.Unlock()
	return h
}

// CarryCalls implements store.CallCarrying: forwarded messages of agentID
// carry their caller's call with c.
func (db *DB) CarryCalls(agentID string, c vstore.CallCarrier) {
	db.mu.Lock()
	db.carriers[agentID] = c
	db.mu.Unlock()
}

func (db *DB) carrier(agentID string) vstore.CallCarrier {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.carriers[agentID]
}

type replicaHandler struct {
	a2asrv.RequestHandler
	outer a2asrv.RequestHandler // the intercepted handler around this one, or nil
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

// Follow serves SubscribeToTask for a task that runs on another replica. Its
// first event is the current stored snapshot. It then yields the live events
// the running replica publishes for the task (follow.go), in their order, and
// the stored task again each time its version changes, ending after a final
// state (or an input-required/auth-required pause). The snapshot is the
// fallback: a live event that was dropped or never sent is only missing from
// the stream, and the final state always comes from the table. Once the
// stored task is final, the follower waits (up to FollowGrace) for the
// turn's last live events, which may trail the table write, so that the
// final task comes after them.
func (s *Store) Follow(ctx context.Context, id a2a.TaskID) iter.Seq2[a2a.Event, error] {
	return s.follow(ctx, id, -1)
}

// follow is Follow, passing over stored versions up to after (the paused
// version a forwarded decision resumes from).
func (s *Store) follow(ctx context.Context, id a2a.TaskID, after int64) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		f := s.db.addFollower(s.agent, id)
		defer s.db.removeFollower(f)
		poll := time.NewTicker(s.db.opts.SubscribePoll)
		defer poll.Stop()
		announce := time.NewTicker(s.db.opts.FollowAnnounce)
		defer announce.Stop()

		var (
			last      int64     = -1
			replica   string    // where the task runs, as last read
			liveEnded bool      // its last event for the turn arrived
			final     *a2a.Task // stored final task, held for the live end
			grace     <-chan time.Time
		)
		// snapshot reads the stored task; done means Follow should return.
		snapshot := func() (done bool) {
			st, where, err := s.followed(ctx, id)
			if err != nil {
				if ctx.Err() == nil {
					yield(nil, err)
				}
				return true
			}
			if where != replica {
				replica = where
				if replica != s.db.opts.ReplicaID {
					s.db.announce(ctx, replica, s.agent, id)
				}
			}
			if int64(st.Version) == last || int64(st.Version) <= after {
				return false
			}
			last = int64(st.Version)
			if !endsTurn(st.Task.Status.State) {
				return !yield(st.Task, nil)
			}
			// The running replica publishes the turn's events, its end
			// marker last, for as long as we announce: they may trail the
			// table write even when none has arrived yet (NOTIFY reaches
			// us on another connection), so the final task waits for the
			// end marker, up to FollowGrace.
			if liveEnded {
				yield(st.Task, nil)
				return true
			}
			final = st.Task
			if grace == nil {
				grace = time.After(s.db.opts.FollowGrace)
			}
			return false
		}
		if snapshot() {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case le := <-f.ch:
				if le.event != nil && !yield(le.event, nil) {
					return
				}
				if le.end {
					liveEnded = true
					if final != nil {
						yield(final, nil)
						return
					}
				}
			case <-poll.C:
				if snapshot() {
					return
				}
			case <-announce.C:
				if replica != "" && replica != s.db.opts.ReplicaID {
					s.db.announce(ctx, replica, s.agent, id)
				}
			case <-grace:
				yield(final, nil)
				return
			}
		}
	}
}

// followed reads the caller's stored task and the replica running it.
func (s *Store) followed(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, string, error) {
	var body []byte
	var v int64
	var replica string
	err := s.db.pool.QueryRow(ctx, `
		SELECT task, version, replica_id FROM vessel_tasks WHERE agent_id = $1 AND id = $2 AND owner = $3`,
		s.agent, string(id), ownerFrom(ctx)).Scan(&body, &v, &replica)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("get task %s: %w", id, err)
	}
	t, err := vstore.DecodeTask(body)
	if err != nil {
		return nil, "", fmt.Errorf("get task %s: %w", id, err)
	}
	return &taskstore.StoredTask{Task: t, Version: taskstore.TaskVersion(v)}, replica, nil
}
