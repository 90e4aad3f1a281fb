package postgres

import (
	"errors"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Two replicas on one database share the turn caps: what one admitted
// counts on the other once the counts were exchanged, a released place
// comes back on both, and a replica whose lease expired counts no more.
func TestAdmissionSharedAcrossReplicas(t *testing.T) {
	dsn := testDSN(t)
	schema := testSchema(t, dsn)
	a := openTest(t, dsn, schema, func(o *Options) { o.ReplicaID = "a" })
	b := openTest(t, dsn, schema, func(o *Options) { o.ReplicaID = "b" })
	lim := settings.Limits{MaxTurnsPerOwner: 3, MaxTurns: 5}
	ca, cb := admission.New(lim, nil), admission.New(lim, nil)
	peersA := a.ShareAdmission(ca.Snapshot, 20*time.Millisecond)
	ca.SetPeers(peersA)
	peersB := b.ShareAdmission(cb.Snapshot, 20*time.Millisecond)
	cb.SetPeers(peersB)
	alice := admission.Who{Owner: "app/alice", App: "app:app", Agent: "g"}
	var held []*admission.Ticket
	for range 2 {
		tk, err := ca.Turn(alice)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, tk.Claim())
	}
	waitUntil(t, "b to see a's turns", func() bool { return peersB(admission.KeyOwner(alice.Owner)) == 2 && peersB(admission.KeyTurns) == 2 })
	tk, err := cb.Turn(alice)
	if err != nil {
		t.Fatalf("b, third turn: %v", err)
	}
	var r *admission.Refusal
	if _, err := cb.Turn(alice); !errors.As(err, &r) || r.Limit != admission.LimitTurnsPerOwner {
		t.Fatalf("b, fourth turn: %v, want over %s", err, admission.LimitTurnsPerOwner)
	}
	waitUntil(t, "a to see b's turn", func() bool {
		tk, err := ca.Turn(alice)
		tk.Done() // admitted before the counts arrived: give it back
		return errors.As(err, &r) && r.Limit == admission.LimitTurnsPerOwner
	})
	// Another owner is under the global cap: 3 running, 5 allowed.
	bob := admission.Who{Owner: "app/bob", App: "app:app", Agent: "g"}
	tb, err := cb.Turn(bob)
	if err != nil {
		t.Fatal(err)
	}
	tb2, err := cb.Turn(bob)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a to see b's five", func() bool {
		tk, err := ca.Turn(bob)
		tk.Done()
		return errors.As(err, &r) && r.Limit == admission.LimitTurns
	})
	tb.Done()
	tb2.Done()
	// The turns end: the places come back on both.
	held[0].Release()
	held[1].Release()
	tk.Done()
	waitUntil(t, "a to see b's turns end", func() bool { return peersA(admission.KeyOwner(alice.Owner)) == 0 && peersA(admission.KeyTurns) == 0 })
	waitUntil(t, "b to see a's turns end", func() bool { return peersB(admission.KeyOwner(alice.Owner)) == 0 && peersB(admission.KeyTurns) == 0 })
	t2, err := cb.Turn(alice)
	if err != nil {
		t.Fatalf("after a's turns ended: %v", err)
	}
	t2.Done()
	// A replica that stopped renewing its lease counts no more.
	for range 3 {
		tk, err := ca.Turn(alice)
		if err != nil {
			t.Fatal(err)
		}
		defer tk.Done()
	}
	waitUntil(t, "b to see a's new turns", func() bool { return peersB(admission.KeyOwner(alice.Owner)) == 3 })
	a.Abandon()
	expireLease(t, b, "a")
	waitUntil(t, "b to drop the expired replica", func() bool { return peersB(admission.KeyOwner(alice.Owner)) == 0 })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
