// Package backoff holds the waits between retries the vessel's clients
// share: exponential with jitter, and a server's Retry-After.
package backoff

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Delay is the wait before retry number attempt (1 = the first retry):
// exponential from base up to limit, with ±25% jitter, never over limit
// by more than the jitter.
func Delay(attempt int, base, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	j := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
	return max(d+j, time.Millisecond)
}

// RetryAfter reads a Retry-After header, delay-seconds or an HTTP-date,
// as a wait from now; false when there is none or it cannot be read.
func RetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
