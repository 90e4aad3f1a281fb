// Package admission decides whether a caller may start more work on this
// vessel replica: concurrent turns (globally, per agent, per app, per
// owner), open event streams and requests in flight per owner, and a
// request rate per app. Every decision is taken before the work starts
// and costs a map look-up under one mutex; a refusal says which limit and
// when to retry. The counts are this process's: docs/configuration.md
// says how to size them for several replicas.
package admission

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Limit names, as refusals, logs and the refusal metric carry them: the
// [limits] keys they come from.
const (
	LimitTurns           = "max_turns"
	LimitTurnsPerAgent   = "max_turns_per_agent"
	LimitTurnsPerApp     = "max_turns_per_app"
	LimitTurnsPerOwner   = "max_turns_per_owner"
	LimitStreamsPerOwner = "max_streams_per_owner"
	LimitRequestsOwner   = "max_requests_per_owner"
	LimitRequestsApp     = "max_requests_per_app"
	LimitRate            = "requests_per_second_per_app"
)

// Who is the caller and the agent a request is for. App is the [[apps]]
// id of an app key or the [[issuers]] id of a token (prefixed so the two
// never share a bucket); Owner is the task owner.
type Who struct {
	Owner string
	App   string
	Agent string
}

// Refusal is the error of a request over a limit.
type Refusal struct {
	Limit      string
	RetryAfter time.Duration
	max        float64
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("too many requests: over %s (%g); retry in %d s", r.Limit, r.max, r.RetryAfterSeconds())
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1,
// as a Retry-After header carries it.
func (r *Refusal) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(r.RetryAfter.Seconds())))
}

type ownerCounts struct{ turns, streams, requests int }

// Controller holds the counts. The zero value is not usable; use New.
type Controller struct {
	lim   settings.Limits
	retry time.Duration
	now   func() time.Time

	// peers, when set, gives the turns other replicas run by key
	// (SetPeers); they count against the turn caps beside this one's.
	peers atomic.Pointer[func(key string) int]

	mu     sync.Mutex
	turns  int
	agents map[string]int
	apps   map[string]int
	owners map[string]*ownerCounts
	rates  map[string]*rate.Limiter
	// appRequests are the requests in flight by app: distinct owners of
	// one app share this bound.
	appRequests map[string]int
	// freed is closed (and replaced) when a turn's place is given back:
	// what a turn waiting for a place (Freed) waits on.
	freed chan struct{}
}

// New returns a Controller for lim (unset fields at their defaults); now
// is the clock of the rate buckets (nil: time.Now).
func New(lim settings.Limits, now func() time.Time) *Controller {
	lim = lim.WithDefaults()
	if now == nil {
		now = time.Now
	}
	return &Controller{lim: lim, retry: time.Duration(lim.RetryAfterSecs) * time.Second, now: now,
		agents: map[string]int{}, apps: map[string]int{}, owners: map[string]*ownerCounts{}, rates: map[string]*rate.Limiter{},
		appRequests: map[string]int{}, freed: make(chan struct{})}
}

// Limits returns the limits in force.
func (c *Controller) Limits() settings.Limits { return c.lim }

func (c *Controller) refuse(limit string, n int) *Refusal {
	return &Refusal{Limit: limit, RetryAfter: c.retry, max: float64(n)}
}

// owner returns w's counts, created on first use; the caller holds mu.
func (c *Controller) owner(o string) *ownerCounts {
	oc := c.owners[o]
	if oc == nil {
		oc = &ownerCounts{}
		c.owners[o] = oc
	}
	return oc
}

// dropOwner forgets an owner with nothing counted, so the map holds only
// callers with work in flight; the caller holds mu.
func (c *Controller) dropOwner(o string, oc *ownerCounts) {
	if oc.turns == 0 && oc.streams == 0 && oc.requests == 0 {
		delete(c.owners, o)
	}
}

// Request admits one request of any method: a token from the app's rate
// bucket and a place among the owner's and the app's requests in flight. release gives
// the place back; call it once, when the request ends.
func (c *Controller) Request(w Who) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.owner(w.Owner)
	if oc.requests >= c.lim.MaxRequestsPerOwner {
		c.dropOwner(w.Owner, oc)
		return nil, c.refuse(LimitRequestsOwner, c.lim.MaxRequestsPerOwner)
	}
	if c.appRequests[w.App] >= c.lim.MaxRequestsPerApp {
		c.dropOwner(w.Owner, oc)
		return nil, c.refuse(LimitRequestsApp, c.lim.MaxRequestsPerApp)
	}
	lim := c.rates[w.App]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(c.lim.RequestsPerSecondPerApp), c.lim.RequestBurstPerApp)
		c.rates[w.App] = lim
	}
	now := c.now()
	if res := lim.ReserveN(now, 1); !res.OK() || res.DelayFrom(now) > 0 {
		wait := time.Duration(float64(time.Second) / c.lim.RequestsPerSecondPerApp)
		if res.OK() {
			wait = res.DelayFrom(now)
			res.CancelAt(now)
		}
		c.dropOwner(w.Owner, oc)
		return nil, &Refusal{Limit: LimitRate, RetryAfter: wait, max: c.lim.RequestsPerSecondPerApp}
	}
	oc.requests++
	c.appRequests[w.App]++
	return c.once(func() {
		oc := c.owners[w.Owner]
		oc.requests--
		c.dropOwner(w.Owner, oc)
		if c.appRequests[w.App]--; c.appRequests[w.App] <= 0 {
			delete(c.appRequests, w.App)
		}
	}), nil
}

// Stream admits one event stream (SendStreamingMessage, SubscribeToTask)
// for the owner; release gives its place back when the stream ends.
func (c *Controller) Stream(w Who) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.owner(w.Owner)
	if oc.streams >= c.lim.MaxStreamsPerOwner {
		c.dropOwner(w.Owner, oc)
		return nil, c.refuse(LimitStreamsPerOwner, c.lim.MaxStreamsPerOwner)
	}
	oc.streams++
	return c.once(func() {
		oc := c.owners[w.Owner]
		oc.streams--
		c.dropOwner(w.Owner, oc)
	}), nil
}

// once wraps f, which runs under mu, so that it runs at most once.
func (c *Controller) once(f func()) func() {
	var done atomic.Bool
	return func() {
		if done.Swap(true) {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		f()
	}
}

// Turn admits one turn under every cap that applies to it: the replica's,
// the agent's, the app's and the owner's, checked in that order (the
// refusal names the first one full). The Ticket holds the place until it
// is released.
func (c *Controller) Turn(w Who) (*Ticket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	peer := func(string) int { return 0 }
	if f := c.peers.Load(); f != nil {
		peer = *f
	}
	switch {
	case c.turns+peer(KeyTurns) >= c.lim.MaxTurns:
		return nil, c.refuse(LimitTurns, c.lim.MaxTurns)
	case c.agents[w.Agent]+peer(KeyAgent(w.Agent)) >= c.lim.MaxTurnsPerAgent:
		return nil, c.refuse(LimitTurnsPerAgent, c.lim.MaxTurnsPerAgent)
	case c.apps[w.App]+peer(KeyApp(w.App)) >= c.lim.MaxTurnsPerApp:
		return nil, c.refuse(LimitTurnsPerApp, c.lim.MaxTurnsPerApp)
	}
	oc := c.owner(w.Owner)
	if oc.turns+peer(KeyOwner(w.Owner)) >= c.lim.MaxTurnsPerOwner {
		c.dropOwner(w.Owner, oc)
		return nil, c.refuse(LimitTurnsPerOwner, c.lim.MaxTurnsPerOwner)
	}
	c.addTurn(w, oc)
	return &Ticket{c: c, who: w}, nil
}

// Forwarded counts a turn admitted by another replica, which forwarded
// its message here because this replica holds the task's paused turn (a
// decision sent to another replica): the turn runs here, so it counts
// here, and the receiving replica gave its own place back when it
// forwarded the message. The receiving replica checked the caps, so this
// one counts the turn over them if need be. The ticket is held as Turn's.
// The vessel's own end of a paused turn when it stops counts this way too:
// it only ends the turn and must not wait for a place.
func (c *Controller) Forwarded(w Who) *Ticket {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addTurn(w, c.owner(w.Owner))
	return &Ticket{c: c, who: w}
}

// Forward is the receiving replica's side of Forwarded: the message goes
// to the replica holding its turn, so the request's place is given back
// now, unless a turn claimed it. The request's own end (Done) is then a
// no-op.
func (t *Ticket) Forward() { t.Done() }

// addTurn counts a turn; the caller holds mu.
func (c *Controller) addTurn(w Who, oc *ownerCounts) {
	c.turns++
	c.agents[w.Agent]++
	c.apps[w.App]++
	oc.turns++
}

func (c *Controller) dropTurn(w Who) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns--
	if c.agents[w.Agent]--; c.agents[w.Agent] == 0 {
		delete(c.agents, w.Agent)
	}
	if c.apps[w.App]--; c.apps[w.App] == 0 {
		delete(c.apps, w.App)
	}
	oc := c.owners[w.Owner]
	oc.turns--
	c.dropOwner(w.Owner, oc)
	close(c.freed)
	c.freed = make(chan struct{})
}

// Freed returns a channel closed when this replica next gives a turn's
// place back: a turn the vessel resumes itself waits on it for a place
// (Turn again) instead of being refused. Other replicas' places are not
// signalled; a waiter polls for those too.
func (c *Controller) Freed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.freed
}

// Keys of the turn counts replicas share (Snapshot, SetPeers).
const KeyTurns = "turns"

// KeyAgent, KeyApp and KeyOwner are the shared keys of one agent's, app's
// and owner's turns.
func KeyAgent(id string) string    { return "agent:" + id }
func KeyApp(app string) string     { return "app:" + app }
func KeyOwner(owner string) string { return "owner:" + owner }

// Snapshot returns the turns this replica runs, by shared key: what it
// publishes for the others.
func (c *Controller) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, 1+len(c.agents)+len(c.apps)+len(c.owners))
	if c.turns > 0 {
		out[KeyTurns] = c.turns
	}
	for a, n := range c.agents {
		out[KeyAgent(a)] = n
	}
	for a, n := range c.apps {
		out[KeyApp(a)] = n
	}
	for o, oc := range c.owners {
		if oc.turns > 0 {
			out[KeyOwner(o)] = oc.turns
		}
	}
	return out
}

// SetPeers makes the turns of other replicas count against the caps:
// f(key) is their total for a shared key. Streams, requests in flight and
// the request rate stay this replica's own.
func (c *Controller) SetPeers(f func(key string) int) {
	if f == nil {
		c.peers.Store(nil)
		return
	}
	c.peers.Store(&f)
}

// Counts reports the turns running on the replica and for one owner.
func (c *Controller) Counts(owner string) (turns, ownerTurns, ownerStreams, ownerRequests int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	turns = c.turns
	if oc := c.owners[owner]; oc != nil {
		ownerTurns, ownerStreams, ownerRequests = oc.turns, oc.streams, oc.requests
	}
	return
}

// Tracked is how many owners the controller holds counts for (only owners
// with work in flight are kept).
func (c *Controller) Tracked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.owners)
}

// Ticket is one admitted turn's place. The request that was admitted
// holds it first; the turn takes it over when it starts (Claim) and gives
// it back when it ends, so a turn that goes on after its request
// (SendMessage with returnImmediately) stays counted, and a request that
// never started a turn frees its place when it ends (Done).
type Ticket struct {
	c     *Controller
	who   Who
	state atomic.Int32 // ticketHeld, ticketClaimed, ticketFreed
}

const (
	ticketHeld int32 = iota
	ticketClaimed
	ticketFreed
)

// Claim hands the place to the turn, which must call Release when it
// ends. Should the request have ended first, the turn is counted again
// (over the caps if need be: it has started) and that place is returned.
func (t *Ticket) Claim() *Ticket {
	if t == nil {
		return nil
	}
	if t.state.CompareAndSwap(ticketHeld, ticketClaimed) {
		return t
	}
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.c.addTurn(t.who, t.c.owner(t.who.Owner))
	nt := &Ticket{c: t.c, who: t.who}
	nt.state.Store(ticketClaimed)
	return nt
}

// Done is the request's end: the place is freed unless a turn claimed it.
func (t *Ticket) Done() {
	if t != nil && t.state.CompareAndSwap(ticketHeld, ticketFreed) {
		t.c.dropTurn(t.who)
	}
}

// Release is the claimed turn's end.
func (t *Ticket) Release() {
	if t != nil && t.state.CompareAndSwap(ticketClaimed, ticketFreed) {
		t.c.dropTurn(t.who)
	}
}
