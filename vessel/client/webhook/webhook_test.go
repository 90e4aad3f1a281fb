package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/client/internal/testsign"
	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

var kids atomic.Int64

func keys(t testing.TB) (*testsign.Keys, []byte) {
	t.Helper()
	k := testsign.New(t, fmt.Sprintf("k%d", kids.Add(1)))
	return k, testsign.JWKS(k)
}

func static(t testing.TB, jwks []byte) webhook.KeySource {
	t.Helper()
	ks, err := webhook.StaticKeys(jwks)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func body(t testing.TB, state a2a.TaskState) []byte {
	t.Helper()
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: state}}
	b, err := json.Marshal(a2a.StreamResponse{Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(t testing.TB, k *testsign.Keys, b []byte, aud, task, id string, at time.Time) string {
	t.Helper()
	sig, err := k.SignPush(b, cardsig.PushClaims{Audience: aud, TaskID: task, DeliveryID: id, IssuedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func postFull(t *testing.T, url string, b []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", webhook.ContentType)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(msg)
}

func post(t *testing.T, url string, b []byte, hdr map[string]string) int {
	t.Helper()
	c, _ := postFull(t, url, b, hdr)
	return c
}

// recorder counts Handle calls per delivery id.
type recorder struct {
	mu  sync.Mutex
	got []*webhook.Delivery
}

func (r *recorder) handle(_ context.Context, d *webhook.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, d)
	return nil
}

func (r *recorder) n() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// serve starts a Receiver at <loopback>/hook with its URL set to that.
func serve(t *testing.T, rcv *webhook.Receiver) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/hook", rcv)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	rcv.URL = srv.URL + "/hook"
	return rcv.URL
}

// A signed delivery with the token is handled once; a repeat of its id is
// acknowledged without a second call; forgeries, and signatures bound to
// another receiver, task, delivery or time, are refused.
func TestReceiver(t *testing.T) {
	k, jwks := keys(t)
	other, _ := keys(t)
	rec := &recorder{}
	rcv := &webhook.Receiver{Token: "tok", Keys: static(t, jwks), Handle: rec.handle}
	url := serve(t, rcv)
	b := body(t, a2a.TaskStateCompleted)
	now := time.Now()
	sig := sign(t, k, b, url, "t1", "d1", now)
	good := map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d1", webhook.SignatureHeader: sig, webhook.AttemptHeader: "3"}
	for range 2 {
		if c := post(t, url, b, good); c != http.StatusNoContent {
			t.Fatalf("good delivery: %d", c)
		}
	}
	if len(rec.got) != 1 || rec.got[0].TaskID != "t1" || rec.got[0].State != a2a.TaskStateCompleted || rec.got[0].Attempt != 3 ||
		rec.got[0].KeyID != k.KeyID() || rec.got[0].IssuedAt.Unix() != now.Unix() {
		t.Fatalf("handled %+v", rec.got)
	}
	hdr := func(id, sig string) map[string]string {
		return map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: id, webhook.SignatureHeader: sig}
	}
	for name, c := range map[string]struct {
		body []byte
		hdr  map[string]string
		want int
		why  string
	}{
		"no token":        {b, map[string]string{webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: sign(t, k, b, url, "t1", "d2", now)}, 401, "token"},
		"wrong token":     {b, map[string]string{webhook.TokenHeader: "x", webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: sign(t, k, b, url, "t1", "d2", now)}, 401, "token"},
		"no signature":    {b, hdr("d2", ""), 401, "no X-Vessel-Signature"},
		"moved id":        {b, hdr("d2", sign(t, k, b, url, "t1", "d3", now)), 401, `signed for delivery "d3"`},
		"other task":      {b, hdr("d2", sign(t, k, b, url, "t2", "d2", now)), 401, `signed for task "t2"`},
		"other receiver":  {b, hdr("d2", sign(t, k, b, url+"2", "t1", "d2", now)), 401, "received at"},
		"too old":         {b, hdr("d2", sign(t, k, b, url, "t1", "d2", now.Add(-7*time.Minute))), 401, "older than"},
		"from the future": {b, hdr("d2", sign(t, k, b, url, "t1", "d2", now.Add(3*time.Minute))), 401, "ahead of this clock"},
		"changed body":    {body(t, a2a.TaskStateFailed), hdr("d2", sign(t, k, b, url, "t1", "d2", now)), 401, "verify"},
		"unknown key":     {b, hdr("d2", sign(t, other, b, url, "t1", "d2", now)), 503, "not in the key set"},
		"no delivery id":  {b, map[string]string{webhook.TokenHeader: "tok", webhook.SignatureHeader: sig}, 400, "X-Vessel-Delivery-Id"},
		"signature junk":  {b, hdr("d2", "a.b.c.d"), 401, "malformed"},
		"unbound header":  {b, hdr("d2", unbound(t, b)), 401, "must carry"},
	} {
		if code, msg := postFull(t, url, c.body, c.hdr); code != c.want || !strings.Contains(msg, c.why) {
			t.Errorf("%s: %d %q, want %d and %q", name, code, msg, c.want, c.why)
		}
	}
	if rec.n() != 1 {
		t.Fatalf("a refused delivery was handled: %+v", rec.got)
	}
	// The vessel's keys out of reach is a passing fault: 503, so the vessel
	// delivers again (4xx would be final), and the id is not remembered.
	down := &webhook.Receiver{Keys: failing{}}
	durl := serve(t, down)
	good[webhook.SignatureHeader] = sign(t, k, b, durl, "t1", "d1", now)
	if c := post(t, durl, b, good); c != http.StatusServiceUnavailable {
		t.Fatalf("keys unavailable: %d, want 503", c)
	}
	// Keys without the URL to check aud against: the receiver's fault, 500.
	nourl := httptest.NewServer(&webhook.Receiver{Keys: static(t, jwks)})
	defer nourl.Close()
	if c, msg := postFull(t, nourl.URL, b, good); c != 500 || !strings.Contains(msg, "Receiver.URL") {
		t.Fatalf("no URL: %d %s", c, msg)
	}
	// A failing handler answers 500 and the id is not remembered.
	fail := &webhook.Receiver{Handle: func(context.Context, *webhook.Delivery) error { return errors.New("busy") }}
	fs := httptest.NewServer(fail)
	defer fs.Close()
	for range 2 {
		if c := post(t, fs.URL, b, map[string]string{webhook.DeliveryIDHeader: "d9"}); c != 500 {
			t.Fatalf("failing handler: %d", c)
		}
	}
}

type failing struct{}

func (failing) KeySet(context.Context, string) (jwk.Set, error) {
	return nil, errors.New("connection refused")
}

// unbound is a signature in the old form: typ, kid and delivery id only.
func unbound(t *testing.T, b []byte) string {
	t.Helper()
	k, _ := keys(t)
	set, err := jwk.Parse(k.PrivateJWKS())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := set.Key(0)
	h := jws.NewHeaders()
	_ = h.Set(jws.TypeKey, cardsig.PushType)
	_ = h.Set(jws.KeyIDKey, k.KeyID())
	_ = h.Set(cardsig.DeliveryHeader, "d2")
	sig, err := jws.Sign(nil, jws.WithKey(jwa.ES256(), key, jws.WithProtectedHeaders(h)), jws.WithDetachedPayload(b))
	if err != nil {
		t.Fatal(err)
	}
	return string(sig)
}

// A delivery captured at one receiver and replayed, byte for byte, to
// another (both real loopback servers, the same vessel, token and keys)
// is refused there: the signature's aud names the first.
func TestReplayToAnotherReceiverRefused(t *testing.T) {
	k, jwks := keys(t)
	recA, recB := &recorder{}, &recorder{}
	a := &webhook.Receiver{Token: "tok", Keys: static(t, jwks), Handle: recA.handle}
	bb := &webhook.Receiver{Token: "tok", Keys: static(t, jwks), Handle: recB.handle}
	urlA, urlB := serve(t, a), serve(t, bb)
	b := body(t, a2a.TaskStateCompleted)
	captured := map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d1",
		webhook.SignatureHeader: sign(t, k, b, urlA, "t1", "d1", time.Now()), webhook.AttemptHeader: "1"}
	if c := post(t, urlA, b, captured); c != http.StatusNoContent {
		t.Fatalf("at A: %d", c)
	}
	if c, msg := postFull(t, urlB, b, captured); c != http.StatusUnauthorized || !strings.Contains(msg, urlA) {
		t.Fatalf("replayed at B: %d %s", c, msg)
	}
	if recA.n() != 1 || recB.n() != 0 {
		t.Fatalf("handled at A %d, at B %d", recA.n(), recB.n())
	}
}

// A replay of a delivery (the same request again) is dropped, answered
// 204 so that a repeat of the vessel's own stops its retries; the same
// delivery id signed afresh after a failed attempt is handled; an id is
// forgotten only once its signature is too old to pass, and then the old
// request is refused for its iat. The clock is the Receiver's Now.
func TestReplayedDeliveryDropped(t *testing.T) {
	k, jwks := keys(t)
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var failNext atomic.Bool
	rec := &recorder{}
	rcv := &webhook.Receiver{Keys: static(t, jwks), Now: clock, Handle: func(ctx context.Context, d *webhook.Delivery) error {
		if failNext.Swap(false) {
			return errors.New("database down")
		}
		return rec.handle(ctx, d)
	}}
	url := serve(t, rcv)
	b := body(t, a2a.TaskStateCompleted)
	attempt := func(id string, n int) map[string]string {
		return map[string]string{webhook.DeliveryIDHeader: id, webhook.AttemptHeader: string(rune('0' + n)),
			webhook.SignatureHeader: sign(t, k, b, url, "t1", id, clock())}
	}
	// d1: attempt 1 fails in Handle (500), attempt 2 is handled, attempt
	// 3 (the vessel missed the 204) is a duplicate.
	failNext.Store(true)
	if c := post(t, url, b, attempt("d1", 1)); c != 500 {
		t.Fatalf("failing attempt: %d", c)
	}
	advance(2 * time.Second)
	a2 := attempt("d1", 2)
	if c := post(t, url, b, a2); c != 204 {
		t.Fatalf("redelivery: %d", c)
	}
	advance(2 * time.Second)
	if c := post(t, url, b, attempt("d1", 3)); c != 204 {
		t.Fatalf("repeat: %d", c)
	}
	// A replay of attempt 2 within the window: dropped.
	advance(3 * time.Minute)
	if c := post(t, url, b, a2); c != 204 {
		t.Fatalf("replay: %d", c)
	}
	if rec.n() != 1 || rec.got[0].Attempt != 2 {
		t.Fatalf("handled %d times: %+v", rec.n(), rec.got)
	}
	// Past the window the id may be forgotten, but the replay's iat is
	// refused.
	advance(5 * time.Minute)
	if c, msg := postFull(t, url, b, a2); c != 401 || !strings.Contains(msg, "older than") {
		t.Fatalf("late replay: %d %s", c, msg)
	}
	if rec.n() != 1 {
		t.Fatalf("late replay handled")
	}
}

// While one attempt of a delivery is being handled, another of the same id
// is answered 503 (not 204: the first may still fail, and the vessel must
// come back); Remember bounds the ids kept, a full table answers 503, and
// expired ids make room again.
func TestInFlightAndBounded(t *testing.T) {
	k, jwks := keys(t)
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	entered, release := make(chan struct{}), make(chan struct{})
	rcv := &webhook.Receiver{Keys: static(t, jwks), Now: clock, Remember: 2, Handle: func(_ context.Context, d *webhook.Delivery) error {
		if d.ID == "slow" {
			close(entered)
			<-release
		}
		return nil
	}}
	url := serve(t, rcv)
	b := body(t, a2a.TaskStateCompleted)
	h := func(id string) map[string]string {
		return map[string]string{webhook.DeliveryIDHeader: id, webhook.SignatureHeader: sign(t, k, b, url, "t1", id, clock())}
	}
	done := make(chan int)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
		req.Header.Set("Content-Type", webhook.ContentType)
		for k, v := range h("slow") {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-entered
	if c := post(t, url, b, h("slow")); c != 503 {
		t.Fatalf("in flight: %d", c)
	}
	close(release)
	if c := <-done; c != 204 {
		t.Fatalf("slow: %d", c)
	}
	if c := post(t, url, b, h("d2")); c != 204 {
		t.Fatalf("d2: %d", c)
	}
	if c, msg := postFull(t, url, b, h("d3")); c != 503 || !strings.Contains(msg, "too many") {
		t.Fatalf("full: %d %s", c, msg)
	}
	mu.Lock()
	now = now.Add(webhook.DefaultMaxAge + 3*webhook.DefaultSkew)
	mu.Unlock()
	if c := post(t, url, b, h("d3")); c != 204 {
		t.Fatalf("after expiry: %d", c)
	}
}

// jwksServer serves what its handler says and counts requests.
type jwksServer struct {
	hits atomic.Int32
	mu   sync.Mutex
	h    http.HandlerFunc
	srv  *httptest.Server
}

func newJWKSServer(t *testing.T, h http.HandlerFunc) *jwksServer {
	s := &jwksServer{h: h}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != cardsig.JWKSPath {
			http.NotFound(w, r)
			return
		}
		s.hits.Add(1)
		s.mu.Lock()
		h := s.h
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *jwksServer) set(h http.HandlerFunc) { s.mu.Lock(); s.h = h; s.mu.Unlock() }

func serveBytes(b []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", cardsig.JWKSMediaType)
		_, _ = w.Write(b)
	}
}

// joinSets is the JWK set of both keys' public halves.
func joinSets(t *testing.T, a, b []byte) []byte {
	t.Helper()
	var x, y struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatal("bad sets")
	}
	out, _ := json.Marshal(map[string]any{"keys": append(x.Keys, y.Keys...)})
	return out
}

// Key rotation: the vessel adds a key and signs with it; a receiver whose
// cached set lacks the kid fetches the set again, at most once per
// Refetch (so a stream of forged kids cannot make it hammer the vessel),
// and verifies with the new key.
func TestKeyRotationRefetch(t *testing.T) {
	oldK, oldSet := keys(t)
	newK, newSet := keys(t)
	js := newJWKSServer(t, serveBytes(oldSet))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow, err := webhook.NewKeyCache(ctx, js.srv.URL, webhook.KeyCacheConfig{Refetch: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := webhook.NewKeyCache(ctx, js.srv.URL+"/", webhook.KeyCacheConfig{Refetch: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if n := js.hits.Load(); n != 2 {
		t.Fatalf("fetches at start: %d", n)
	}
	recSlow, recFast := &recorder{}, &recorder{}
	rs := &webhook.Receiver{Keys: slow, Handle: recSlow.handle}
	rf := &webhook.Receiver{Keys: fast, Handle: recFast.handle}
	us, uf := serve(t, rs), serve(t, rf)
	b := body(t, a2a.TaskStateCompleted)
	for _, u := range []string{us, uf} {
		if c := post(t, u, b, map[string]string{webhook.DeliveryIDHeader: "old",
			webhook.SignatureHeader: sign(t, oldK, b, u, "t1", "old", time.Now())}); c != 204 {
			t.Fatalf("old key at %s: %d", u, c)
		}
	}
	if n := js.hits.Load(); n != 2 {
		t.Fatalf("a known kid fetched again: %d", n)
	}
	js.set(serveBytes(joinSets(t, newSet, oldSet)))
	// The slow cache may not fetch yet: 503 (the vessel retries later),
	// however many deliveries name the new kid.
	for i := range 5 {
		id := "new-" + string(rune('a'+i))
		if c, msg := postFull(t, us, b, map[string]string{webhook.DeliveryIDHeader: id,
			webhook.SignatureHeader: sign(t, newK, b, us, "t1", id, time.Now())}); c != 503 || !strings.Contains(msg, "not in the key set") {
			t.Fatalf("rate-limited refetch: %d %s", c, msg)
		}
	}
	if n := js.hits.Load(); n != 2 {
		t.Fatalf("refetches past the rate limit: %d", n)
	}
	time.Sleep(5 * time.Millisecond) // more than the fast cache's Refetch
	if c, msg := postFull(t, uf, b, map[string]string{webhook.DeliveryIDHeader: "new",
		webhook.SignatureHeader: sign(t, newK, b, uf, "t1", "new", time.Now())}); c != 204 {
		t.Fatalf("new key after refetch: %d %s", c, msg)
	}
	if n := js.hits.Load(); n != 3 || recFast.n() != 2 || recFast.got[1].KeyID != newK.KeyID() {
		t.Fatalf("fetches %d, handled %+v", n, recFast.got)
	}
}

// The key endpoint down: the set last fetched keeps verifying (a refetch
// for an unknown kid fails and changes nothing); down from the start, the
// receiver answers 503 naming the failure, and picks the set up once the
// endpoint is back.
func TestKeysDownStaleSetUsed(t *testing.T) {
	k, set := keys(t)
	other, _ := keys(t)
	js := newJWKSServer(t, serveBytes(set))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kc, err := webhook.NewKeyCache(ctx, js.srv.URL, webhook.KeyCacheConfig{Refetch: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rcv := &webhook.Receiver{Keys: kc, Handle: rec.handle}
	u := serve(t, rcv)
	b := body(t, a2a.TaskStateCompleted)
	js.set(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusBadGateway) })
	time.Sleep(5 * time.Millisecond)
	// An unknown kid forces a fetch, which fails: still 503 for it...
	if c := post(t, u, b, map[string]string{webhook.DeliveryIDHeader: "x",
		webhook.SignatureHeader: sign(t, other, b, u, "t1", "x", time.Now())}); c != 503 {
		t.Fatalf("unknown kid, keys down: %d", c)
	}
	if err := kc.Err(); err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatalf("last fetch error %v", err)
	}
	// ...and the stale set still verifies the vessel's key.
	time.Sleep(5 * time.Millisecond)
	if c, msg := postFull(t, u, b, map[string]string{webhook.DeliveryIDHeader: "d1",
		webhook.SignatureHeader: sign(t, k, b, u, "t1", "d1", time.Now())}); c != 204 || rec.n() != 1 {
		t.Fatalf("stale set: %d %s", c, msg)
	}

	// Down from the start.
	js2 := newJWKSServer(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	kc2, err := webhook.NewKeyCache(ctx, js2.srv.URL, webhook.KeyCacheConfig{Refetch: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r2 := &webhook.Receiver{Keys: kc2, Handle: rec.handle}
	u2 := serve(t, r2)
	h2 := map[string]string{webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: sign(t, k, b, u2, "t1", "d2", time.Now())}
	time.Sleep(5 * time.Millisecond)
	if c, msg := postFull(t, u2, b, h2); c != 503 || !strings.Contains(msg, "no key set") || !strings.Contains(msg, "503") {
		t.Fatalf("never fetched: %d %s", c, msg)
	}
	js2.set(serveBytes(set))
	time.Sleep(5 * time.Millisecond)
	if c, msg := postFull(t, u2, b, h2); c != 204 || rec.n() != 2 {
		t.Fatalf("endpoint back: %d %s", c, msg)
	}
}

// A hostile or broken key endpoint: too large (declared or streamed),
// not JSON, empty, too many keys, a private key: each refused with an
// error that says which, answered 503.
func TestHostileJWKS(t *testing.T) {
	k, set := keys(t)
	raw := k.PrivateJWKS() // a private key set
	var one struct {
		Keys []json.RawMessage `json:"keys"`
	}
	_ = json.Unmarshal(set, &one)
	many := make([]json.RawMessage, 40)
	for i := range many {
		many[i] = one.Keys[0]
	}
	manyJSON, _ := json.Marshal(map[string]any{"keys": many})
	huge := []byte(`{"keys":[` + strings.Repeat(" ", 2<<20) + `]}`)
	for name, c := range map[string]struct {
		h   http.HandlerFunc
		why string
	}{
		"never answers": {func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, "(deadline|Timeout) exceeded"},
		"declared huge": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(huge)))
			serveBytes(huge)(w, r)
		}, "more than 65536"},
		"streamed huge": {func(w http.ResponseWriter, _ *http.Request) {
			for range 64 {
				_, _ = w.Write([]byte(strings.Repeat(" ", 32<<10)))
				w.(http.Flusher).Flush()
			}
		}, "larger than 65536 bytes"},
		"not JSON":    {serveBytes([]byte("<html>hello")), "parse"},
		"empty":       {serveBytes([]byte(`{"keys":[]}`)), "empty"},
		"many keys":   {serveBytes(manyJSON), "40 keys, more than 32"},
		"private key": {serveBytes(raw), "not an EC public key"},
	} {
		t.Run(name, func(t *testing.T) {
			js := newJWKSServer(t, c.h)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			kc, err := webhook.NewKeyCache(ctx, js.srv.URL, webhook.KeyCacheConfig{HTTPClient: &http.Client{Timeout: 200 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			why := regexp.MustCompile(c.why)
			if err := kc.Err(); err == nil || !why.MatchString(err.Error()) {
				t.Fatalf("fetch error %v, want %q", err, c.why)
			}
			rcv := &webhook.Receiver{Keys: kc}
			u := serve(t, rcv)
			b := body(t, a2a.TaskStateCompleted)
			code, msg := postFull(t, u, b, map[string]string{webhook.DeliveryIDHeader: "d",
				webhook.SignatureHeader: sign(t, k, b, u, "t1", "d", time.Now())})
			if code != 503 || !why.MatchString(msg) {
				t.Fatalf("%d %s", code, msg)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	k, jwks := keys(f)
	b := body(f, a2a.TaskStateCompleted)
	const url = "http://127.0.0.1:1/hook"
	sig := sign(f, k, b, url, "t1", "d1", time.Now())
	f.Add(b, sig, "d1")
	f.Add([]byte(`{"task":{"id":"x","status":{"state":"TASK_STATE_FAILED"}}}`), "", "d2")
	f.Add([]byte(`{"message":{}}`), "e30..", "d3")
	rcv := &webhook.Receiver{URL: url, Keys: static(f, jwks)}
	plain := &webhook.Receiver{}
	f.Fuzz(func(t *testing.T, body []byte, sig, id string) {
		for _, r := range []*webhook.Receiver{rcv, plain} {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", webhook.ContentType)
			req.Header.Set(webhook.DeliveryIDHeader, id)
			req.Header.Set(webhook.SignatureHeader, sig)
			d, err := r.Read(req)
			if err == nil && (d.TaskID == "" && d.State == "" && d.Event == nil) {
				t.Fatalf("accepted an empty delivery")
			}
			if err == nil && r == rcv && (d.KeyID == "" || d.ID != id) {
				t.Fatalf("signed receiver accepted without a key id")
			}
		}
	})
}
