package postgres

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// slowAgent starts a turn, reports WORKING, then waits for its context to end
// (a long tool call that emits nothing), so that only a cancel signal — not a
// store write — can stop it.
type slowAgent struct {
	release chan struct{} // closed at the end of the test: stop waiting
	mu      sync.Mutex
	started map[a2a.TaskID]chan struct{}
	stopped map[a2a.TaskID]chan struct{}
}

func newSlowAgent() *slowAgent {
	return &slowAgent{release: make(chan struct{}), started: map[a2a.TaskID]chan struct{}{}, stopped: map[a2a.TaskID]chan struct{}{}}
}

func (a *slowAgent) chans(id a2a.TaskID) (started, stopped chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started[id] == nil {
		a.started[id] = make(chan struct{})
		a.stopped[id] = make(chan struct{})
	}
	return a.started[id], a.stopped[id]
}

func (a *slowAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		started, stopped := a.chans(ec.TaskID)
		defer close(stopped)
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		close(started)
		select {
		case <-ctx.Done():
		case <-a.release:
		}
	}
}

func (a *slowAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewDataPart(map[string]any{"type": "turn.finished", "status": "cancelled"}))
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, msg), nil)
	}
}

// userFromHeader plays the vessel's auth interceptor: the caller is X-Vessel-User.
type userFromHeader struct {
	a2asrv.PassthroughCallInterceptor
}

func (userFromHeader) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	if v, ok := cc.ServiceParams().Get("X-Vessel-User"); ok && len(v) > 0 {
		cc.User = a2asrv.NewAuthenticatedUser(v[0], nil)
	}
	return ctx, nil, nil
}

type replica struct {
	db    *DB
	agent *slowAgent
	srv   *httptest.Server
}

func startReplica(t *testing.T, dsn, schema string) *replica {
	return startReplicaWith(t, dsn, schema, true, nil)
}

// startReplicaWith starts a replica; wrap=false leaves its handler unwrapped,
// so it never answers cancel requests forwarded by other replicas.
func startReplicaWith(t *testing.T, dsn, schema string, wrap bool, mod func(*Options)) *replica {
	t.Helper()
	db := openTest(t, dsn, schema, mod)
	agent := newSlowAgent()
	t.Cleanup(func() { close(agent.release) })
	h := a2asrv.NewHandler(agent,
		a2asrv.WithTaskStore(db.Agent("alpha")),
		a2asrv.WithCallInterceptors(userFromHeader{}))
	if wrap {
		h = db.WrapHandler("alpha", h)
	}
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(h))
	t.Cleanup(srv.Close)
	return &replica{db: db, agent: agent, srv: srv}
}

func (r *replica) client(t *testing.T) *a2aclient.Client {
	t.Helper()
	cl, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(r.srv.URL, a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(&http.Client{}))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func userCtx(t *testing.T, user string) context.Context {
	// The deadline only bounds a broken test; nothing asserts on elapsed time.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{"X-Vessel-User": {user}})
}

// startTurn streams a turn on r and returns its task id once it is working,
// and a channel with the final state the stream ends in.
func startTurn(t *testing.T, ctx context.Context, r *replica) (a2a.TaskID, <-chan a2a.TaskState) {
	t.Helper()
	ids := make(chan a2a.TaskID, 1)
	final := make(chan a2a.TaskState, 1)
	go func() {
		var last a2a.TaskState
		for ev, err := range r.client(t).SendStreamingMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("run a long tool")),
		}) {
			if err != nil {
				break
			}
			switch v := ev.(type) {
			case *a2a.Task:
				last = v.Status.State
				select {
				case ids <- v.ID:
				default:
				}
			case *a2a.TaskStatusUpdateEvent:
				last = v.Status.State
			}
		}
		final <- last
	}()
	var id a2a.TaskID
	select {
	case id = <-ids:
	case <-ctx.Done():
		t.Fatal("turn did not start")
	}
	started, _ := r.agent.chans(id)
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("turn did not reach working")
	}
	return id, final
}

func TestCancelOnOtherReplicaStopsTheTurn(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startReplica(t, dsn, schema)
	b := startReplica(t, dsn, schema)
	alice := userCtx(t, "alice")

	id, finalOnA := startTurn(t, alice, a)

	// B reads the shared store.
	got, err := b.client(t).GetTask(alice, &a2a.GetTaskRequest{ID: id})
	// The working update may still be on its way to the store.
	if err != nil || got.Status.State.Terminal() {
		t.Fatalf("GetTask on B = %v, %v; want a running task", got, err)
	}

	// B follows the task running on A.
	subscribed := make(chan a2a.TaskState, 1)
	firstFrame := make(chan struct{})
	go func() {
		var last a2a.TaskState
		once := sync.Once{}
		for ev, err := range b.client(t).SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: id}) {
			if err != nil {
				break
			}
			if task, ok := ev.(*a2a.Task); ok {
				last = task.Status.State
				once.Do(func() { close(firstFrame) })
			}
		}
		subscribed <- last
	}()
	select {
	case <-firstFrame:
	case <-alice.Done():
		t.Fatal("no snapshot from SubscribeToTask on B")
	}

	// Bob may not cancel alice's task through B.
	if _, err := b.client(t).CancelTask(userCtx(t, "bob"), &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob's CancelTask: got %v, want ErrTaskNotFound", err)
	}

	// Alice cancels through B; the agent on A emits nothing while it waits, so
	// only the forwarded signal can stop it.
	task, err := b.client(t).CancelTask(alice, &a2a.CancelTaskRequest{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on B = %v, %v; want canceled", task, err)
	}
	_, stopped := a.agent.chans(id)
	select {
	case <-stopped:
	case <-alice.Done():
		t.Fatal("the turn on A kept running after the cancel")
	}
	if st := <-finalOnA; st != a2a.TaskStateCanceled {
		t.Fatalf("stream on A ended in %s, want canceled", st)
	}
	if st := <-subscribed; st != a2a.TaskStateCanceled {
		t.Fatalf("subscription on B ended in %s, want canceled", st)
	}
	// The canceled state was written by A's own cancel path (its final event).
	stored, err := b.db.Agent("alpha").Get(as("alice"), id)
	if err != nil || stored.Task.Status.Message == nil {
		t.Fatalf("stored task = %v, %v; want a status message", stored, err)
	}
	if d, _ := stored.Task.Status.Message.Parts[0].Data().(map[string]any); d["status"] != "cancelled" {
		t.Fatalf("final status message = %+v, want turn.finished cancelled", stored.Task.Status.Message)
	}
}

func TestReplicaDeathEndsRemoteSubscription(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startReplica(t, dsn, schema)
	b := startReplica(t, dsn, schema)
	alice := userCtx(t, "alice")

	id, _ := startTurn(t, alice, a)

	subscribed := make(chan a2a.TaskState, 1)
	firstFrame := make(chan struct{})
	go func() {
		var last a2a.TaskState
		once := sync.Once{}
		for ev, err := range b.client(t).SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: id}) {
			if err != nil {
				break
			}
			if task, ok := ev.(*a2a.Task); ok {
				last = task.Status.State
				once.Do(func() { close(firstFrame) })
			}
		}
		subscribed <- last
	}()
	select {
	case <-firstFrame:
	case <-alice.Done():
		t.Fatal("no snapshot from SubscribeToTask on B")
	}

	// A dies: its lease stops being renewed. B's periodic reaper fails the
	// task and the subscription on B ends instead of waiting forever.
	a.db.Abandon()
	expireLease(t, b.db, a.db.ReplicaID())
	select {
	case st := <-subscribed:
		if st != a2a.TaskStateFailed {
			t.Fatalf("subscription ended in %s, want failed", st)
		}
	case <-alice.Done():
		t.Fatal("subscription on B never ended after A died")
	}
}

func TestCancelWhenRunningReplicaDoesNotAnswer(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := startReplicaWith(t, dsn, schema, false, nil) // never takes forwarded cancels
	b := startReplicaWith(t, dsn, schema, true, func(o *Options) { o.CancelWait = 300 * time.Millisecond })
	alice := userCtx(t, "alice")

	id, _ := startTurn(t, alice, a)
	// B waits for A in vain, then cancels the task in the table itself.
	task, err := b.client(t).CancelTask(alice, &a2a.CancelTaskRequest{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on B = %v, %v; want canceled", task, err)
	}
	got, err := b.client(t).GetTask(alice, &a2a.GetTaskRequest{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask on B = %v, %v; want canceled", got, err)
	}
}
