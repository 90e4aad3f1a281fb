package jwt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// keySource loads an issuer's key set (from its jwks_url or jwks_file).
type keySource func(ctx context.Context) (jwk.Set, error)

// keyCache holds one issuer's keys. Reloads are serialized and rate
// limited: at most one load attempt per minInterval, however many tokens
// name an unknown kid, so a flood of made-up kids cannot make the vessel
// hammer the identity provider.
type keyCache struct {
	load        keySource
	minInterval time.Duration // least time between two load attempts
	maxAge      time.Duration // a set older than this is reloaded when next needed
	now         func() time.Time

	mu       sync.RWMutex
	keys     []jwk.Key // public, signature-use, asymmetric keys only
	loadedAt time.Time // last successful load

	loadMu      sync.Mutex // serializes loads
	lastAttempt time.Time
}

func (c *keyCache) snapshot() ([]jwk.Key, time.Time) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys, c.loadedAt
}

// get returns the current keys, loading them when there are none yet or
// they are older than maxAge. A stale set stays in use while it is being
// reloaded by someone else, and when the reload fails.
func (c *keyCache) get(ctx context.Context) ([]jwk.Key, error) {
	keys, at := c.snapshot()
	if keys != nil && c.now().Sub(at) < c.maxAge {
		return keys, nil
	}
	err := c.reload(ctx, keys == nil)
	if keys, _ = c.snapshot(); keys == nil {
		if err == nil {
			err = errors.New("no keys loaded")
		}
		return nil, err
	}
	return keys, nil
}

// refresh reloads because a token named a kid the set lacks; rate limited.
// It waits for a reload already under way, which may bring that kid.
func (c *keyCache) refresh(ctx context.Context) []jwk.Key {
	_ = c.reload(ctx, true) // a failed or skipped reload leaves the old keys
	keys, _ := c.snapshot()
	return keys
}

var (
	errRateLimited = errors.New("key set reload skipped: rate limited")
	errBusy        = errors.New("key set reload under way")
)

// reload loads the key set unless one was attempted less than minInterval
// ago. With wait false it returns at once if another load is running.
func (c *keyCache) reload(ctx context.Context, wait bool) error {
	if wait {
		c.loadMu.Lock()
	} else if !c.loadMu.TryLock() {
		return errBusy
	}
	defer c.loadMu.Unlock()
	if !c.lastAttempt.IsZero() && c.now().Sub(c.lastAttempt) < c.minInterval {
		return errRateLimited
	}
	c.lastAttempt = c.now()
	set, err := c.load(ctx)
	if err != nil {
		return err
	}
	keys, err := usableKeys(set)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.keys, c.loadedAt = keys, c.now()
	c.mu.Unlock()
	return nil
}

// usableKeys keeps the public part of each asymmetric signing key. Symmetric
// (oct) keys are dropped outright: a shared secret published in a key set is
// never a way to sign tokens for the vessel.
func usableKeys(set jwk.Set) ([]jwk.Key, error) {
	keys := []jwk.Key{}
	for i := 0; i < set.Len(); i++ {
		k, ok := set.Key(i)
		if !ok {
			continue
		}
		switch k.KeyType() {
		case jwa.RSA, jwa.EC, jwa.OKP:
		default:
			continue
		}
		if u := k.KeyUsage(); u != "" && u != string(jwk.ForSignature) {
			continue
		}
		pub, err := jwk.PublicKeyOf(k)
		if err != nil {
			continue
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, errors.New("key set has no usable asymmetric signing key")
	}
	return keys, nil
}

// maxJWKSBytes bounds a key set document.
const maxJWKSBytes = 1 << 20

// urlSource fetches a JWKS over HTTP with the given client (in the vessel,
// one whose proxy is the egress). Redirects are not followed and the body is
// bounded.
func urlSource(client *http.Client, url string, timeout time.Duration) keySource {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return func(ctx context.Context) (jwk.Set, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", url, err)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", url, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("jwks %s: HTTP %d", url, resp.StatusCode)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
		if err != nil {
			return nil, fmt.Errorf("jwks %s: read: %w", url, err)
		}
		if len(body) > maxJWKSBytes {
			return nil, fmt.Errorf("jwks %s: larger than %d bytes", url, maxJWKSBytes)
		}
		set, err := jwk.Parse(body)
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", url, err)
		}
		return set, nil
	}
}

// fileSource reads a JWKS file; re-read on reload, so keys can be rotated by
// replacing the file.
func fileSource(path string) keySource {
	return func(context.Context) (jwk.Set, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("jwks file: %w", err)
		}
		defer f.Close()
		body, err := io.ReadAll(io.LimitReader(f, maxJWKSBytes+1))
		if err != nil {
			return nil, fmt.Errorf("jwks file %s: %w", path, err)
		}
		if len(body) > maxJWKSBytes {
			return nil, fmt.Errorf("jwks file %s: larger than %d bytes", path, maxJWKSBytes)
		}
		set, err := jwk.Parse(body)
		if err != nil {
			return nil, fmt.Errorf("jwks file %s: %w", path, err)
		}
		return set, nil
	}
}
