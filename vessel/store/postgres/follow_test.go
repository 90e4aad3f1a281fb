package postgres

import (
	"context"
	"iter"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// stepAgent starts a turn, reports WORKING, then emits one working status
// update (a text piece) per string the test sends on its step channel, and
// completes when the test closes it.
type stepAgent struct {
	mu    sync.Mutex
	steps map[a2a.TaskID]chan string
	start chan a2a.TaskID // a turn reached WORKING
}

func newStepAgent() *stepAgent {
	return &stepAgent{steps: map[a2a.TaskID]chan string{}, start: make(chan a2a.TaskID, 8)}
}

func (a *stepAgent) stepsOf(id a2a.TaskID) chan string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.steps[id] == nil {
		a.steps[id] = make(chan string)
	}
	return a.steps[id]
}

func (a *stepAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		steps := a.stepsOf(ec.TaskID)
		if ec.StoredTask == nil && !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		a.start <- ec.TaskID
		for {
			select {
			case <-ctx.Done():
				return
			case text, ok := <-steps:
				if !ok {
					msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart("done"))
					yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, msg), nil)
					return
				}
				msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(text))
				if !yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, msg), nil) {
					return
				}
			}
		}
	}
}

func (a *stepAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// startStepReplica starts a wrapped replica running a stepAgent.
func startStepReplica(t *testing.T, dsn, schema string) (*replica, *stepAgent) {
	t.Helper()
	db := openTest(t, dsn, schema, func(o *Options) {
		o.FollowAnnounce = 200 * time.Millisecond
		o.FollowGrace = 20 * time.Second // only a hang guard: the live end marker comes first
	})
	agent := newStepAgent()
	h := db.WrapHandler("alpha", a2asrv.NewHandler(agent,
		a2asrv.WithTaskStore(db.Agent("alpha")),
		a2asrv.WithCallInterceptors(userFromHeader{})))
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(h))
	t.Cleanup(srv.Close)
	return &replica{db: db, srv: srv}, agent
}

// waitFor polls cond until it holds; ctx only guards against a hang.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting until %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// runStepTurn starts a streaming turn on r and returns its id once the task
// is stored and the agent is working; the returned channel closes when the
// stream on r ends.
func runStepTurn(t *testing.T, ctx context.Context, r *replica, agent *stepAgent) (a2a.TaskID, <-chan struct{}) {
	t.Helper()
	done := make(chan struct{})
	stored := make(chan a2a.TaskID, 1)
	go func() {
		defer close(done)
		for ev, err := range r.client(t).SendStreamingMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("stream some pieces")),
		}) {
			if err != nil {
				return
			}
			if task, ok := ev.(*a2a.Task); ok {
				select {
				case stored <- task.ID:
				default:
				}
			}
		}
	}()
	var id a2a.TaskID
	select {
	case id = <-stored:
	case <-ctx.Done():
		t.Fatal("turn did not start")
	}
	select {
	case working := <-agent.start:
		if working != id {
			t.Fatalf("agent started %s, want %s", working, id)
		}
	case <-ctx.Done():
		t.Fatal("turn did not reach working")
	}
	return id, done
}

// subscribeFrames runs SubscribeToTask on r and sends every frame on the
// returned channel, which closes when the stream ends.
func subscribeFrames(t *testing.T, ctx context.Context, r *replica, id a2a.TaskID) <-chan a2a.Event {
	t.Helper()
	frames := make(chan a2a.Event, 64)
	go func() {
		defer close(frames)
		for ev, err := range r.client(t).SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
			if err != nil {
				t.Errorf("SubscribeToTask: %v", err)
				return
			}
			frames <- ev
		}
	}()
	return frames
}

func pieceText(ev a2a.Event) (string, bool) {
	up, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || up.Status.State != a2a.TaskStateWorking || up.Status.Message == nil || len(up.Status.Message.Parts) == 0 {
		return "", false
	}
	return up.Status.Message.Parts[0].Text(), true
}

// followLive sets up two replicas, a turn on A and a subscription on B that
// A knows about, and returns what the test needs to drive and observe it.
func followLive(t *testing.T) (a *replica, steps chan string, frames <-chan a2a.Event, ctx context.Context) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a, agentA := startStepReplica(t, dsn, schema)
	b, _ := startStepReplica(t, dsn, schema)
	ctx = userCtx(t, "alice")
	waitFor(t, ctx, "B listens", b.db.listening.Load)

	id, _ := runStepTurn(t, ctx, a, agentA)
	frames = subscribeFrames(t, ctx, b, id)
	select {
	case ev, ok := <-frames:
		if task, isTask := ev.(*a2a.Task); !ok || !isTask || task.ID != id {
			t.Fatalf("first frame on B = %#v, want the task snapshot", ev)
		}
	case <-ctx.Done():
		t.Fatal("no snapshot from SubscribeToTask on B")
	}
	waitFor(t, ctx, "A publishes the task's events", func() bool { return a.db.isFollowed("alpha", id) })
	return a, agentA.stepsOf(id), frames, ctx
}

// collect reads frames until the stream ends: the working pieces, in order,
// whether the live COMPLETED update came, and the last frame.
func collect(t *testing.T, ctx context.Context, frames <-chan a2a.Event) (pieces []string, liveEnd bool, last a2a.Event) {
	t.Helper()
	for {
		select {
		case ev, ok := <-frames:
			if !ok {
				return pieces, liveEnd, last
			}
			last = ev
			if text, ok := pieceText(ev); ok {
				pieces = append(pieces, text)
			}
			if up, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && up.Status.State == a2a.TaskStateCompleted {
				liveEnd = true
			}
		case <-ctx.Done():
			t.Fatal("subscription on B did not end")
		}
	}
}

func wantFinalTask(t *testing.T, last a2a.Event) {
	t.Helper()
	task, ok := last.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("last frame on B = %#v, want the completed task", last)
	}
}

func TestRemoteSubscriberGetsLiveEvents(t *testing.T) {
	a, steps, frames, ctx := followLive(t)

	want := []string{"piece 1", "piece 2", "piece 3", "piece 4", "piece 5"}
	for _, p := range want {
		steps <- p
	}
	close(steps)

	pieces, liveEnd, last := collect(t, ctx, frames)
	if strings.Join(pieces, "|") != strings.Join(want, "|") {
		t.Fatalf("pieces on B = %q, want %q", pieces, want)
	}
	if !liveEnd {
		t.Fatal("B did not get the live completed update")
	}
	wantFinalTask(t, last)
	// The turn's first WORKING update may be stored (and so published) after
	// the announcement landed: count at least the pieces and the end. A
	// counts a NOTIFY once it returns, which may be after B has it.
	waitFor(t, ctx, "A counts what it published", func() bool { return a.db.FollowStats().Published >= int64(len(want)+1) })
	if st := a.db.FollowStats(); st.Published < int64(len(want)+1) || st.Dropped != 0 || st.Oversize != 0 || st.Failed != 0 {
		t.Fatalf("A's follow stats = %+v, want %d or more published and nothing lost", st, len(want)+1)
	}
}

func TestRemoteSubscriberSkipsOversizeEvent(t *testing.T) {
	a, steps, frames, ctx := followLive(t)

	steps <- "before"
	steps <- strings.Repeat("x", 2*notifyLimit)
	steps <- "after"
	close(steps)

	pieces, _, last := collect(t, ctx, frames)
	if strings.Join(pieces, "|") != "before|after" {
		t.Fatalf("pieces on B = %q, want [before after]", pieces)
	}
	wantFinalTask(t, last)
	if st := a.db.FollowStats(); st.Oversize != 1 {
		t.Fatalf("A's follow stats = %+v, want one oversize event", st)
	}
}

func TestUnfollowedTaskPublishesNothing(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a, agentA := startStepReplica(t, dsn, schema)
	ctx := userCtx(t, "alice")

	id, done := runStepTurn(t, ctx, a, agentA)
	steps := agentA.stepsOf(id)
	for _, p := range []string{"one", "two", "three"} {
		steps <- p
	}
	close(steps)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("turn on A did not end")
	}
	if got, err := a.client(t).GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask = %v, %v; want completed", got, err)
	}
	if a.db.isFollowed("alpha", id) || a.db.nFollowed.Load() != 0 {
		t.Fatal("A thinks the task is followed")
	}
	if st := a.db.FollowStats(); st != (FollowStats{}) {
		t.Fatalf("A's follow stats = %+v, want nothing published", st)
	}
}

// Another owner's SubscribeToTask on B for a turn on A answers "task not
// found", and A is never asked to publish that task's events.
func TestRemoteSubscriberOfAnotherOwnerGetsNothing(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a, agentA := startStepReplica(t, dsn, schema)
	b, _ := startStepReplica(t, dsn, schema)
	alice := userCtx(t, "alice")
	waitFor(t, alice, "B listens", b.db.listening.Load)
	id, done := runStepTurn(t, alice, a, agentA)

	mallory := userCtx(t, "mallory")
	var frames int
	var gotErr error
	for _, err := range b.client(t).SubscribeToTask(mallory, &a2a.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			gotErr = err
			break
		}
		frames++
	}
	if frames != 0 || gotErr == nil || !strings.Contains(gotErr.Error(), "not found") {
		t.Fatalf("another owner's subscription on B: %d frames, error %v; want task not found", frames, gotErr)
	}
	// Alice's turn goes on, and no follow request reached A for it.
	steps := agentA.stepsOf(id)
	steps <- "still private"
	close(steps)
	select {
	case <-done:
	case <-alice.Done():
		t.Fatal("alice's turn did not finish")
	}
	if a.db.isFollowed("alpha", id) {
		t.Fatal("A publishes events of a task only another owner asked to follow")
	}
}
