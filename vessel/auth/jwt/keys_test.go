package jwt

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

	"github.com/lestrrat-go/jwx/v3/jwa"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// TestKeyReloadRateLimited: tokens naming unknown kids reload the issuer's
// set at most once per RefreshInterval, and a failed reload leaves the
// previous keys in use.
func TestKeyReloadRateLimited(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		f.clk.add(31 * time.Second)
		for j := 0; j < 3; j++ { // the second and third within the interval
			_, _ = f.v.Verify(ctx, signWith(t, f.rs, jwa.RS256(), fmt.Sprintf("unknown-%d-%d", i, j), goodClaims()))
		}
	}
	if n := f.fetches.Load(); n != 5 {
		t.Fatalf("fetches = %d, want 5", n)
	}
	bad := []byte("not json")
	f.jwks.Store(&bad)
	f.clk.add(31 * time.Second)
	_, _ = f.v.Verify(ctx, signWith(t, f.rs, jwa.RS256(), "unknown-again", goodClaims()))
	if n := f.fetches.Load(); n != 6 {
		t.Fatalf("fetches = %d, want 6", n)
	}
	if _, err := f.v.Verify(ctx, sign(t, f.rs, with(goodClaims(), "exp", t0.Add(time.Hour).Unix()))); err != nil {
		t.Fatalf("the previous keys were dropped: %v", err)
	}
}

// recordingTransport is the "egress": every key set request must pass
// through the configured client's transport.
type recordingTransport struct {
	requests atomic.Int64
	accept   atomic.Value
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.requests.Add(1)
	rt.accept.Store(r.Header.Get("Accept"))
	return http.DefaultTransport.RoundTrip(r)
}

// TestJWKSFetchRules: a jwks_url is fetched with the configured client,
// follows no redirect, may be at most 1 MiB and must answer within the
// fetch timeout; otherwise tokens are refused.
func TestJWKSFetchRules(t *testing.T) {
	rs, _, _, _ := newSigners(t)
	doc := jwksOf(t, rs)
	var elsewhere atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write(doc)
	}))
	t.Cleanup(target.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/certs":
			_, _ = w.Write(doc)
		case "/redirect":
			http.Redirect(w, r, target.URL+"/certs", http.StatusFound)
		case "/huge":
			_, _ = w.Write([]byte(`{"keys":[],"pad":"` + strings.Repeat("A", maxJWKSBytes) + `"}`))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	}))
	t.Cleanup(srv.Close)
	rt := &recordingTransport{}
	verifier := func(path string) *Verifier {
		v, err := New(Config{
			Issuers:      []settings.Issuer{{ID: "a", Issuer: iss, Audience: "research-vessel", JWKSURL: srv.URL + path}},
			HTTPClient:   &http.Client{Transport: rt},
			Now:          func() time.Time { return t0 },
			FetchTimeout: 300 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(v.Close)
		return v
	}
	tok := sign(t, rs, with(goodClaims(), "azp", nil))
	if _, err := verifier("/certs").Verify(context.Background(), tok); err != nil {
		t.Fatalf("good key set: %v", err)
	}
	if rt.requests.Load() != 1 || rt.accept.Load() != "application/json" {
		t.Fatalf("configured transport saw %d requests, Accept %q", rt.requests.Load(), rt.accept.Load())
	}
	for _, path := range []string{"/redirect", "/huge", "/slow"} {
		start := time.Now()
		if _, err := verifier(path).Verify(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: accepted or odd error: %v", path, err)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("%s: the fetch timeout was not applied", path)
		}
	}
	if elsewhere.Load() != 0 {
		t.Fatal("a redirect was followed")
	}
}

// TestVerifyAfterClose: a closed Verifier keeps its loaded keys, and a load
// it can no longer make fails at once instead of hanging.
func TestVerifyAfterClose(t *testing.T) {
	f := newFixture(t)
	tok := sign(t, f.rs, goodClaims())
	if _, err := f.v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	f.v.Close()
	if _, err := f.v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("loaded keys lost on Close: %v", err)
	}
	partner := signWith(t, f.other, jwa.RS256(), f.other.kid, map[string]any{"iss": "https://partner.example.test", "sub": "u", "aud": "vessel", "exp": t0.Add(time.Hour).Unix()})
	done := make(chan error, 1)
	go func() { _, err := f.v.Verify(context.Background(), partner); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("a token needing a load after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Verify hangs on a load after Close")
	}
}
