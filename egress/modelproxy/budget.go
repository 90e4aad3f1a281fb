package modelproxy

import (
	"fmt"
	"sync"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/budgets"
)

// Budget scopes, the scope label of egress_budget_refusals_total and
// egress_budget_cuts_total.
const (
	ScopeTurn  = "turn"
	ScopeOwner = "owner"
	ScopeAgent = "agent"
)

// BudgetCode is the error code of an answer refused or cut for a budget
// (the OpenAI error shape's code, and X-Egress-Error).
const BudgetCode = "budget_exceeded"

// MaxOwnerHeader bounds the X-Vessel-Owner value the egress keeps a count
// for; a longer one is refused.
const MaxOwnerHeader = 512

// ledger counts the tokens spent per turn, per owner per UTC day and per
// agent per UTC day, in memory: an egress restart starts every window
// again (docs/egress.md). Tokens are prompt and completion together.
type ledger struct {
	b   budgets.Budgets
	now func() time.Time

	mu     sync.Mutex
	day    int64 // the UTC day the daily counts are for (days since 1970-01-01)
	turns  map[string]*turnUse
	owners map[string]int64
	agents map[string]int64
}

type turnUse struct {
	used int64
	day  int64 // the last UTC day it was charged
}

func newLedger(b budgets.Budgets, now func() time.Time) *ledger {
	if now == nil {
		now = time.Now
	}
	return &ledger{b: b, now: now, turns: map[string]*turnUse{}, owners: map[string]int64{}, agents: map[string]int64{}}
}

// who names the three scopes of one model request.
type who struct{ turn, owner, agent string }

// overrun says which ceiling a request went past, for the caller.
type overrun struct {
	scope       string
	used, limit int64
}

func (o *overrun) message(cut bool) string {
	setting := map[string]string{ScopeTurn: "turn_tokens", ScopeOwner: "owner_daily_tokens", ScopeAgent: "agent_daily_tokens"}[o.scope]
	window := "this turn"
	if o.scope != ScopeTurn {
		window = "today (UTC)"
	}
	verb := "refused"
	if cut {
		verb = "cut"
	}
	return fmt.Sprintf("token budget exceeded: the %s has used %d of its %d tokens %s ([budgets] %s); the model request was %s by the egress",
		o.scope, o.used, o.limit, window, setting, verb)
}

// roll starts a new day's counts when the UTC day has changed; a turn
// charged neither today nor yesterday is forgotten (so a turn running
// over midnight keeps its count). Called with mu held.
func (l *ledger) roll() int64 {
	day := utcDay(l.now())
	if day != l.day {
		for id, u := range l.turns {
			if u.day < day-1 {
				delete(l.turns, id)
			}
		}
		clear(l.owners)
		clear(l.agents)
		l.day = day
	}
	return day
}

// utcDay is the number of whole UTC days from 1970-01-01 to t.
func utcDay(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d-- // before 1970: floor, not truncation
	}
	return d
}

// over is the first scope of w past its ceiling (or at it, with
// atCeiling), or nil. Called with mu held.
func (l *ledger) over(w who, atCeiling bool) *overrun {
	check := func(scope string, used, limit int64) *overrun {
		if limit > 0 && (used > limit || atCeiling && used == limit) {
			return &overrun{scope: scope, used: used, limit: limit}
		}
		return nil
	}
	if u := l.turns[w.turn]; u != nil { // a request naming no turn has none
		if o := check(ScopeTurn, u.used, l.b.TurnTokens); o != nil {
			return o
		}
	}
	if o := check(ScopeOwner, l.owners[w.owner], l.b.OwnerDailyTokens); o != nil {
		return o
	}
	return check(ScopeAgent, l.agents[w.agent], l.b.AgentCeiling(w.agent))
}

// admit is nil when w may send a request: no scope of it is at or past its
// ceiling.
func (l *ledger) admit(w who) *overrun {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll()
	return l.over(w, true)
}

// charge adds n tokens to every scope of w and says which one is now past
// its ceiling (reaching it exactly is not past: the answer was within
// budget, the next request is refused).
func (l *ledger) charge(w who, n int64) *overrun {
	l.mu.Lock()
	defer l.mu.Unlock()
	day := l.roll()
	if n > 0 {
		if w.turn != "" {
			u := l.turns[w.turn]
			if u == nil {
				u = &turnUse{}
				l.turns[w.turn] = u
			}
			u.used += n
			u.day = day
		}
		l.owners[w.owner] += n
		l.agents[w.agent] += n
	}
	return l.over(w, false)
}
