package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

// a repeat of an old id that extends its expiry must not keep
// later, expired ids counted against Remember. Remember says a new
// delivery is answered 503 only "when that many unexpired ids are held".
func TestExtendedHeadDoesNotBlockExpiry(t *testing.T) {
	k, jwks := keys(t)
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	rec := &recorder{}
	rcv := &webhook.Receiver{Keys: static(t, jwks), Now: clock, Remember: 2, Handle: rec.handle}
	url := serve(t, rcv)
	b := body(t, a2a.TaskStateCompleted)
	h := func(id string) map[string]string {
		return map[string]string{webhook.DeliveryIDHeader: id, webhook.SignatureHeader: sign(t, k, b, url, "t1", id, clock())}
	}
	for _, id := range []string{"a", "b"} {
		if c := post(t, url, b, h(id)); c != 204 {
			t.Fatalf("%s: %d", id, c)
		}
	}
	// The vessel's own retry of a (its 204 was lost), signed afresh: a
	// repeat, and a's expiry moves on to iat+MaxAge+2*Skew.
	advance(4 * time.Minute)
	if c := post(t, url, b, h("a")); c != 204 || rec.n() != 2 {
		t.Fatalf("repeat of a: %d, %d handled", c, rec.n())
	}
	// b has expired (iat+MaxAge+2*Skew = +7 min); only a is unexpired.
	advance(4 * time.Minute)
	if c, msg := postFull(t, url, b, h("c")); c != 204 {
		t.Fatalf("c with one unexpired id held (Remember 2): %d %s", c, msg)
	}
}

// NewKeyCache's doc says a failed first fetch "is only
// remembered (the first delivery tries again)". With the default Refetch
// the first delivery within a minute of the start does not try: it is
// answered 503 with no fetch.
func TestFirstDeliveryRefetchesAfterFailedStart(t *testing.T) {
	k, set := keys(t)
	js := newJWKSServer(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kc, err := webhook.NewKeyCache(ctx, js.srv.URL, webhook.KeyCacheConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if kc.Err() == nil {
		t.Fatal("the first fetch should have failed")
	}
	js.set(serveBytes(set))
	rec := &recorder{}
	rcv := &webhook.Receiver{Keys: kc, Handle: rec.handle}
	u := serve(t, rcv)
	b := body(t, a2a.TaskStateCompleted)
	c, msg := postFull(t, u, b, map[string]string{webhook.DeliveryIDHeader: "d1",
		webhook.SignatureHeader: sign(t, k, b, u, "t1", "d1", time.Now())})
	if c != 204 {
		t.Fatalf("first delivery after a failed start: %d %s (fetches: %d)", c, strings.TrimSpace(msg), js.hits.Load())
	}
}

// KeyCache.Err is documented "nil when the last fetch worked";
// a background refresh that works after a failed one must clear it.
func TestErrClearedByBackgroundRefresh(t *testing.T) {
	_, set := keys(t)
	js := newJWKSServer(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kc, err := webhook.NewKeyCache(ctx, js.srv.URL, webhook.KeyCacheConfig{Refresh: time.Second, Refetch: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if kc.Err() == nil {
		t.Fatal("the first fetch should have failed")
	}
	js.set(serveBytes(set))
	// Wait (bounded) for a background fetch to have been served, then
	// for Err to follow it.
	deadline := time.Now().Add(10 * time.Second)
	for js.hits.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if js.hits.Load() < 2 {
		t.Fatal("no background refresh within 10 s")
	}
	for kc.Err() != nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := kc.Err(); err != nil {
		t.Fatalf("after a background fetch that worked (%d fetches), Err: %v", js.hits.Load(), err)
	}
}
