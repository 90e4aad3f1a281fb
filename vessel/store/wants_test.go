package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// TestWorkingWants: a noted task is taken once, within WantTTL; old notes
// are dropped by a later note (at most once a minute), so the set holds
// what the last WantTTL noted.
func TestWorkingWants(t *testing.T) {
	var w store.WorkingWants
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	w.Add("a", t0)
	if !w.Take("a", t0.Add(time.Minute)) || w.Take("a", t0.Add(time.Minute)) {
		t.Fatal("a note is taken exactly once")
	}
	w.Add("b", t0)
	if w.Take("b", t0.Add(store.WantTTL+time.Second)) {
		t.Fatal("a note older than WantTTL was taken")
	}
	for i := range 1000 {
		w.Add(a2a.TaskID(fmt.Sprint("old-", i)), t0)
	}
	w.Add("new", t0.Add(store.WantTTL+2*time.Minute))
	if n := w.Len(); n != 1 {
		t.Fatalf("%d notes after the old ones expired, want 1", n)
	}
	if !w.Take("new", t0.Add(store.WantTTL+2*time.Minute)) {
		t.Fatal("the new note is gone")
	}
}
