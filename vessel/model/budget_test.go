package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestBudgetErrors: the egress's budget answers, a 429 refusal and a
// stream cut by an error event, come back as *Error with Budget() true,
// and the 429 is not retried as a rate limit would be; the owner of the
// turn is named to the egress, percent-encoded.
func TestBudgetErrors(t *testing.T) {
	var calls atomic.Int32
	var owner atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		owner.Store(r.Header.Get(telemetry.OwnerHeader))
		if r.URL.Path == "/refuse/chat/completions" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"token budget exceeded: the owner has used 10 of its 10 tokens","type":"egress_error","code":"budget_exceeded"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"part\"}}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":30}}\n"+
			"\ndata: {\"error\":{\"message\":\"token budget exceeded: the turn has used 35 of its 25 tokens\",\"type\":\"egress_error\",\"code\":\"budget_exceeded\"}}\n\n")
	}))
	defer srv.Close()
	ctx := telemetry.WithOwner(context.Background(), "app1/jö é")
	for path, status := range map[string]int{"/refuse": http.StatusTooManyRequests, "/cut": 0} {
		calls.Store(0)
		_, err := (&Client{BaseURL: srv.URL + path, Backoff: time.Millisecond}).Complete(ctx, req(), &rec{})
		var me *Error
		if !errors.As(err, &me) || !me.Budget() || me.Status != status || calls.Load() != 1 {
			t.Errorf("%s: %v (%+v), %d calls", path, err, me, calls.Load())
		}
		if got, _ := url.PathUnescape(owner.Load().(string)); got != "app1/jö é" {
			t.Errorf("%s: owner header %q", path, owner.Load())
		}
	}
	// A plain 429 of the provider is still retried.
	calls.Store(0)
	rl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`)
	}))
	defer rl.Close()
	_, err := (&Client{BaseURL: rl.URL, Backoff: time.Millisecond, Attempts: 2}).Complete(ctx, req(), &rec{})
	var me *Error
	if !errors.As(err, &me) || me.Budget() || calls.Load() != 2 {
		t.Errorf("rate limit: %v, %d calls", err, calls.Load())
	}
}
