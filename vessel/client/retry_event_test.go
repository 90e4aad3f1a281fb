package client

import (
	"testing"
	"time"
)

// TestDecodeModelRetry: the vessel's model.retry event becomes a typed
// ModelRetry with its wait.
func TestDecodeModelRetry(t *testing.T) {
	ev := decodeEvent(EventModelRetry, map[string]any{"type": "model.retry", "attempt": float64(2), "wait_ms": float64(1500), "step": float64(1),
		"error": "model answered 429: slow down"})
	r, ok := ev.(ModelRetry)
	if !ok || r.Attempt != 2 || r.Wait != 1500*time.Millisecond || r.Error != "model answered 429: slow down" {
		t.Fatalf("%#v", ev)
	}
}
