package admission

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/limits"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

func refusedBy(t *testing.T, err error, limit string) *Refusal {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) || r.Limit != limit {
		t.Fatalf("err = %v, want a refusal over %s", err, limit)
	}
	return r
}

// Each cap admits exactly its number of turns, refuses the next, and
// admits again once one place is released.
func TestTurnCapsAtTheirBoundary(t *testing.T) {
	for _, tc := range []struct {
		limit string
		lim   settings.Limits
		who   func(i int) Who // the i-th caller; all share what the cap counts
	}{
		{LimitTurns, settings.Limits{MaxTurns: 3}, func(i int) Who {
			return Who{Owner: string(rune('a' + i)), App: string(rune('a' + i)), Agent: string(rune('a' + i))}
		}},
		{LimitTurnsPerAgent, settings.Limits{MaxTurnsPerAgent: 3}, func(i int) Who { return Who{Owner: string(rune('a' + i)), App: string(rune('a' + i)), Agent: "x"} }},
		{LimitTurnsPerApp, settings.Limits{MaxTurnsPerApp: 3}, func(i int) Who { return Who{Owner: string(rune('a' + i)), App: "app", Agent: string(rune('a' + i))} }},
		{LimitTurnsPerOwner, settings.Limits{MaxTurnsPerOwner: 3}, func(i int) Who { return Who{Owner: "o", App: string(rune('a' + i)), Agent: string(rune('a' + i))} }},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			c := New(tc.lim, nil)
			var held []*Ticket
			for i := range 3 {
				tk, err := c.Turn(tc.who(i))
				if err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				held = append(held, tk)
			}
			_, err := c.Turn(tc.who(3))
			r := refusedBy(t, err, tc.limit)
			if r.RetryAfterSeconds() != limits.DefaultRetryAfterSecs {
				t.Errorf("retry after %d", r.RetryAfterSeconds())
			}
			held[1].Done()
			held[1].Done() // twice frees once
			tk, err := c.Turn(tc.who(3))
			if err != nil {
				t.Fatalf("after a release: %v", err)
			}
			if _, err := c.Turn(tc.who(4)); err == nil {
				t.Fatal("a second Done freed a second place")
			}
			tk.Done()
			held[0].Done()
			held[2].Done()
			if n, _, _, _ := c.Counts(""); n != 0 || c.Tracked() != 0 {
				t.Errorf("after all released: %d turns, %d owners tracked", n, c.Tracked())
			}
		})
	}
}

// A claimed ticket is not freed by the request's end, only by the turn's.
func TestTicketClaim(t *testing.T) {
	c := New(settings.Limits{MaxTurnsPerOwner: 1}, nil)
	w := Who{Owner: "o", App: "a", Agent: "g"}
	tk, err := c.Turn(w)
	if err != nil {
		t.Fatal(err)
	}
	run := tk.Claim()
	tk.Done() // the request returned while the turn goes on
	if _, err := c.Turn(w); err == nil {
		t.Fatal("the request's end freed a running turn's place")
	}
	run.Release()
	run.Release()
	tk2, err := c.Turn(w)
	if err != nil {
		t.Fatalf("after the turn ended: %v", err)
	}
	// A turn that claims after its request ended is counted again.
	tk2.Done()
	late := tk2.Claim()
	if n, ot, _, _ := c.Counts("o"); n != 1 || ot != 1 {
		t.Errorf("late claim: %d turns, %d for the owner", n, ot)
	}
	late.Release()
	if n, _, _, _ := c.Counts("o"); n != 0 || c.Tracked() != 0 {
		t.Errorf("after release: %d", n)
	}
	var nilTicket *Ticket
	nilTicket.Claim().Release()
	nilTicket.Done()
}

func TestStreamsAndRequestsPerOwner(t *testing.T) {
	c := New(settings.Limits{MaxStreamsPerOwner: 2, MaxRequestsPerOwner: 3, RequestBurstPerApp: 1000, RequestsPerSecondPerApp: 1000}, nil)
	a, b := Who{Owner: "a", App: "x"}, Who{Owner: "b", App: "x"}
	var rel []func()
	for range 2 {
		f, err := c.Stream(a)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, f)
	}
	_, err := c.Stream(a)
	refusedBy(t, err, LimitStreamsPerOwner)
	if f, err := c.Stream(b); err != nil {
		t.Fatalf("another owner: %v", err)
	} else {
		f()
	}
	rel[0]()
	rel[0]()
	f, err := c.Stream(a)
	if err != nil {
		t.Fatal(err)
	}
	f()
	rel[1]()
	for range 3 {
		f, err := c.Request(a)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, f)
	}
	_, err = c.Request(a)
	refusedBy(t, err, LimitRequestsOwner)
	for _, f := range rel {
		f()
	}
	if c.Tracked() != 0 {
		t.Errorf("%d owners still tracked", c.Tracked())
	}
}

// The rate bucket admits its burst, refuses the next request with the
// wait until the next token, and refills at the rate, on the test's clock.
func TestRatePerApp(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := New(settings.Limits{RequestsPerSecondPerApp: 2, RequestBurstPerApp: 4}, clock)
	w := Who{Owner: "o", App: "k"}
	for i := range 4 {
		f, err := c.Request(w)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		f()
	}
	_, err := c.Request(w)
	r := refusedBy(t, err, LimitRate)
	if r.RetryAfter != 500*time.Millisecond || r.RetryAfterSeconds() != 1 {
		t.Errorf("retry after %v (%d s)", r.RetryAfter, r.RetryAfterSeconds())
	}
	// Another app has its own bucket.
	if f, err := c.Request(Who{Owner: "o", App: "other"}); err != nil {
		t.Fatalf("other app: %v", err)
	} else {
		f()
	}
	// A refusal takes no token: half a second later exactly one is back.
	mu.Lock()
	now = now.Add(500 * time.Millisecond)
	mu.Unlock()
	f, err := c.Request(w)
	if err != nil {
		t.Fatalf("after refill: %v", err)
	}
	f()
	_, err = c.Request(w)
	refusedBy(t, err, LimitRate)
	if c.Tracked() != 0 {
		t.Errorf("%d owners tracked", c.Tracked())
	}
}

// Many goroutines racing for a cap never get more than it.
func TestTurnCapUnderRace(t *testing.T) {
	c := New(settings.Limits{MaxTurnsPerOwner: 5}, nil)
	w := Who{Owner: "o", App: "a", Agent: "g"}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted []*Ticket
	)
	for range 1000 {
		wg.Go(func() {
			if tk, err := c.Turn(w); err == nil {
				mu.Lock()
				admitted = append(admitted, tk)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(admitted) != 5 {
		t.Fatalf("%d admitted, want 5", len(admitted))
	}
	for _, tk := range admitted {
		tk.Done()
	}
}

func BenchmarkTurn(b *testing.B) {
	c := New(settings.Limits{}, nil)
	w := Who{Owner: "app/user", App: "app:app", Agent: "agent"}
	b.ReportAllocs()
	for b.Loop() {
		rel, err := c.Request(w)
		if err != nil {
			// The default rate refuses a tight loop: reset the bucket.
			c = New(settings.Limits{RequestsPerSecondPerApp: 1e6, RequestBurstPerApp: 1e6}, nil)
			continue
		}
		tk, err := c.Turn(w)
		if err != nil {
			b.Fatal(err)
		}
		tk.Claim().Release()
		tk.Done()
		rel()
	}
}

// TestRequestsPerApp: an app's requests in flight are bounded however
// many owners it names; another app is not affected, and a released place
// is free again.
func TestRequestsPerApp(t *testing.T) {
	c := New(settings.Limits{MaxRequestsPerOwner: 2, MaxRequestsPerApp: 5, RequestBurstPerApp: 1000, RequestsPerSecondPerApp: 1000}, nil)
	var rel []func()
	for i := range 5 {
		f, err := c.Request(Who{Owner: fmt.Sprintf("x/user-%d", i), App: "app:x"})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		rel = append(rel, f)
	}
	_, err := c.Request(Who{Owner: "x/yet-another-user", App: "app:x"})
	refusedBy(t, err, LimitRequestsApp)
	f, err := c.Request(Who{Owner: "y/user-0", App: "app:y"})
	if err != nil {
		t.Fatalf("another app: %v", err)
	}
	f()
	rel[0]()
	rel[0]() // a second release gives nothing back twice
	f, err = c.Request(Who{Owner: "x/user-9", App: "app:x"})
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	_, err = c.Request(Who{Owner: "x/user-10", App: "app:x"})
	refusedBy(t, err, LimitRequestsApp)
	f()
	for _, f := range rel[1:] {
		f()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.appRequests) != 0 || len(c.owners) != 0 {
		t.Fatalf("counts left: %v %v", c.appRequests, c.owners)
	}
}

// Freed is closed when a turn's place comes back, and not before.
func TestFreedSignalsAPlace(t *testing.T) {
	c := New(settings.Limits{MaxTurnsPerOwner: 1}, nil)
	w := Who{Owner: "o", App: "a", Agent: "g"}
	tk, err := c.Turn(w)
	if err != nil {
		t.Fatal(err)
	}
	freed := c.Freed()
	if _, err := c.Turn(w); err == nil {
		t.Fatal("over the cap")
	}
	select {
	case <-freed:
		t.Fatal("signalled with no place freed")
	default:
	}
	tk.Done()
	select {
	case <-freed:
	default:
		t.Fatal("not signalled when the place came back")
	}
	if next := c.Freed(); next == freed {
		t.Fatal("the next wait reuses a closed channel")
	}
	if _, err := c.Turn(w); err != nil {
		t.Fatalf("after the signal: %v", err)
	}
}
