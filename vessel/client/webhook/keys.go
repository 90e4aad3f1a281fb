package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// KeySource gives the vessel's public key set to verify signatures with.
type KeySource interface {
	// KeySet returns the key set. kid is the key a signature names: a
	// source holding no such key may fetch the set anew first.
	KeySet(ctx context.Context, kid string) (jwk.Set, error)
}

// StaticKeys is a fixed key set (a JWK set's JSON), for tests and for
// receivers configured with the vessel's keys by hand.
func StaticKeys(jwks []byte) (KeySource, error) {
	set, err := jwk.Parse(jwks)
	if err != nil {
		return nil, fmt.Errorf("webhook: read the key set: %w", err)
	}
	if set.Len() == 0 {
		return nil, errors.New("webhook: the key set is empty")
	}
	return staticKeys{set}, nil
}

type staticKeys struct{ set jwk.Set }

func (s staticKeys) KeySet(context.Context, string) (jwk.Set, error) { return s.set, nil }

// Defaults of KeyCacheConfig.
const (
	DefaultKeyRefresh = 10 * time.Minute
	DefaultKeyRefetch = time.Minute
	DefaultKeyBytes   = 64 << 10
	DefaultMaxKeys    = 32
	DefaultKeyTimeout = 10 * time.Second
)

// KeyCacheConfig tunes a KeyCache; zero values take the defaults.
type KeyCacheConfig struct {
	// HTTPClient fetches the set (http.DefaultClient). Its transport is
	// wrapped to bound the answer's size; without a Timeout it gets
	// DefaultKeyTimeout, since a fetch under way holds up verifying.
	HTTPClient *http.Client
	// Refresh is how often the set is fetched again in the background.
	Refresh time.Duration
	// Refetch is the least time between two fetches made because a
	// signature names a kid the set lacks, or because no set is held yet:
	// forged kids cannot make the receiver hammer the vessel.
	Refetch time.Duration
	// MaxBytes bounds the JWK set document; MaxKeys the keys in it.
	MaxBytes int64
	MaxKeys  int
}

// KeyCache keeps the vessel's JWK set (served at
// <vessel>/.well-known/jwks.json) in a jwk.Cache: fetched again every
// Refresh, and at once (at most once per Refetch) when a signature names
// an unknown kid, so a rotated-in key is picked up. A failed fetch keeps
// the set held before: a vessel whose key endpoint is down still has its
// deliveries verified with the keys last seen.
type KeyCache struct {
	cache   *jwk.Cache
	url     string
	refetch time.Duration

	mu      sync.Mutex
	lastTry time.Time
	lastErr error
}

// NewKeyCache starts a KeyCache for the vessel at vesselURL (its
// public_url); it fetches once at start, and a failure there is only
// remembered (the first delivery tries again). The cache's background
// refresh stops when ctx ends.
func NewKeyCache(ctx context.Context, vesselURL string, cfg KeyCacheConfig) (*KeyCache, error) {
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultKeyRefresh
	}
	if cfg.Refetch <= 0 {
		cfg.Refetch = DefaultKeyRefetch
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultKeyBytes
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxKeys
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	limited := *hc
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	limited.Transport = limitTransport{rt: rt, max: cfg.MaxBytes}
	if limited.Timeout <= 0 {
		limited.Timeout = DefaultKeyTimeout
	}
	u := strings.TrimSuffix(vesselURL, "/") + cardsig.JWKSPath
	window := max(cfg.Refresh/4, time.Second)
	c := &KeyCache{url: u, refetch: cfg.Refetch}
	c.cache = jwk.NewCache(ctx, jwk.WithRefreshWindow(window), jwk.WithErrSink(sink{c}))
	maxKeys := cfg.MaxKeys
	err := c.cache.Register(u, jwk.WithHTTPClient(&limited), jwk.WithRefreshInterval(cfg.Refresh),
		jwk.WithPostFetcher(jwk.PostFetchFunc(func(_ string, set jwk.Set) (jwk.Set, error) {
			set, err := checkSet(set, maxKeys)
			if err == nil {
				c.fail(nil) // every fetch that works, the background's too
			}
			return set, err
		})))
	if err != nil {
		return nil, fmt.Errorf("webhook: key cache: %w", err)
	}
	c.mu.Lock()
	c.lastTry = time.Now()
	c.mu.Unlock()
	if _, err := c.cache.Refresh(ctx, u); err != nil {
		c.mu.Lock()
		c.lastErr, c.lastTry = err, time.Time{} // the first delivery tries again
		c.mu.Unlock()
	}
	return c, nil
}

// checkSet refuses a set no vessel publishes: empty, too many keys, or a
// key that is not an EC public key with a kid.
func checkSet(set jwk.Set, maxKeys int) (jwk.Set, error) {
	n := set.Len()
	if n == 0 {
		return nil, errors.New("the key set is empty")
	}
	if n > maxKeys {
		return nil, fmt.Errorf("the key set has %d keys, more than %d", n, maxKeys)
	}
	for i := range n {
		k, _ := set.Key(i)
		if _, ok := k.(jwk.ECDSAPublicKey); !ok || k.KeyID() == "" {
			return nil, fmt.Errorf("key %d of the set is not an EC public key with a kid", i)
		}
	}
	return set, nil
}

type sink struct{ c *KeyCache }

func (s sink) Error(err error) { s.c.fail(err) }

func (c *KeyCache) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err
}

// Err is the last fetch failure (nil when the last fetch worked or none
// failed yet).
func (c *KeyCache) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// mayRefetch reports whether a fetch out of turn is allowed now, and
// counts it.
func (c *KeyCache) mayRefetch() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.lastTry) < c.refetch {
		return false
	}
	c.lastTry = time.Now()
	return true
}

func (c *KeyCache) held(ctx context.Context) jwk.Set {
	set, err := c.cache.Get(ctx, c.url)
	if err != nil || set == nil || set.Len() == 0 {
		return nil
	}
	return set
}

// KeySet implements KeySource.
func (c *KeyCache) KeySet(ctx context.Context, kid string) (jwk.Set, error) {
	set := c.held(ctx)
	if set != nil {
		if _, ok := set.LookupKeyID(kid); ok || kid == "" {
			return set, nil
		}
	}
	if c.mayRefetch() {
		fresh, err := c.cache.Refresh(ctx, c.url)
		if err == nil {
			return fresh, nil // the post-fetch hook cleared the last error
		}
		c.fail(err)
	}
	if set != nil {
		return set, nil // stale, or without kid: the caller says which
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("no key set from %s yet: %w", c.url, err)
	}
	return nil, fmt.Errorf("no key set from %s yet", c.url)
}

// limitTransport bounds a JWK set answer: a declared length over max is
// refused before reading, a longer body fails when it passes max.
type limitTransport struct {
	rt  http.RoundTripper
	max int64
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, fmt.Errorf("the key set is %d bytes, more than %d", resp.ContentLength, t.max)
	}
	resp.Body = &limitBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

type limitBody struct {
	rc        io.ReadCloser
	left, max int64
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("the key set is larger than %d bytes", b.max)
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
