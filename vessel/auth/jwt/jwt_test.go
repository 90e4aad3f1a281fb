package jwt

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var t0 = time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)

// signer is a private key with its kid and algorithm.
type signer struct {
	kid string
	alg jwa.SignatureAlgorithm
	key crypto.Signer
}

var (
	keysOnce sync.Once
	rsaKey   *rsa.PrivateKey
	rsaKey2  *rsa.PrivateKey
)

func rsaKeys(t testing.TB) (*rsa.PrivateKey, *rsa.PrivateKey) {
	keysOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if rsaKey2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return rsaKey, rsaKey2
}

func newSigners(t testing.TB) (rs, ec, ed, other signer) {
	r1, r2 := rsaKeys(t)
	eck, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{"rsa-1", jwa.RS256(), r1}, signer{"ec-1", jwa.ES256(), eck}, signer{"ed-1", jwa.EdDSA(), edk}, signer{"rsa-other", jwa.RS256(), r2}
}

// jwksOf renders the public keys as a JWKS document.
func jwksOf(t testing.TB, ss ...signer) []byte {
	set := jwk.NewSet()
	for _, s := range ss {
		k, err := jwk.Import(s.key.Public())
		if err != nil {
			t.Fatal(err)
		}
		_ = k.Set(jwk.KeyIDKey, s.kid)
		_ = k.Set(jwk.KeyUsageKey, "sig")
		if err := set.AddKey(k); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(t testing.TB, s signer, claims map[string]any) string {
	return signWith(t, s, s.alg, s.kid, claims)
}

func signWith(t testing.TB, s signer, alg jwa.SignatureAlgorithm, kid string, claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	hdr := jws.NewHeaders()
	if kid != "" {
		_ = hdr.Set(jws.KeyIDKey, kid)
	}
	_ = hdr.Set(jws.TypeKey, "JWT")
	out, err := jws.Sign(payload, jws.WithKey(alg, s.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// rawToken builds a token by hand from a header, claims and signature bytes.
func rawToken(hdr, claims any, sig []byte) string {
	h, _ := json.Marshal(hdr)
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString(sig)
}

const iss = "https://iam.example.test/realms/Astral"

func goodClaims() map[string]any {
	return map[string]any{
		"iss":   iss,
		"sub":   "user-42",
		"aud":   []string{"account", "research-vessel"},
		"azp":   "astral-orchestrator",
		"exp":   t0.Add(5 * time.Minute).Unix(),
		"iat":   t0.Add(-time.Minute).Unix(),
		"scope": "openid tools:read tools:search",
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

type fixture struct {
	v                 *Verifier
	clk               *clock
	rs, ec, ed, other signer
	fetches           *atomic.Int64
	jwks              *atomic.Pointer[[]byte]
}

// newFixture serves the "astral" issuer's keys over httptest (loopback)
// and a second issuer "partner" from a jwks_file.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{clk: &clock{t: t0}, fetches: &atomic.Int64{}, jwks: &atomic.Pointer[[]byte]{}}
	f.rs, f.ec, f.ed, f.other = newSigners(t)
	doc := jwksOf(t, f.rs, f.ec, f.ed)
	f.jwks.Store(&doc)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*f.jwks.Load())
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "partner.json"), jwksOf(t, f.other), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := New(Config{
		Issuers: []settings.Issuer{
			{ID: "astral", Issuer: iss + "/", Audience: "research-vessel", JWKSURL: srv.URL + "/certs",
				AuthorizedParties: []string{"astral-orchestrator"}, Agents: []string{"records-agent"}},
			{ID: "partner", Issuer: "https://partner.example.test", Audience: "vessel", JWKSFile: "partner.json",
				Agents: []string{"field-guide"}},
		},
		HTTPClient: srv.Client(),
		BaseDir:    dir,
		Now:        f.clk.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	f.v = v
	return f
}

func TestGoodTokens(t *testing.T) {
	f := newFixture(t)
	for _, s := range []signer{f.rs, f.ec, f.ed} {
		t.Run(s.alg.String(), func(t *testing.T) {
			p, err := f.v.Verify(context.Background(), sign(t, s, goodClaims()))
			if err != nil {
				t.Fatalf("good %s token refused: %v", s.alg, err)
			}
			if p.Owner != "astral|user-42" || p.IssuerID != "astral" || p.Subject != "user-42" {
				t.Fatalf("principal = %+v", p)
			}
			if !slices.Equal(p.Scopes, []string{"openid", "tools:read", "tools:search"}) {
				t.Fatalf("scopes = %v", p.Scopes)
			}
			if !p.MayCall("records-agent") || p.MayCall("field-guide") {
				t.Fatalf("issuer agents not enforced: %v", p.Agents)
			}
		})
	}
	// PS256 with the same RSA key, and a token whose iss has the trailing
	// slash the config lacks (here: config has it, token does not, and the
	// reverse).
	if _, err := f.v.Verify(context.Background(), signWith(t, f.rs, jwa.PS256(), f.rs.kid, goodClaims())); err != nil {
		t.Fatalf("PS256 refused: %v", err)
	}
	if _, err := f.v.Verify(context.Background(), sign(t, f.rs, with(goodClaims(), "iss", iss+"/"))); err != nil {
		t.Fatalf("trailing slash refused: %v", err)
	}
	// No kid: accepted because exactly one key of the set fits RS256.
	if _, err := f.v.Verify(context.Background(), signWith(t, f.rs, jwa.RS256(), "", goodClaims())); err != nil {
		t.Fatalf("no kid, one fitting key: %v", err)
	}
	// scp as a list, aud as a string, within skew of exp.
	c := with(goodClaims(), "scope", nil, "scp", []string{"tools:files", "tools:read"}, "aud", "research-vessel",
		"exp", t0.Add(-20*time.Second).Unix())
	p, err := f.v.Verify(context.Background(), sign(t, f.ec, c))
	if err != nil {
		t.Fatalf("scp/aud string/skew: %v", err)
	}
	if !slices.Equal(p.Scopes, []string{"tools:files", "tools:read"}) {
		t.Fatalf("scp = %v", p.Scopes)
	}
	// The file-based issuer, no azp required there.
	pc := map[string]any{"iss": "https://partner.example.test", "sub": "u", "aud": "vessel", "exp": t0.Add(time.Hour).Unix()}
	p, err = f.v.Verify(context.Background(), sign(t, f.other, pc))
	if err != nil {
		t.Fatalf("file issuer: %v", err)
	}
	if p.Owner != "partner|u" || !p.MayCall("field-guide") || p.MayCall("records-agent") {
		t.Fatalf("partner principal = %+v", p)
	}
	if n := f.fetches.Load(); n != 1 {
		t.Fatalf("jwks fetched %d times, want 1 (cached)", n)
	}
}

func pemOf(t testing.TB, pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func hs256(key []byte, token string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(token))
	return m.Sum(nil)
}

// rawTokenBytes signs an arbitrary payload (even non-JSON) with RS256.
func rawTokenBytes(t testing.TB, hdr map[string]any, payload []byte, s signer) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(hdr)
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key.(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + enc.EncodeToString(sig)
}

// TestKeyAlgMismatch: a key whose own alg disagrees with the header is not
// used, even though its type fits.
func TestKeyAlgMismatch(t *testing.T) {
	rs, _, _, _ := newSigners(t)
	k, _ := jwk.Import(rs.key.Public())
	_ = k.Set(jwk.KeyIDKey, "k")
	_ = k.Set(jwk.AlgorithmKey, jwa.RS512())
	set := jwk.NewSet()
	_ = set.AddKey(k)
	// An oct key under the same kid must never be used either.
	oct, _ := jwk.Import([]byte("a shared secret of some length.."))
	_ = oct.Set(jwk.KeyIDKey, "k")
	_ = set.AddKey(oct)
	doc, _ := json.Marshal(set)
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "k.json"), doc, 0o600)
	v, err := New(Config{Issuers: []settings.Issuer{{ID: "a", Issuer: iss, Audience: "research-vessel", JWKSFile: filepath.Join(dir, "k.json")}},
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), signWith(t, rs, jwa.RS256(), "k", goodClaims())); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("RS256 under an RS512 key: err = %v", err)
	}
	if _, err := v.Verify(context.Background(), signWith(t, rs, jwa.RS512(), "k", goodClaims())); err != nil {
		t.Fatalf("RS512 under its key: %v", err)
	}
	h, _ := json.Marshal(map[string]any{"alg": "HS256", "kid": "k"})
	c, _ := json.Marshal(goodClaims())
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	tok := signing + "." + base64.RawURLEncoding.EncodeToString(hs256([]byte("a shared secret of some length.."), signing))
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("HS256 with a published oct key accepted: %v", err)
	}
}

// TestUnknownKidFlood: many tokens naming unknown kids cause at most one
// extra fetch per refresh interval.
func TestUnknownKidFlood(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.v.Verify(ctx, sign(t, f.rs, goodClaims())); err != nil {
		t.Fatal(err)
	}
	if n := f.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := f.v.Verify(ctx, signWith(t, f.rs, jwa.RS256(), fmt.Sprintf("made-up-%d", i), goodClaims()))
			if !errors.Is(err, ErrInvalidToken) {
				t.Errorf("unknown kid accepted or odd error: %v", err)
			}
		}(i)
	}
	wg.Wait()
	// The initial load happened at t0, so within the interval no refetch.
	if n := f.fetches.Load(); n != 1 {
		t.Fatalf("flood caused %d fetches, want 1", n)
	}
	f.clk.add(31 * time.Second)
	for i := 0; i < 200; i++ {
		_, _ = f.v.Verify(ctx, signWith(t, f.rs, jwa.RS256(), fmt.Sprintf("again-%d", i), goodClaims()))
	}
	if n := f.fetches.Load(); n != 2 {
		t.Fatalf("after one interval: %d fetches, want 2", n)
	}
}

// TestKeyRotation: a token with a new kid is accepted once the key set
// that carries it is refetched.
func TestKeyRotation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.v.Verify(ctx, sign(t, f.rs, goodClaims())); err != nil {
		t.Fatal(err)
	}
	_, newEC, _, _ := newSigners(t)
	newEC.kid = "ec-2"
	doc := jwksOf(t, f.rs, newEC)
	f.jwks.Store(&doc)
	f.clk.add(time.Minute)
	if _, err := f.v.Verify(ctx, sign(t, newEC, with(goodClaims(), "exp", t0.Add(time.Hour).Unix()))); err != nil {
		t.Fatalf("rotated key refused: %v", err)
	}
	if n := f.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
}

// TestJWKSDown: a failing key endpoint refuses tokens and is not retried
// faster than the refresh interval.
func TestJWKSDown(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer srv.Close()
	rs, _, _, _ := newSigners(t)
	v, err := New(Config{Issuers: []settings.Issuer{{ID: "a", Issuer: iss, Audience: "research-vessel", JWKSURL: srv.URL}},
		HTTPClient: srv.Client(), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := v.Verify(context.Background(), sign(t, rs, goodClaims())); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("accepted with no keys: %v", err)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("down endpoint hit %d times, want 1", hits.Load())
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []settings.Issuer{
		{ID: "", Issuer: iss, Audience: "a", JWKSFile: "x"},
		{ID: "a|b", Issuer: iss, Audience: "a", JWKSFile: "x"},
		{ID: "a", Issuer: "", Audience: "a", JWKSFile: "x"},
		{ID: "a", Issuer: iss, Audience: "", JWKSFile: "x"},
		{ID: "a", Issuer: iss, Audience: "a"},
		{ID: "a", Issuer: iss, Audience: "a", JWKSFile: "x", JWKSURL: "http://127.0.0.1/"},
	}
	for i, ic := range bad {
		if _, err := New(Config{Issuers: []settings.Issuer{ic}}); err == nil {
			t.Errorf("case %d accepted: %+v", i, ic)
		}
	}
	if _, err := New(Config{Issuers: []settings.Issuer{{ID: "a", Issuer: iss, Audience: "a", JWKSFile: "x"}, {ID: "a", Issuer: iss, Audience: "a", JWKSFile: "x"}}}); err == nil {
		t.Error("duplicate id accepted")
	}
}

// FuzzVerify: arbitrary input never panics, every refusal wraps
// ErrInvalidToken, and nothing is accepted unless its signed part (header
// and claims) is exactly that of a valid seed: the fuzzer cannot forge
// claims, nor find a second spelling of a valid token's content. Seeded with
// the attack corpus and the valid tokens, against the fixture's loopback
// JWKS server and key file.
func FuzzVerify(f *testing.F) {
	fx := newFixture(f)
	signed := map[string]bool{}
	for _, c := range validCorpus(f, fx) {
		f.Add(c.token)
		signed[c.token[:strings.LastIndexByte(c.token, '.')]] = true
	}
	for _, c := range attackCorpus(f, fx) {
		f.Add(c.token)
	}
	f.Add("e30.e30.e30")
	f.Add(strings.Repeat(".", 100))
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := fx.v.Verify(context.Background(), tok)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("error not wrapping ErrInvalidToken: %v", err)
			}
			return
		}
		if !signed[tok[:strings.LastIndexByte(tok, '.')]] {
			t.Fatalf("forged token accepted: %q -> %+v", tok, p)
		}
	})
}

// FuzzReadStrict: whatever the strict reading accepts has exactly one
// spelling (each segment is the canonical unpadded base64url of its bytes)
// and a header and claims that are valid UTF-8 and valid JSON.
func FuzzReadStrict(f *testing.F) {
	fx := newFixture(f)
	for _, c := range append(validCorpus(f, fx), attackCorpus(f, fx)...) {
		f.Add(c.token)
	}
	f.Add("eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	f.Add("e30..")
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := readStrict(tok, DefaultMaxTokenBytes); err != nil {
			return
		}
		for i, part := range strings.Split(tok, ".") {
			b, err := base64.RawURLEncoding.DecodeString(part)
			if err != nil || base64.RawURLEncoding.EncodeToString(b) != part {
				t.Fatalf("segment %d accepted in a non-canonical spelling: %q", i, part)
			}
			if i < 2 && (!utf8.Valid(b) || !json.Valid(b)) {
				t.Fatalf("segment %d accepted with invalid UTF-8 or JSON: %q", i, b)
			}
		}
	})
}

// TestNoKidSeveralKeys: without a kid, a set with two fitting keys is
// ambiguous and refused rather than tried key by key.
func TestNoKidSeveralKeys(t *testing.T) {
	rs, _, _, other := newSigners(t)
	dir := t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "k.json"), jwksOf(t, rs, other), 0o600)
	v, err := New(Config{Issuers: []settings.Issuer{{ID: "a", Issuer: iss, Audience: "research-vessel", JWKSFile: filepath.Join(dir, "k.json")}},
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), signWith(t, rs, jwa.RS256(), "", goodClaims())); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("ambiguous key accepted: %v", err)
	}
}

func TestAuthenticatorAdapter(t *testing.T) {
	f := newFixture(t)
	a := Authenticator{V: f.v}
	req := func(tok string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/agents/records-agent", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		return r
	}
	p, err := a.Authenticate(context.Background(), req(sign(t, f.ed, with(goodClaims(), "scope", "openid"))))
	if err != nil {
		t.Fatal(err)
	}
	if p.Owner != "astral|user-42" || p.Kind != auth.KindToken || p.Scopes == nil || !p.MayCall("records-agent") {
		t.Fatalf("principal = %+v", p)
	}
	if _, err := a.Authenticate(context.Background(), req("an-app-key")); !errors.Is(err, auth.ErrNoCredentials) {
		t.Fatalf("non-JWT bearer: %v", err)
	}
	if _, err := a.Authenticate(context.Background(), req(sign(t, f.rs, with(goodClaims(), "iss", "https://other.example.test")))); !errors.Is(err, auth.ErrNoCredentials) {
		t.Fatalf("unknown issuer: %v", err)
	}
	if _, err := a.Authenticate(context.Background(), req(rawToken(map[string]any{"alg": "none"}, goodClaims(), nil))); !errors.Is(err, auth.ErrUnauthenticated) || !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("alg none via adapter: %v", err)
	}
}

// TestRefusalReasonOnlyInLog: the caller's error says only
// "unauthenticated" (the HTTP layer shows whatever follows that word), while
// the vessel's log gets the reason with the issuer and kid, and never the
// token.
func TestRefusalReasonOnlyInLog(t *testing.T) {
	f := newFixture(t)
	core, logs := observer.New(zap.InfoLevel)
	f.v.log = zap.New(core)
	tok := sign(t, f.rs, with(goodClaims(), "azp", "someone-else"))
	r := httptest.NewRequest(http.MethodPost, "/agents/records-agent", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	_, err := auth.Chain{Authenticator{V: f.v}}.Authenticate(context.Background(), r)
	if !errors.Is(err, auth.ErrUnauthenticated) || !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("err = %v", err)
	}
	if err.Error() != auth.ErrUnauthenticated.Error() {
		t.Fatalf("the caller's error carries a reason: %q", err)
	}
	entries := logs.FilterMessage("token refused").All()
	if len(entries) != 1 {
		t.Fatalf("%d refusal log entries, want 1: %+v", len(entries), logs.All())
	}
	fields := entries[0].ContextMap()
	if fields["issuer"] != "astral" || fields["kid"] != f.rs.kid || !strings.Contains(fmt.Sprint(fields["error"]), "azp") {
		t.Fatalf("log fields = %v", fields)
	}
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.ContextMap()), tok) {
			t.Fatal("the token was logged")
		}
	}
}

// TestConcurrentFirstUse: many tokens arriving before any key set is
// loaded are all verified with a single fetch.
func TestConcurrentFirstUse(t *testing.T) {
	f := newFixture(t)
	tok := sign(t, f.ec, goodClaims())
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.v.Verify(context.Background(), tok); err != nil {
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	if failed.Load() != 0 || f.fetches.Load() != 1 {
		t.Fatalf("failed %d, fetches %d; want 0 and 1", failed.Load(), f.fetches.Load())
	}
}

// TestStaleKeysKeptWhenRefreshFails: after MaxKeyAge the set is refetched;
// if the endpoint is down the old keys stay in use.
func TestStaleKeysKeptWhenRefreshFails(t *testing.T) {
	f := newFixture(t)
	tok := sign(t, f.rs, with(goodClaims(), "exp", t0.Add(3*time.Hour).Unix()))
	if _, err := f.v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	bad := []byte("not json")
	f.jwks.Store(&bad)
	f.clk.add(2 * time.Hour)
	if _, err := f.v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("stale keys dropped: %v", err)
	}
	if f.fetches.Load() != 2 {
		t.Fatalf("fetches = %d, want 2", f.fetches.Load())
	}
}

// TestApproveClaim: vessel_approve (a string or a list) reaches the
// principal; any other JSON type refuses the token.
func TestApproveClaim(t *testing.T) {
	f := newFixture(t)
	p, err := f.v.Verify(context.Background(), sign(t, f.ec, with(goodClaims(), "vessel_approve", "bash, tools:write")))
	if err != nil || !slices.Equal(p.Approve, []string{"bash", "tools:write"}) {
		t.Fatalf("string claim: %v %v", err, p)
	}
	p, err = f.v.Verify(context.Background(), sign(t, f.ec, with(goodClaims(), "vessel_approve", []string{"all"})))
	if err != nil || !slices.Equal(p.Approve, []string{"all"}) {
		t.Fatalf("list claim: %v %v", err, p)
	}
	if _, err := f.v.Verify(context.Background(), sign(t, f.ec, with(goodClaims(), "vessel_approve", 7))); err == nil {
		t.Fatal("a number in vessel_approve was accepted")
	}
}
