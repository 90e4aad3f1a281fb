// Package outboxtest holds the waits the outbox's tests and the stores'
// push tests share: one copy, so a change to how "drained" is judged is
// made once.
package outboxtest

import (
	"context"
	"testing"
	"time"
)

// Pender is what the waits read: the outbox's count of pending deliveries.
type Pender interface {
	Pending(ctx context.Context) (int, error)
}

// WaitNothingPending waits until ob holds no pending delivery, failing once
// deadline has passed.
func WaitNothingPending(ctx context.Context, t testing.TB, ob Pender, deadline time.Time) {
	t.Helper()
	for {
		p, err := ob.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitArrived waits until arrived reports a first arrival, failing with
// never once deadline has passed.
func WaitArrived(t testing.TB, arrived func() int, deadline time.Time, never string) {
	t.Helper()
	for arrived() == 0 {
		if time.Now().After(deadline) {
			t.Fatal(never)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitArrivedAndDrained waits (30 s in all) for a first arrival, then for
// ob to record every delivery done: completions are recorded shortly after
// an arrival, and nothing else may arrive.
func WaitArrivedAndDrained(ctx context.Context, t testing.TB, ob Pender, arrived func() int, never string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	WaitArrived(t, arrived, deadline, never)
	WaitNothingPending(ctx, t, ob, deadline)
}
