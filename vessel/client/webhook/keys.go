package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/client/jwks"
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
	// HTTPClient fetches the set (http.DefaultClient); redirects are not
	// followed and the answer is bounded by MaxBytes. Without a Timeout a
	// fetch gets DefaultKeyTimeout, since a fetch under way holds up
	// verifying.
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
// <vessel>/.well-known/jwks.json) in a jwks.Cache: fetched again every
// Refresh, and at once (at most once per Refetch) when a signature names
// an unknown kid, so a rotated-in key is picked up. A failed fetch keeps
// the set held before: a vessel whose key endpoint is down still has its
// deliveries verified with the keys last seen.
type KeyCache struct {
	cache *jwks.Cache
	url   string
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
	timeout := time.Duration(0)
	if hc.Timeout <= 0 {
		timeout = DefaultKeyTimeout
	}
	u := strings.TrimSuffix(vesselURL, "/") + cardsig.JWKSPath
	maxKeys := cfg.MaxKeys
	c := &KeyCache{url: u}
	c.cache = jwks.New(ctx, jwks.Config{
		Source:      jwks.URL(hc, u, timeout, cfg.MaxBytes),
		Accept:      func(set jwk.Set) (jwk.Set, error) { return checkSet(set, maxKeys) },
		Refresh:     cfg.Refresh,
		MinInterval: cfg.Refetch,
	})
	_ = c.cache.Prime(ctx) // remembered in Err; the first delivery tries again
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
		kid, _ := k.KeyID()
		// In jwx v3 a private EC key also has the public key's methods.
		_, ec := k.(jwk.ECDSAPublicKey)
		if private, err := jwk.IsPrivateKey(k); !ec || err != nil || private || kid == "" {
			return nil, fmt.Errorf("key %d of the set is not an EC public key with a kid", i)
		}
	}
	return set, nil
}

// Err is the last fetch failure (nil when the last fetch worked or none
// failed yet).
func (c *KeyCache) Err() error { return c.cache.Err() }

// KeySet implements KeySource.
func (c *KeyCache) KeySet(ctx context.Context, kid string) (jwk.Set, error) {
	set, err := c.cache.KeysFor(ctx, kid)
	if err != nil {
		return nil, fmt.Errorf("key set from %s: %w", c.url, err) // err says "no key set yet"
	}
	return set, nil
}
