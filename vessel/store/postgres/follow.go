package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Live events for remote subscribers. A replica serving SubscribeToTask for a
// task that runs elsewhere announces its interest (NOTIFY vessel_follow, with
// the running replica's id and the task), again every FollowAnnounce while it
// follows. The running replica keeps the announced tasks in memory for a few
// announce periods; only for those does it publish each event its turn emits
// (NOTIFY vessel_task_events), from a bounded queue drained by one goroutine,
// so that publishing never waits on the database inside the turn. Events are
// encoded with a2a-go's own stream encoding (a2a.StreamResponse). An event
// whose notification would exceed PostgreSQL's payload limit is skipped; the
// follower still gets the state and the answer from the stored snapshot, which
// it keeps polling.

const (
	// followChannel carries interest announcements (followAnnounce).
	followChannel = "vessel_follow"
	// eventsChannel carries the events of followed tasks (wireEvent).
	eventsChannel = "vessel_task_events"
	// notifyLimit is the largest payload sent; PostgreSQL refuses 8000
	// bytes and more.
	notifyLimit = 7999
	// publishQueue bounds the events waiting to be published.
	publishQueue = 512
	// followerBuffer bounds the live events waiting for one follower.
	followerBuffer = 256
	// publishTimeout bounds one NOTIFY of the publisher.
	publishTimeout = 5 * time.Second
)

type followKey struct {
	agent string
	task  a2a.TaskID
}

// followAnnounce is the payload on followChannel.
type followAnnounce struct {
	Replica string `json:"r"`
	Agent   string `json:"a"`
	Task    string `json:"t"`
}

// wireEvent is the payload on eventsChannel. Event is omitted when the turn's
// last event was too large to send: End alone then tells followers that no
// more events come.
type wireEvent struct {
	Agent string          `json:"a"`
	Task  string          `json:"t"`
	End   bool            `json:"end,omitempty"`
	Event json.RawMessage `json:"e,omitempty"`
}

// liveEvent is what a follower receives from the listener.
type liveEvent struct {
	event a2a.Event // nil for a bare end marker
	end   bool
}

type publishItem struct {
	key   followKey
	event a2a.Event
	end   bool
}

// follower is one Follow in progress on this replica.
type follower struct {
	key followKey
	ch  chan liveEvent
}

// FollowStats counts the live-event traffic of a replica.
type FollowStats struct {
	Published int64 // events sent for followed tasks
	Dropped   int64 // events not queued because the queue was full, or not delivered to a full follower
	Oversize  int64 // events over the NOTIFY payload limit, not sent
	Failed    int64 // NOTIFYs that failed
}

// FollowStats reports this replica's live-event counters.
func (db *DB) FollowStats() FollowStats {
	return FollowStats{
		Published: db.pubSent.Load(),
		Dropped:   db.pubDropped.Load(),
		Oversize:  db.pubOversize.Load(),
		Failed:    db.pubFailed.Load(),
	}
}

// endsTurn is true for a state after which the turn emits nothing more.
func endsTurn(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// publish queues an event of a task running here if another replica follows
// the task. It never blocks: when the queue is full the event is dropped.
func (db *DB) publish(agent string, ev a2a.Event) {
	if db.nFollowed.Load() == 0 {
		return
	}
	var id a2a.TaskID
	end := false
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		id, end = v.TaskID, endsTurn(v.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		id = v.TaskID
	default:
		return // the task itself and messages reach followers as snapshots
	}
	key := followKey{agent, id}
	db.followMu.Lock()
	until, ok := db.followed[key]
	if ok && time.Now().After(until) {
		ok = false // the followers stopped announcing
		db.unfollow(key)
	} else if ok && end {
		db.unfollow(key) // the turn emits nothing more
	}
	db.followMu.Unlock()
	if !ok {
		return
	}
	select {
	case db.pubQueue <- publishItem{key: key, event: ev, end: end}:
	default:
		db.pubDropped.Add(1)
	}
}

// unfollow forgets a followed task; the caller holds followMu.
func (db *DB) unfollow(key followKey) {
	delete(db.followed, key)
	db.nFollowed.Store(int64(len(db.followed)))
}

// noteFollowed records an announcement aimed at this replica.
func (db *DB) noteFollowed(payload string) {
	var a followAnnounce
	if err := json.Unmarshal([]byte(payload), &a); err != nil || a.Replica != db.opts.ReplicaID {
		return
	}
	now := time.Now()
	db.followMu.Lock()
	defer db.followMu.Unlock()
	for k, until := range db.followed {
		if now.After(until) {
			delete(db.followed, k)
		}
	}
	db.followed[followKey{a.Agent, a2a.TaskID(a.Task)}] = now.Add(4 * db.opts.FollowAnnounce)
	db.nFollowed.Store(int64(len(db.followed)))
}

// isFollowed tells whether this replica publishes the task's events.
func (db *DB) isFollowed(agent string, id a2a.TaskID) bool {
	db.followMu.Lock()
	defer db.followMu.Unlock()
	until, ok := db.followed[followKey{agent, id}]
	return ok && time.Now().Before(until)
}

// publisher sends queued events, one NOTIFY each, in order.
func (db *DB) publisher(ctx context.Context) {
	defer db.wg.Done()
	for {
		var it publishItem
		select {
		case <-ctx.Done():
			return
		case it = <-db.pubQueue:
		}
		w := wireEvent{Agent: it.key.agent, Task: string(it.key.task), End: it.end}
		ev, err := json.Marshal(a2a.StreamResponse{Event: it.event})
		if err != nil {
			db.pubFailed.Add(1)
			db.log.Warn("encode live event", "task", it.key.task, "error", err)
			continue
		}
		w.Event = ev
		payload, err := json.Marshal(w)
		if err == nil && len(payload) > notifyLimit {
			db.pubOversize.Add(1)
			if !it.end {
				continue
			}
			// Still tell followers that the turn's events are over.
			w.Event = nil
			payload, err = json.Marshal(w)
		}
		if err != nil {
			db.pubFailed.Add(1)
			continue
		}
		nctx, cancel := context.WithTimeout(ctx, publishTimeout)
		_, err = db.pool.Exec(nctx, `SELECT pg_notify($1, $2)`, eventsChannel, string(payload))
		cancel()
		if err != nil {
			db.pubFailed.Add(1)
			if ctx.Err() == nil {
				db.log.Warn("publish live event", "task", it.key.task, "error", err)
			}
			continue
		}
		db.pubSent.Add(1)
	}
}

// announce tells the replica running a task that this one follows it.
func (db *DB) announce(ctx context.Context, replica, agent string, id a2a.TaskID) {
	b, err := json.Marshal(followAnnounce{Replica: replica, Agent: agent, Task: string(id)})
	if err != nil {
		return
	}
	if _, err := db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, followChannel, string(b)); err != nil && ctx.Err() == nil {
		db.log.Warn("announce follower", "task", id, "error", err)
	}
}

// addFollower registers a Follow for the task's live events.
func (db *DB) addFollower(agent string, id a2a.TaskID) *follower {
	f := &follower{key: followKey{agent, id}, ch: make(chan liveEvent, followerBuffer)}
	db.subMu.Lock()
	defer db.subMu.Unlock()
	set := db.followers[f.key]
	if set == nil {
		set = map[*follower]struct{}{}
		db.followers[f.key] = set
	}
	set[f] = struct{}{}
	return f
}

func (db *DB) removeFollower(f *follower) {
	db.subMu.Lock()
	defer db.subMu.Unlock()
	if set := db.followers[f.key]; set != nil {
		delete(set, f)
		if len(set) == 0 {
			delete(db.followers, f.key)
		}
	}
}

// deliver hands a notification from eventsChannel to this replica's
// followers of the task, never blocking the listener.
func (db *DB) deliver(payload string) {
	var w wireEvent
	if err := json.Unmarshal([]byte(payload), &w); err != nil {
		return
	}
	db.subMu.Lock()
	defer db.subMu.Unlock()
	for f := range db.followers[followKey{w.Agent, a2a.TaskID(w.Task)}] {
		// Each follower gets its own copy: its stream owns the event.
		le := liveEvent{end: w.End}
		if len(w.Event) > 0 {
			var sr a2a.StreamResponse
			if err := json.Unmarshal(w.Event, &sr); err != nil {
				db.log.Warn("decode live event", "task", w.Task, "error", err)
				return
			}
			le.event = sr.Event
		}
		select {
		case f.ch <- le:
		default:
			db.pubDropped.Add(1)
		}
	}
}
