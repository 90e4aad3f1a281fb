// Package jwks keeps one JWK set fetched from a source (a URL or a file):
// loaded on first use, again when it is older than a maximum age or names
// no key a signature asks for, and in the background on a schedule. It is
// the one key cache of the project: the vessel's token issuers, push
// receivers (vessel/client/webhook) and agent-card verification
// (vessel/client) all hold their keys in one.
//
// jwx v3's own jwk.Cache (httprc v3) is not used: it offers no floor
// between loads forced by unknown kids, which is what keeps made-up kids
// from turning a verifier into a load generator against the key server,
// and its registration API makes a per-entry rate limit awkward. What is
// left is small: an atomic pointer to the last good set and a mutex.
package jwks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// Source returns a JWK set document.
type Source func(ctx context.Context) ([]byte, error)

// DefaultMaxBytes bounds a key set document read by URL and File.
const DefaultMaxBytes = 1 << 20

// URL is a Source that GETs u with hc (which may carry a proxy): no
// redirect is followed, only 200 is accepted, the exchange is bounded by
// timeout (none when 0) and the body by maxBytes (DefaultMaxBytes when 0).
func URL(hc *http.Client, u string, timeout time.Duration, maxBytes int64) Source {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return func(ctx context.Context) ([]byte, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", u, err)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", u, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("jwks %s: HTTP %d", u, resp.StatusCode)
		}
		if resp.ContentLength > maxBytes {
			return nil, fmt.Errorf("jwks %s: %d bytes, more than %d", u, resp.ContentLength, maxBytes)
		}
		body, err := readBounded(resp.Body, maxBytes)
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", u, err)
		}
		return body, nil
	}
}

// File is a Source reading path on every load, so keys rotate by
// replacing the file.
func File(path string, maxBytes int64) Source {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return func(context.Context) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("jwks file: %w", err)
		}
		defer f.Close()
		body, err := readBounded(f, maxBytes)
		if err != nil {
			return nil, fmt.Errorf("jwks file %s: %w", path, err)
		}
		return body, nil
	}
}

// Static is a Source that always gives doc.
func Static(doc []byte) Source {
	doc = bytes.Clone(doc)
	return func(context.Context) ([]byte, error) { return doc, nil }
}

func readBounded(r io.Reader, maxBytes int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if int64(len(body)) > maxBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxBytes)
	}
	return body, nil
}

// Config says where a Cache loads from and when.
type Config struct {
	// Source gives the set's document; required.
	Source Source
	// Accept checks a parsed set and returns the set to hold (for example
	// only its public signing keys); an error refuses the load and the
	// previous set stays. Nil holds any non-empty set as parsed.
	Accept func(jwk.Set) (jwk.Set, error)
	// Refresh, when positive, loads the set in the background that often.
	Refresh time.Duration
	// MaxAge, when positive, makes a set older than this load again on
	// use; the stale set stays in use while that load runs, and when it
	// fails.
	MaxAge time.Duration
	// MinInterval is the least time between two loads made on use (no set
	// yet, stale, or an unknown kid); background loads do not count.
	MinInterval time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// OnError, when set, hears of background load failures.
	OnError func(error)
}

// ErrClosed is returned (wrapped) by a load after the Cache's context ended.
var ErrClosed = errors.New("jwks: the key cache is closed")

var (
	errRateLimited = errors.New("key set load skipped: the last attempt was too recent")
	errBusy        = errors.New("key set load under way")
)

// Cache holds one key set. It is safe for concurrent use.
type Cache struct {
	cfg  Config
	life context.Context

	// current is read without a lock: a load under way never holds up a
	// verification that the held keys can answer.
	current atomic.Pointer[held]

	loadMu      sync.Mutex // serializes loads; guards lastAttempt
	lastAttempt time.Time

	errMu   sync.Mutex
	lastErr error
}

type held struct {
	set jwk.Set
	at  time.Time
}

// New returns a Cache; it loads nothing yet (Prime does). Loads fail with
// ErrClosed once ctx ends, which also stops the background refresh; the
// keys held by then stay usable.
func New(ctx context.Context, cfg Config) *Cache {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cache{cfg: cfg, life: ctx}
	if cfg.Refresh > 0 {
		go c.refreshLoop()
	}
	return c
}

func (c *Cache) refreshLoop() {
	t := time.NewTicker(c.cfg.Refresh)
	defer t.Stop()
	for {
		select {
		case <-c.life.Done():
			return
		case <-t.C:
			c.loadMu.Lock()
			err := c.loadLocked(c.life)
			c.loadMu.Unlock()
			if err != nil && c.cfg.OnError != nil && !errors.Is(err, ErrClosed) {
				c.cfg.OnError(err)
			}
		}
	}
}

// Prime loads the set now, outside the rate limit. A load that works
// counts as the last attempt (the next load on use waits MinInterval); a
// failure is only remembered (Err), and the first use tries again.
func (c *Cache) Prime(ctx context.Context) error {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	at := c.cfg.Now()
	err := c.loadLocked(ctx)
	if err == nil {
		c.lastAttempt = at
	}
	return err
}

// Err is the last load's failure: nil when the last load worked or none
// was made.
func (c *Cache) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.lastErr
}

func (c *Cache) setErr(err error) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	c.lastErr = err
}

// Keys returns the held set, loading it when none is held yet or (with
// MaxAge) it is stale. A stale set is returned when its reload fails, is
// rate limited or is made by another caller.
func (c *Cache) Keys(ctx context.Context) (jwk.Set, error) {
	cur := c.current.Load()
	if cur != nil && (c.cfg.MaxAge <= 0 || c.cfg.Now().Sub(cur.at) < c.cfg.MaxAge) {
		return cur.set, nil
	}
	err := c.load(ctx, cur == nil)
	if cur = c.current.Load(); cur == nil {
		if err == nil || errors.Is(err, errRateLimited) {
			if last := c.Err(); last != nil {
				err = last
			} else if err == nil {
				err = errors.New("no keys loaded")
			}
		}
		return nil, fmt.Errorf("jwks: no key set yet: %w", err)
	}
	return cur.set, nil
}

// KeysFor returns the held set after making sure, within the rate limit,
// that it is the newest when it lacks kid: a key rotated in is picked up.
// The set returned may still lack kid; the caller says so. An empty kid
// asks for no reload.
func (c *Cache) KeysFor(ctx context.Context, kid string) (jwk.Set, error) {
	set, err := c.Keys(ctx)
	if err != nil {
		return nil, err
	}
	if kid == "" {
		return set, nil
	}
	if _, ok := set.LookupKeyID(kid); ok {
		return set, nil
	}
	_ = c.load(ctx, true) // a failed or skipped load leaves the held set
	return c.current.Load().set, nil
}

// load loads unless an attempt was made less than MinInterval ago; with
// wait false it returns at once when another load is running.
func (c *Cache) load(ctx context.Context, wait bool) error {
	if wait {
		c.loadMu.Lock()
	} else if !c.loadMu.TryLock() {
		return errBusy
	}
	defer c.loadMu.Unlock()
	now := c.cfg.Now()
	if !c.lastAttempt.IsZero() && now.Sub(c.lastAttempt) < c.cfg.MinInterval {
		return errRateLimited
	}
	c.lastAttempt = now
	return c.loadLocked(ctx)
}

// loadLocked fetches, parses and checks the set; loadMu is held.
func (c *Cache) loadLocked(ctx context.Context) error {
	if c.life.Err() != nil {
		return ErrClosed
	}
	// The caller's context bounds the load, and so does the cache's life.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	err := c.fetch(ctx)
	c.setErr(err)
	return err
}

func (c *Cache) fetch(ctx context.Context) error {
	doc, err := c.cfg.Source(ctx)
	if err != nil {
		if c.life.Err() != nil {
			return fmt.Errorf("%w: %w", ErrClosed, err)
		}
		return err
	}
	set, err := jwk.Parse(doc)
	if err != nil {
		return fmt.Errorf("jwks: parse the key set: %w", err)
	}
	if c.cfg.Accept != nil {
		if set, err = c.cfg.Accept(set); err != nil {
			return fmt.Errorf("jwks: %w", err)
		}
	} else if set.Len() == 0 {
		return errors.New("jwks: the key set is empty")
	}
	c.current.Store(&held{set: set, at: c.cfg.Now()})
	return nil
}
