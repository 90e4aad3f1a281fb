package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

type retryRec struct {
	rec
	waits    []time.Duration
	attempts []int
}

func (r *retryRec) Retry(attempt int, wait time.Duration, _ error) {
	r.attempts = append(r.attempts, attempt)
	r.waits = append(r.waits, wait)
}

// TestRetryAfterCappedAndReported: a 429 with Retry-After: 10 on every
// attempt waits the cap each time (no doubling), each retry is reported,
// and the call ends after its attempts.
func TestRetryAfterCappedAndReported(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
	}))
	defer srv.Close()
	var h retryRec
	c := &Client{BaseURL: srv.URL, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Budget: time.Minute}
	_, err := c.Complete(context.Background(), req(), &h)
	var me *Error
	if !errors.As(err, &me) || me.Status != 429 || n.Load() != DefaultAttempts {
		t.Fatalf("err %v after %d requests", err, n.Load())
	}
	if len(h.waits) != DefaultAttempts-1 || h.attempts[0] != 2 {
		t.Fatalf("retries reported %v %v", h.attempts, h.waits)
	}
	for _, w := range h.waits {
		if w != 20*time.Millisecond {
			t.Fatalf("waits %v: Retry-After is honoured up to the cap, never doubled past it", h.waits)
		}
	}
}

// TestBudgetStopsRetries: when the next wait would not fit in what is
// left of the budget, the call ends with the last failure.
func TestBudgetStopsRetries(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "10")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var h retryRec
	c := &Client{BaseURL: srv.URL, MaxBackoff: time.Hour, Budget: 5 * time.Second}
	_, err := c.Complete(context.Background(), req(), &h)
	var me *Error
	if !errors.As(err, &me) || me.Status != 503 || n.Load() != 1 || len(h.waits) != 0 {
		t.Fatalf("err %v after %d requests, retries %v", err, n.Load(), h.waits)
	}
}

// TestSilentModelWithinBudget: a model that sends only SSE comments gets a
// first-byte timeout cut to the call's budget, not the 60 s default.
func TestSilentModelWithinBudget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for {
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	var h retryRec
	c := &Client{BaseURL: srv.URL, Budget: 150 * time.Millisecond, Backoff: time.Millisecond}
	_, err := c.Complete(context.Background(), req(), &h)
	var te *TimeoutError
	if !errors.As(err, &te) || !te.FirstByte || te.After > 150*time.Millisecond {
		t.Fatalf("err %v", err)
	}
}

// TestBudgetFollowsFirstByteTimeout: a long first-byte timeout (a local
// model reading a long prompt) is not cut by the default budget.
func TestBudgetFollowsFirstByteTimeout(t *testing.T) {
	if p := (&Client{}).policy(); p.budget != DefaultBudget || p.firstByte != DefaultFirstByteTimeout {
		t.Fatalf("%+v", p)
	}
	if p := (&Client{FirstByteTimeout: 10 * time.Minute}).policy(); p.budget != 15*time.Minute {
		t.Fatalf("%+v", p)
	}
	if p := (&Client{FirstByteTimeout: time.Second, Budget: time.Minute}).policy(); p.budget != time.Minute {
		t.Fatalf("%+v", p)
	}
}
