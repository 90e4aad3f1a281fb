package jwt

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

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// keySet is one issuer's keys, held in the Verifier's jwk.Cache. jwk.Cache
// fetches, parses and refreshes the set every maxAge in the background;
// keySet adds what the cache lacks: a load on first use, a reload when a
// token names an unknown kid or the set is older than maxAge, and a floor of
// minInterval between two such loads, however many tokens ask, so made-up
// kids cannot turn the vessel into a load generator against the identity
// provider.
//
// Each load registers a new cache entry ("<issuer id>#<n>") and drops the
// previous one. The cache (httprc v1) schedules a further background fetch
// after every fetch, forced ones included, and never merges schedules: a
// forced Refresh of one entry would add a perpetual hourly fetch each time.
// A dropped entry's schedule ends at its next turn, so only one lives.
type keySet struct {
	issuerID    string
	cache       *jwk.Cache
	register    func(entry string) error // registers a cache entry for this issuer's source
	life        context.Context          // the cache's; done once the Verifier is closed
	minInterval time.Duration
	maxAge      time.Duration
	now         func() time.Time

	// current mirrors the cache's last good set, written by postFetch. It is
	// read without jwk.Cache.Get because the cache holds an entry's lock for
	// the whole of a fetch: reading through it would stall every token for
	// up to the fetch timeout whenever the set is being refreshed.
	current atomic.Pointer[loadedKeys]

	loadMu      sync.Mutex // serializes loads this type asks for; guards the fields below
	lastAttempt time.Time
	generation  int
	entry       string // the live cache entry, "" before the first good load
}

type loadedKeys struct {
	keys []jwk.Key // public, signature-use, asymmetric keys only
	at   time.Time
}

// postFetch runs in the cache after each successful fetch and parse; its
// error leaves the previous set in place.
func (s *keySet) postFetch(_ string, set jwk.Set) (jwk.Set, error) {
	keys, err := usableKeys(set)
	if err != nil {
		return nil, fmt.Errorf("issuer %s: %w", s.issuerID, err)
	}
	s.current.Store(&loadedKeys{keys: keys, at: s.now()})
	return set, nil
}

// get returns the current keys, loading them when there are none yet or
// they are older than maxAge. A stale set stays in use while someone else
// reloads it, and when the reload fails.
func (s *keySet) get(ctx context.Context) ([]jwk.Key, error) {
	cur := s.current.Load()
	if cur != nil && s.now().Sub(cur.at) < s.maxAge {
		return cur.keys, nil
	}
	err := s.reload(ctx, cur == nil)
	if cur = s.current.Load(); cur == nil {
		if err == nil {
			err = errors.New("no keys loaded")
		}
		return nil, err
	}
	return cur.keys, nil
}

// refresh reloads because a token named a kid the set lacks; rate limited.
// It waits for a load already under way, which may bring that kid.
func (s *keySet) refresh(ctx context.Context) []jwk.Key {
	_ = s.reload(ctx, true) // a failed or skipped load leaves the old keys
	if cur := s.current.Load(); cur != nil {
		return cur.keys
	}
	return nil
}

var (
	errRateLimited = errors.New("key set load skipped: the last attempt was too recent")
	errBusy        = errors.New("key set load under way")
)

// reload loads the set through a new cache entry unless an attempt was made
// less than minInterval ago. With wait false it returns at once if another
// load is running.
func (s *keySet) reload(ctx context.Context, wait bool) error {
	if wait {
		s.loadMu.Lock()
	} else if !s.loadMu.TryLock() {
		return errBusy
	}
	defer s.loadMu.Unlock()
	if !s.lastAttempt.IsZero() && s.now().Sub(s.lastAttempt) < s.minInterval {
		return errRateLimited
	}
	s.lastAttempt = s.now()
	s.generation++
	entry := fmt.Sprintf("%s#%d", s.issuerID, s.generation)
	if err := s.register(entry); err != nil {
		return fmt.Errorf("issuer %s: key cache: %w", s.issuerID, err)
	}
	// A closed Verifier's cache has no workers left to take the fetch: end
	// the wait instead of blocking until the caller gives up.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	// A new entry has never been fetched, so Get fetches it now.
	if _, err := s.cache.Get(ctx, entry); err != nil {
		_ = s.cache.Unregister(entry) // and with it the retry it scheduled
		return fmt.Errorf("issuer %s: load key set: %w", s.issuerID, err)
	}
	if s.entry != "" {
		_ = s.cache.Unregister(s.entry)
	}
	s.entry = entry
	return nil
}

// usableKeys keeps the public part of each asymmetric signing key. Symmetric
// (oct) keys are dropped outright: a shared secret published in a key set is
// never a way to sign tokens for the vessel. So are keys meant for
// encryption.
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

// The cache asks a jwk.HTTPClient for each set with Get(entry), where entry
// is the cache entry's name; these clients know their own source and
// ignore it.

// urlFetcher fetches a jwks_url with the configured client (in the vessel,
// the one whose proxy is the egress). Redirects are not followed, the whole
// exchange is bounded by timeout and the body by maxJWKSBytes. The body is
// read here so the cache never sees more than that.
type urlFetcher struct {
	client  *http.Client
	url     string
	timeout time.Duration
}

func newURLFetcher(client *http.Client, url string, timeout time.Duration) *urlFetcher {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &urlFetcher{client: &c, url: url, timeout: timeout}
}

func (f *urlFetcher) Get(string) (*http.Response, error) {
	// jwk.Cache passes no context; the timeout bounds the exchange instead.
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", f.url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", f.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks %s: HTTP %d", f.url, resp.StatusCode)
	}
	body, err := readBounded(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", f.url, err)
	}
	return bufferedResponse(resp.Status, body), nil
}

// fileFetcher reads a jwks_file; re-read on each load, so keys can be
// rotated by replacing the file.
type fileFetcher struct{ path string }

func (f *fileFetcher) Get(string) (*http.Response, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("jwks file: %w", err)
	}
	defer file.Close()
	body, err := readBounded(file)
	if err != nil {
		return nil, fmt.Errorf("jwks file %s: %w", f.path, err)
	}
	return bufferedResponse("200 OK", body), nil
}

func readBounded(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJWKSBytes)
	}
	return body, nil
}

func bufferedResponse(status string, body []byte) *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK, Status: status, Header: http.Header{},
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
	}
}
