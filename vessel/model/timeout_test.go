package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stalling serves each attempt with the function for its number (from 1).
func stalling(t *testing.T, attempts *atomic.Int32, serve func(n int32, w http.ResponseWriter, r *http.Request)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(attempts.Add(1), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

// comments writes an SSE comment every 20 ms until the client goes.
func comments(w http.ResponseWriter, r *http.Request) {
	for {
		if _, err := fmt.Fprint(w, ": still here\n\n"); err != nil {
			return
		}
		flush(w)
		select {
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func fastClient(url string) *Client {
	return &Client{BaseURL: url, Attempts: 3, Backoff: time.Millisecond,
		FirstByteTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond}
}

func TestFirstByteTimeoutHeadersThenNothing(t *testing.T) {
	var n atomic.Int32
	srv := stalling(t, &n, func(_ int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		flush(w)
		<-r.Context().Done()
	})
	_, err := fastClient(srv.URL).Complete(context.Background(), req(), &rec{})
	var te *TimeoutError
	if !errors.As(err, &te) || !te.FirstByte || te.After != 200*time.Millisecond {
		t.Fatalf("err %v", err)
	}
	if n.Load() != 3 {
		t.Fatalf("%d attempts, want 3 (a timeout before the first token is retried)", n.Load())
	}
}

func TestCommentsAreNotProgress(t *testing.T) {
	var n atomic.Int32
	srv := stalling(t, &n, func(_ int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		comments(w, r)
	})
	c := fastClient(srv.URL)
	c.Attempts = 1
	_, err := c.Complete(context.Background(), req(), &rec{})
	var te *TimeoutError
	if !errors.As(err, &te) || !te.FirstByte {
		t.Fatalf("err %v", err)
	}
}

func TestIdleTimeoutAfterTokensIsNotRetried(t *testing.T) {
	var n atomic.Int32
	srv := stalling(t, &n, func(_ int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// Data lines keep it alive past the first-byte and idle timeouts...
		for range 15 {
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
			flush(w)
			time.Sleep(50 * time.Millisecond)
		}
		comments(w, r) // ...then only comments
	})
	var h rec
	_, err := fastClient(srv.URL).Complete(context.Background(), req(), &h)
	var te *TimeoutError
	if !errors.As(err, &te) || te.FirstByte || te.After != 200*time.Millisecond {
		t.Fatalf("err %v", err)
	}
	var me *Error
	if !errors.As(err, &me) || me.Status != 0 {
		t.Fatalf("not a transport-style *Error: %v", err)
	}
	// Not retried, and what came before the stall was kept. (All 15 pieces
	// arrive unless the machine stalls a gap past the idle timeout, which
	// on a loaded CI machine it did: that cuts the text short, and is the
	// same property.)
	if txt := h.text.String(); n.Load() != 1 || txt == "" || strings.Trim(txt, "x") != "" || len(txt) > 15 {
		t.Fatalf("%d attempts, text %q", n.Load(), txt)
	}
}

func TestIdleBeforeFirstTokenIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := stalling(t, &n, func(n int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
			comments(w, r)
			return
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	resp, err := fastClient(srv.URL).Complete(context.Background(), req(), &rec{})
	if err != nil || resp.Content != "ok" || n.Load() != 2 {
		t.Fatalf("%v %+v after %d attempts", err, resp, n.Load())
	}
}

func TestTurnCancelIsNotATimeout(t *testing.T) {
	var n atomic.Int32
	srv := stalling(t, &n, func(_ int32, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		comments(w, r)
	})
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by the test")
	time.AfterFunc(50*time.Millisecond, func() { cancel(stop) })
	_, err := fastClient(srv.URL).Complete(ctx, req(), &rec{})
	if !errors.Is(err, stop) {
		t.Fatalf("err %v", err)
	}
}

// TestWatchdogCheck drives the idle timer's check by hand (no clock
// assertions): a data line within the idle time re-arms the timer, a
// silence of the idle time cancels with the idle TimeoutError, and after
// stop nothing is re-armed.
func TestWatchdogCheck(t *testing.T) {
	var cause error
	cancel := func(err error) { cause = err }
	w := newWatchdog(cancel, time.Hour, time.Hour)
	w.data() // the first data line: the idle timer is armed
	if w.idleT == nil || !w.idleT.Stop() {
		t.Fatal("the first data line armed no idle timer")
	}
	w.data() // a later one: only noted
	w.check()
	if cause != nil {
		t.Fatalf("cancelled within the idle time: %v", cause)
	}
	if !w.idleT.Stop() {
		t.Fatal("check did not re-arm the timer for the rest of the idle time")
	}
	w.last.Store(int64(-2 * time.Hour)) // the last data line two hours before base
	w.check()
	var te *TimeoutError
	if !errors.As(cause, &te) || te.FirstByte || te.After != time.Hour {
		t.Fatalf("cause %v, want the idle timeout", cause)
	}
	cause = nil
	w.last.Store(int64(time.Since(w.base)))
	w.stop()
	w.check()
	if cause != nil || w.idleT.Stop() {
		t.Fatalf("re-armed or cancelled after stop: %v", cause)
	}
}
