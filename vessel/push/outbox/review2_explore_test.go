package outbox_test

import (
	"os"
	"testing"
	"time"
)

// Exploratory (REVIEW2_EXPLORE=1): one task's many pushes to one config,
// with the production OrderSnooze (1 s).
func TestReview2OneKeyThroughput(t *testing.T) {
	if os.Getenv("REVIEW2_EXPLORE") == "" {
		t.Skip("exploratory")
	}
	r := newRigSnooze(t, 16, 0)
	start := time.Now()
	r.enqueue(t, 1, 40)
	r.wait(t, 40)
	t.Logf("40 deliveries of one key: %s", time.Since(start))
	r.checkOrder(t, 1, 40)
}
