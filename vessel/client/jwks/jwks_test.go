package jwks_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/astraldeep/astralvessel-go/vessel/client/internal/testsign"
	"github.com/astraldeep/astralvessel-go/vessel/client/jwks"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// source serves a replaceable document (or error) and counts loads.
type source struct {
	mu    sync.Mutex
	doc   []byte
	err   error
	loads atomic.Int64
}

func (s *source) set(doc []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc, s.err = doc, err
}

func (s *source) fetch(context.Context) ([]byte, error) {
	s.loads.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doc, s.err
}

func hasKid(t *testing.T, c *jwks.Cache, kid string) bool {
	t.Helper()
	set, err := c.KeysFor(context.Background(), kid)
	if err != nil {
		t.Fatalf("KeysFor(%s): %v", kid, err)
	}
	_, ok := set.LookupKeyID(kid)
	return ok
}

// TestUnknownKidReloadRateLimited: the first use loads; a kid the set
// lacks reloads it, at most once per MinInterval however many ask, so a
// rotated-in key is picked up and made-up kids cost one load per interval.
func TestUnknownKidReloadRateLimited(t *testing.T) {
	a, b := testsign.New(t, "a"), testsign.New(t, "b")
	src := &source{}
	src.set(testsign.JWKS(a), nil)
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	c := jwks.New(t.Context(), jwks.Config{Source: src.fetch, MinInterval: time.Minute, Now: clk.now})
	if !hasKid(t, c, "a") || src.loads.Load() != 1 {
		t.Fatalf("first use: %d loads", src.loads.Load())
	}
	src.set(testsign.JWKS(b, a), nil)
	for range 10 {
		if hasKid(t, c, "b") {
			t.Fatal("reloaded within MinInterval")
		}
	}
	if n := src.loads.Load(); n != 1 {
		t.Fatalf("loads within the interval: %d", n)
	}
	clk.add(time.Minute)
	if !hasKid(t, c, "b") || src.loads.Load() != 2 {
		t.Fatalf("rotated key not picked up: %d loads", src.loads.Load())
	}
	if !hasKid(t, c, "a") || src.loads.Load() != 2 {
		t.Fatalf("a known kid reloaded: %d loads", src.loads.Load())
	}
}

// TestStaleSetKeptWhenReloadFails: a set older than MaxAge is reloaded on
// use; when that fails the stale set stays in use and Err says why, until
// a reload works.
func TestStaleSetKeptWhenReloadFails(t *testing.T) {
	a := testsign.New(t, "a")
	src := &source{}
	src.set(testsign.JWKS(a), nil)
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	c := jwks.New(t.Context(), jwks.Config{Source: src.fetch, MaxAge: time.Hour, MinInterval: time.Minute, Now: clk.now})
	if _, err := c.Keys(t.Context()); err != nil {
		t.Fatal(err)
	}
	src.set([]byte("not json"), nil)
	clk.add(2 * time.Hour)
	set, err := c.Keys(t.Context())
	if err != nil || set.Len() != 1 || src.loads.Load() != 2 {
		t.Fatalf("stale set: %v, %d loads", err, src.loads.Load())
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "parse") {
		t.Fatalf("Err after a failed reload: %v", err)
	}
	src.set(testsign.JWKS(a), nil)
	clk.add(time.Minute)
	if _, err := c.Keys(t.Context()); err != nil || c.Err() != nil || src.loads.Load() != 3 {
		t.Fatalf("reload after recovery: %v, Err %v, %d loads", err, c.Err(), src.loads.Load())
	}
}

// TestAcceptRefuses: a set Accept refuses is not held, and the previous
// one stays; with no set held the error names the cause.
func TestAcceptRefuses(t *testing.T) {
	src := &source{}
	src.set([]byte(`{"keys":[]}`), nil)
	c := jwks.New(t.Context(), jwks.Config{Source: src.fetch})
	if _, err := c.Keys(t.Context()); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty set: %v", err)
	}
	refuse := errors.New("not this one")
	c = jwks.New(t.Context(), jwks.Config{Source: src.fetch, Accept: func(jwk.Set) (jwk.Set, error) { return nil, refuse }})
	if _, err := c.Keys(t.Context()); !errors.Is(err, refuse) {
		t.Fatalf("refused set: %v", err)
	}
}

// TestClosed: once the cache's context ends, a load fails at once with
// ErrClosed and the keys held stay usable.
func TestClosed(t *testing.T) {
	a := testsign.New(t, "a")
	src := &source{}
	src.set(testsign.JWKS(a), nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := jwks.New(ctx, jwks.Config{Source: src.fetch})
	if err := c.Prime(t.Context()); err != nil {
		t.Fatal(err)
	}
	cancel()
	if set, err := c.KeysFor(t.Context(), "b"); err != nil || set.Len() != 1 {
		t.Fatalf("held keys after close: %v", err)
	}
	if err := c.Prime(t.Context()); !errors.Is(err, jwks.ErrClosed) {
		t.Fatalf("load after close: %v", err)
	}
}

// TestBackgroundRefresh: with Refresh the set is loaded again without any
// use, and a working load clears Err.
func TestBackgroundRefresh(t *testing.T) {
	src := &source{}
	src.set(nil, errors.New("down"))
	c := jwks.New(t.Context(), jwks.Config{Source: src.fetch, Refresh: 10 * time.Millisecond})
	if err := c.Prime(t.Context()); err == nil {
		t.Fatal("prime should fail")
	}
	src.set(testsign.JWKS(testsign.New(t, "a")), nil)
	deadline := time.Now().Add(10 * time.Second)
	for c.Err() != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if c.Err() != nil {
		t.Fatalf("no background load cleared Err: %v", c.Err())
	}
}

// TestURLSource: the URL source follows no redirect, takes only 200, and
// refuses a document over its bound, declared or streamed.
func TestURLSource(t *testing.T) {
	doc := testsign.JWKS(testsign.New(t, "a"))
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write(doc)
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write(doc)
		case "/redirect":
			http.Redirect(w, r, other.URL, http.StatusFound)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat(" ", 2048)))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	if b, err := jwks.URL(nil, srv.URL+"/ok", time.Second, 0)(t.Context()); err != nil || string(b) != string(doc) {
		t.Fatalf("ok: %v", err)
	}
	for path, why := range map[string]string{"/redirect": "HTTP 302", "/big": "more than 1024", "/none": "HTTP 404"} {
		if _, err := jwks.URL(nil, srv.URL+path, time.Second, 1024)(t.Context()); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want %q", path, err, why)
		}
	}
	if elsewhere.Load() != 0 {
		t.Fatal("a redirect was followed")
	}
}
