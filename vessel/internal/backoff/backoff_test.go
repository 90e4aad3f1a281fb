package backoff

import (
	"net/http"
	"testing"
	"time"
)

func TestDelayCapped(t *testing.T) {
	for attempt := 1; attempt < 40; attempt++ {
		d := Delay(attempt, 250*time.Millisecond, 10*time.Second)
		if d < time.Millisecond || d > 10*time.Second*5/4 {
			t.Fatalf("attempt %d: %v", attempt, d)
		}
	}
	if d := Delay(1, 100*time.Millisecond, time.Second); d < 75*time.Millisecond || d > 125*time.Millisecond {
		t.Fatalf("first retry %v", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"10": 10 * time.Second, " 0 ": 0,
		now.Add(30 * time.Second).Format(http.TimeFormat): 30 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
		"99999999999": 24 * time.Hour,
	} {
		got, ok := RetryAfter(h, now)
		if !ok || got != want {
			t.Fatalf("%q: %v %v, want %v", h, got, ok, want)
		}
	}
	for _, h := range []string{"", "-1", "soon", "1.5"} {
		if _, ok := RetryAfter(h, now); ok {
			t.Fatalf("%q read", h)
		}
	}
}
