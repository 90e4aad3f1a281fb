// Package jwt verifies the signed tokens of the issuers a deployment trusts
// ([[issuers]] in deployment.toml), for callers such as AstralDeep that send
// each user's delegation token instead of an app key.
//
// A token is first read strictly (strict.go): a compact JWS of at most
// MaxTokenBytes, three unpadded base64url segments, a header and claims that
// are JSON objects with valid UTF-8, no lone surrogates, no member name
// twice, and the registered claims in their JSON types (dates as numbers).
// Then jwx verifies and validates it (jwt.Parse): the header's algorithm is
// asymmetric (RS*, PS*, ES256/384/512, EdDSA); the signature verifies under
// a key from the issuer's set whose type (and alg, when the key names one)
// agrees with the header; iss matches a configured issuer (one trailing
// slash of difference tolerated); aud contains the issuer's audience; exp is
// in the future and nbf/iat not in the future (30 s skew either way); azp is
// one of authorized_parties when that list is set; sub is present. The owner
// of the caller's tasks is "<issuer id>|<sub>" with sub's exact bytes, using
// the id from deployment.toml, so renaming the provider's URL in the config
// does not change who owns what, and two issuers can never mint the same
// owner.
//
// Refusal reasons go to the log (Config.Logger) with the issuer and kid;
// callers are told only that the token was refused (see Authenticator).
package jwt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	jwxjwt "github.com/lestrrat-go/jwx/v3/jwt"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/issuers"
	"github.com/astraldeep/astralvessel-go/vessel/client/jwks"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// ErrInvalidToken is wrapped by every refusal of a token.
var ErrInvalidToken = errors.New("invalid token")

// ErrUnknownIssuer is wrapped (with ErrInvalidToken) when no configured
// issuer matches the token's iss.
var ErrUnknownIssuer = errors.New("issuer is not trusted")

// Defaults for Config's zero values.
const (
	DefaultMaxTokenBytes   = 16 << 10
	DefaultSkew            = 30 * time.Second
	DefaultRefreshInterval = 30 * time.Second
	DefaultMaxKeyAge       = time.Hour
	DefaultFetchTimeout    = 10 * time.Second
	maxSubjectBytes        = 255
)

// Config configures a Verifier.
type Config struct {
	Issuers []settings.Issuer
	// HTTPClient fetches jwks_url key sets. In the vessel it sends through
	// the egress proxy (VESSEL_EGRESS_PROXY). Nil means http.DefaultClient.
	HTTPClient *http.Client
	// BaseDir resolves a relative jwks_file (the deployment file's folder).
	BaseDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives every refusal's reason and failed background key
	// refreshes; nil logs nothing.
	Logger *zap.Logger

	MaxTokenBytes   int           // default 16 KiB
	Skew            time.Duration // default 30 s
	RefreshInterval time.Duration // least time between two key set loads per issuer; default 30 s
	MaxKeyAge       time.Duration // cached keys older than this are reloaded; default 1 h
	FetchTimeout    time.Duration // per jwks_url fetch; default 10 s
}

// Principal is a verified token's caller.
type Principal struct {
	Owner    string   // "<issuer id>|<sub>"
	Subject  string   // the token's sub
	IssuerID string   // the [[issuers]] id
	Scopes   []string // entries of "scope" (space separated) and "scp", as sent
	Agents   []string // the agents this issuer may call
	Approve  []string // entries of the vessel_approve claim
	Expires  time.Time
}

// MayCall reports whether the principal's issuer is granted agent.
func (p *Principal) MayCall(agent string) bool { return slices.Contains(p.Agents, agent) }

type issuer struct {
	cfg   settings.Issuer
	iss   string // configured issuer, trailing slash trimmed
	keys  *jwks.Cache
	azps  map[string]bool
	agent []string
}

// Verifier checks tokens against the configured issuers. Safe for
// concurrent use.
type Verifier struct {
	issuers  []*issuer
	now      func() time.Time
	log      *zap.Logger
	maxBytes int
	skew     time.Duration
	stop     context.CancelFunc // ends the key cache's background refresh
}

// New validates the issuer configuration. Key sets are loaded on first use,
// so a provider that is briefly down does not stop the vessel starting.
// Close stops the background refresh of key sets.
func New(cfg Config) (*Verifier, error) {
	v := &Verifier{now: cfg.Now, log: cfg.Logger, maxBytes: cfg.MaxTokenBytes, skew: cfg.Skew}
	if v.now == nil {
		v.now = time.Now
	}
	if v.log == nil {
		v.log = zap.NewNop()
	}
	if v.maxBytes <= 0 {
		v.maxBytes = DefaultMaxTokenBytes
	}
	if v.skew <= 0 {
		v.skew = DefaultSkew
	}
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	refresh := orDefault(cfg.RefreshInterval, DefaultRefreshInterval)
	maxAge := orDefault(cfg.MaxKeyAge, DefaultMaxKeyAge)
	timeout := orDefault(cfg.FetchTimeout, DefaultFetchTimeout)
	if err := issuers.Validate(issuerEntries(cfg.Issuers)); err != nil {
		return nil, err
	}

	ctx, stop := context.WithCancel(context.Background())
	v.stop = stop
	for _, ic := range cfg.Issuers {
		onError := func(err error) {
			v.log.Warn("issuer key set refresh failed; the previous keys stay in use", zap.String("issuer", ic.ID), zap.Error(err))
		}
		file := ic.JWKSFile
		if file != "" && !filepath.IsAbs(file) && cfg.BaseDir != "" {
			file = filepath.Join(cfg.BaseDir, file)
		}
		ks := newKeySet(ctx, client, ic.JWKSURL, file, timeout, refresh, maxAge, v.now, onError)
		is := &issuer{
			cfg:   ic,
			iss:   strings.TrimSuffix(ic.Issuer, "/"),
			keys:  ks,
			agent: append([]string(nil), ic.Agents...),
		}
		if len(ic.AuthorizedParties) > 0 {
			is.azps = map[string]bool{}
			for _, p := range ic.AuthorizedParties {
				is.azps[p] = true
			}
		}
		v.issuers = append(v.issuers, is)
	}
	return v, nil
}

// Close stops the background refresh of key sets. Tokens can still be
// verified with the keys already loaded; loading keys fails from then on.
func (v *Verifier) Close() { v.stop() }

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// allowedAlgs are the only algorithms accepted: asymmetric signatures. HMAC
// and "none" are absent, so a token signed with a public key as an HMAC
// secret (algorithm confusion) or unsigned is refused before any key is
// looked at.
var allowedAlgs = map[string]jwa.SignatureAlgorithm{
	"RS256": jwa.RS256(), "RS384": jwa.RS384(), "RS512": jwa.RS512(),
	"PS256": jwa.PS256(), "PS384": jwa.PS384(), "PS512": jwa.PS512(),
	"ES256": jwa.ES256(), "ES384": jwa.ES384(), "ES512": jwa.ES512(),
	"EdDSA": jwa.EdDSA(),
}

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

// Verify checks a bearer token (without the "Bearer " prefix) and returns its
// caller. Every refusal wraps ErrInvalidToken and is logged with its reason,
// issuer and kid; the error's text is for the log, not for the caller.
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	p, issuerLabel, kid, err := v.verify(ctx, token)
	if err != nil {
		v.log.Info("token refused", zap.String("issuer", issuerLabel), zap.String("kid", kid), zap.Error(err))
	}
	return p, err
}

// verify does Verify's work and names the issuer (its configured id, or the
// token's iss when none matched) and kid for the log.
func (v *Verifier) verify(ctx context.Context, token string) (p *Principal, issuerLabel, kid string, err error) {
	t, err := readStrict(token, v.maxBytes)
	if err != nil {
		return nil, "", "", refuse("%v", err)
	}
	kid = truncate(t.kid, 100)
	iss, _ := stringValue(t.claims["iss"])
	issuerLabel = truncate(iss, 200)
	alg, ok := allowedAlgs[t.alg]
	if !ok {
		return nil, issuerLabel, kid, refuse("algorithm %q is not accepted (asymmetric signatures only)", truncate(t.alg, 20))
	}
	var firstErr error
	for _, is := range v.issuers {
		if iss == "" || is.iss != strings.TrimSuffix(iss, "/") {
			continue
		}
		p, err := v.verifyWith(ctx, is, token, t, iss, alg)
		if err == nil {
			return p, is.cfg.ID, kid, nil
		}
		if firstErr == nil {
			firstErr, issuerLabel = err, is.cfg.ID
		}
	}
	if firstErr != nil {
		return nil, issuerLabel, kid, firstErr
	}
	return nil, issuerLabel, kid, fmt.Errorf("%w: %w: %q", ErrInvalidToken, ErrUnknownIssuer, issuerLabel)
}

func (v *Verifier) verifyWith(ctx context.Context, is *issuer, token string, t *strictToken, iss string, alg jwa.SignatureAlgorithm) (*Principal, error) {
	keys, err := is.keys.Keys(ctx)
	if err != nil {
		return nil, refuse("issuer %s: no keys: %v", is.cfg.ID, err)
	}
	cands := candidates(keys, t.kid, alg)
	if _, known := keys.LookupKeyID(t.kid); len(cands) == 0 && t.kid != "" && !known {
		// A kid the set lacks may be a newly rotated key: reload, rate limited.
		if keys, err = is.keys.KeysFor(ctx, t.kid); err == nil {
			cands = candidates(keys, t.kid, alg)
		}
	}
	if len(cands) == 0 {
		if t.kid == "" {
			return nil, refuse("issuer %s: no kid and no single key fits %s", is.cfg.ID, alg)
		}
		return nil, refuse("issuer %s: no key %q usable with %s", is.cfg.ID, truncate(t.kid, 100), alg)
	}
	// Only the selected keys, each for the header's (allowed) algorithm:
	// jwx never picks a key or an algorithm of its own.
	provider := jws.KeyProviderFunc(func(_ context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
		if a, ok := sig.ProtectedHeaders().Algorithm(); !ok || a != alg {
			return fmt.Errorf("header algorithm changed between readings")
		}
		for _, k := range cands {
			sink.Key(alg, k)
		}
		return nil
	})
	tok, err := jwxjwt.Parse([]byte(token),
		jwxjwt.WithKeyProvider(provider),
		jwxjwt.WithValidate(true),
		// iss already matched one of the two spellings the issuer allows
		// (with or without a trailing slash); jwx checks it equals that one.
		jwxjwt.WithIssuer(iss),
		jwxjwt.WithAudience(is.cfg.Audience),
		jwxjwt.WithAcceptableSkew(v.skew),
		jwxjwt.WithClock(jwxjwt.ClockFunc(v.now)),
		jwxjwt.WithRequiredClaim(jwxjwt.ExpirationKey),
		jwxjwt.WithRequiredClaim(jwxjwt.SubjectKey),
		jwxjwt.WithValidator(azpValidator(is.azps)),
	)
	if err != nil {
		return nil, refuse("issuer %s: %v", is.cfg.ID, err)
	}
	sub, _ := tok.Subject()
	if sub == "" || len(sub) > maxSubjectBytes || strings.IndexFunc(sub, unicode.IsControl) >= 0 {
		return nil, refuse("issuer %s: sub is empty, longer than %d bytes or has control characters", is.cfg.ID, maxSubjectBytes)
	}
	var scopes []string
	for _, name := range []string{"scope", "scp"} {
		l, err := stringOrList(tok, name)
		if err != nil {
			return nil, refuse("issuer %s: %s: %v", is.cfg.ID, name, err)
		}
		for _, s := range l {
			scopes = append(scopes, strings.Fields(s)...)
		}
	}
	var approve []string
	l, err := stringOrList(tok, "vessel_approve")
	if err != nil {
		return nil, refuse("issuer %s: vessel_approve: %v", is.cfg.ID, err)
	}
	for _, s := range l {
		approve = append(approve, strings.Fields(strings.ReplaceAll(s, ",", " "))...)
	}
	return &Principal{
		Approve: approve,
		// The owner keeps sub's exact bytes: the strict reading refused
		// everything that could have made two subjects decode alike.
		Owner:    is.cfg.ID + "|" + sub,
		Subject:  sub,
		IssuerID: is.cfg.ID,
		Scopes:   scopes,
		Agents:   append([]string(nil), is.agent...),
		Expires:  expiration(tok),
	}, nil
}

// azpValidator checks the authorized party against the issuer's list; with
// no list, azp is not looked at.
func azpValidator(allowed map[string]bool) jwxjwt.Validator {
	return jwxjwt.ValidatorFunc(func(_ context.Context, t jwxjwt.Token) error {
		if allowed == nil {
			return nil
		}
		var azp string
		if err := t.Get("azp", &azp); err != nil || !allowed[azp] {
			return errors.New("authorized party (azp) missing or not allowed")
		}
		return nil
	})
}

func expiration(t jwxjwt.Token) time.Time {
	exp, _ := t.Expiration()
	return exp
}

// candidates picks the keys a token may be verified with: those with its
// kid (or every key when it has none, as long as exactly one fits) whose
// type and curve suit alg and whose own alg, if any, equals alg.
func candidates(keys jwk.Set, kid string, alg jwa.SignatureAlgorithm) []jwk.Key {
	var out []jwk.Key
	for i := range keys.Len() {
		k, _ := keys.Key(i)
		if id, _ := k.KeyID(); kid != "" && id != kid {
			continue
		}
		if !keyFits(k, alg) {
			continue
		}
		out = append(out, k)
	}
	if kid == "" && len(out) != 1 {
		return nil
	}
	return out
}

func keyFits(k jwk.Key, alg jwa.SignatureAlgorithm) bool {
	if ka, ok := k.Algorithm(); ok && ka.String() != "" && ka.String() != alg.String() {
		return false
	}
	switch alg {
	case jwa.RS256(), jwa.RS384(), jwa.RS512(), jwa.PS256(), jwa.PS384(), jwa.PS512():
		return k.KeyType() == jwa.RSA()
	case jwa.ES256(), jwa.ES384(), jwa.ES512():
		ek, ok := k.(jwk.ECDSAPublicKey)
		if !ok {
			return false
		}
		want := map[jwa.SignatureAlgorithm]jwa.EllipticCurveAlgorithm{jwa.ES256(): jwa.P256(), jwa.ES384(): jwa.P384(), jwa.ES512(): jwa.P521()}[alg]
		crv, _ := ek.Crv()
		return crv == want
	case jwa.EdDSA():
		ok, isOKP := k.(jwk.OKPPublicKey)
		if !isOKP {
			return false
		}
		crv, _ := ok.Crv()
		return crv == jwa.Ed25519()
	}
	return false
}

// stringOrList reads a private claim that is a string or a list of strings
// (its JSON type was checked by the strict reading).
func stringOrList(t jwxjwt.Token, name string) ([]string, error) {
	if !t.Has(name) {
		return nil, nil
	}
	var v any
	if err := t.Get(name, &v); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, errors.New("want a string or a list of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errors.New("want a string or a list of strings")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// issuerEntries are the issuers as runtime/issuers checks them: the same
// checks the deployment loader makes.
func issuerEntries(list []settings.Issuer) []issuers.Entry {
	out := make([]issuers.Entry, len(list))
	for i, is := range list {
		out[i] = issuers.Entry{ID: is.ID, Issuer: is.Issuer, Audience: is.Audience,
			JWKSURL: is.JWKSURL, JWKSFile: is.JWKSFile, AuthorizedParties: is.AuthorizedParties}
	}
	return out
}
