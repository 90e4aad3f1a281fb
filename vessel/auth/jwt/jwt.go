// Package jwt verifies the signed tokens of the issuers a deployment trusts
// ([[issuers]] in deployment.toml), for callers such as AstralDeep that send
// each user's delegation token instead of an app key.
//
// A token is accepted only when all of these hold: it is a compact JWS of at
// most MaxTokenBytes; its header names an asymmetric algorithm (RS*, PS*,
// ES256/384/512, EdDSA) and no critical extensions; its iss matches a
// configured issuer exactly (one trailing slash of difference tolerated); its
// signature verifies under a key from that issuer's key set whose type (and
// alg, when the key names one) agrees with the header; aud contains the
// issuer's audience; exp is in the future and nbf/iat not in the future
// (30 s skew either way); azp is one of authorized_parties when that list is
// set; sub is present. The owner of the caller's tasks is
// "<issuer id>|<sub>", using the id from deployment.toml, so renaming the
// provider's URL in the config does not change who owns what, and two
// issuers can never mint the same owner.
package jwt

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
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
	Issuers []spec.Issuer
	// HTTPClient fetches jwks_url key sets. In the vessel it sends through
	// the egress proxy (VESSEL_EGRESS_PROXY). Nil means http.DefaultClient.
	HTTPClient *http.Client
	// BaseDir resolves a relative jwks_file (the deployment file's folder).
	BaseDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	MaxTokenBytes   int           // default 16 KiB
	Skew            time.Duration // default 30 s
	RefreshInterval time.Duration // least time between two key set loads per issuer; default 30 s
	MaxKeyAge       time.Duration // cached keys older than this are reloaded when next used; default 1 h
	FetchTimeout    time.Duration // per jwks_url fetch; default 10 s
}

// Principal is a verified token's caller.
type Principal struct {
	Owner    string   // "<issuer id>|<sub>"
	Subject  string   // the token's sub
	IssuerID string   // the [[issuers]] id
	Scopes   []string // entries of "scope" (space separated) and "scp", as sent
	Agents   []string // the agents this issuer may call
	Expires  time.Time
}

// MayCall reports whether the principal's issuer is granted agent.
func (p *Principal) MayCall(agent string) bool { return slices.Contains(p.Agents, agent) }

type issuer struct {
	cfg   spec.Issuer
	iss   string // configured issuer, trailing slash trimmed
	keys  *keyCache
	azps  map[string]bool
	agent []string
}

// Verifier checks tokens against the configured issuers. Safe for
// concurrent use.
type Verifier struct {
	issuers  []*issuer
	now      func() time.Time
	maxBytes int
	skew     time.Duration
}

// New validates the issuer configuration. Key sets are loaded on first use,
// so a provider that is briefly down does not stop the vessel starting.
func New(cfg Config) (*Verifier, error) {
	v := &Verifier{now: cfg.Now, maxBytes: cfg.MaxTokenBytes, skew: cfg.Skew}
	if v.now == nil {
		v.now = time.Now
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
	seen := map[string]bool{}
	for i, ic := range cfg.Issuers {
		where := fmt.Sprintf("issuers[%d] (%s)", i, ic.ID)
		switch {
		case ic.ID == "" || strings.ContainsAny(ic.ID, "|") || strings.TrimSpace(ic.ID) != ic.ID:
			return nil, fmt.Errorf("%s: id must be non-empty, without '|' or surrounding spaces", where)
		case seen[ic.ID]:
			return nil, fmt.Errorf("%s: duplicate id", where)
		case ic.Issuer == "":
			return nil, fmt.Errorf("%s: issuer is required", where)
		case ic.Audience == "":
			return nil, fmt.Errorf("%s: audience is required", where)
		case (ic.JWKSURL == "") == (ic.JWKSFile == ""):
			return nil, fmt.Errorf("%s: exactly one of jwks_url and jwks_file is required", where)
		}
		seen[ic.ID] = true
		var src keySource
		if ic.JWKSURL != "" {
			src = urlSource(client, ic.JWKSURL, timeout)
		} else {
			p := ic.JWKSFile
			if !filepath.IsAbs(p) && cfg.BaseDir != "" {
				p = filepath.Join(cfg.BaseDir, p)
			}
			src = fileSource(p)
		}
		is := &issuer{
			cfg:   ic,
			iss:   strings.TrimSuffix(ic.Issuer, "/"),
			keys:  &keyCache{load: src, minInterval: refresh, maxAge: maxAge, now: v.now},
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
	"RS256": jwa.RS256, "RS384": jwa.RS384, "RS512": jwa.RS512,
	"PS256": jwa.PS256, "PS384": jwa.PS384, "PS512": jwa.PS512,
	"ES256": jwa.ES256, "ES384": jwa.ES384, "ES512": jwa.ES512,
	"EdDSA": jwa.EdDSA,
}

// header is the part of a JWS protected header the vessel looks at.
type header struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Crit json.RawMessage `json:"crit"`
	B64  json.RawMessage `json:"b64"`
}

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}

// splitCompact checks the compact shape and decodes header and payload.
// It is the only parsing done on unverified input before the signature check.
func splitCompact(token string, max int) (header, []byte, error) {
	var h header
	if len(token) > max {
		return h, nil, refuse("token is larger than %d bytes", max)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return h, nil, refuse("not a compact JWS (want 3 dot-separated parts, got %d)", len(parts))
	}
	if parts[2] == "" {
		return h, nil, refuse("token is unsigned")
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return h, nil, refuse("header is not base64url: %v", err)
	}
	if err := strictUnmarshal(hb, &h); err != nil {
		return h, nil, refuse("header is not a JSON object: %v", err)
	}
	if len(h.Crit) > 0 || len(h.B64) > 0 {
		return h, nil, refuse("header uses crit/b64 extensions, which are not supported")
	}
	pb, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return h, nil, refuse("payload is not base64url: %v", err)
	}
	return h, pb, nil
}

// strictUnmarshal decodes one JSON object and refuses trailing data.
func strictUnmarshal(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 || bytes.TrimSpace(b)[0] != '{' {
		return errors.New("not an object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		return errors.New("trailing data")
	}
	return nil
}

// claims are the registered and scope claims the vessel reads. Numbers stay
// json.Number so a float or huge exp is handled explicitly.
type claims struct {
	Iss   string          `json:"iss"`
	Sub   *string         `json:"sub"`
	Aud   json.RawMessage `json:"aud"`
	Exp   *json.Number    `json:"exp"`
	Nbf   *json.Number    `json:"nbf"`
	Iat   *json.Number    `json:"iat"`
	Azp   *string         `json:"azp"`
	Scope json.RawMessage `json:"scope"`
	Scp   json.RawMessage `json:"scp"`
}

// Verify checks a bearer token (without the "Bearer " prefix) and returns its
// caller. Every refusal wraps ErrInvalidToken; the message says which check
// failed, for the vessel's log (not for the caller).
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	h, payload, err := splitCompact(token, v.maxBytes)
	if err != nil {
		return nil, err
	}
	alg, ok := allowedAlgs[h.Alg]
	if !ok {
		return nil, refuse("algorithm %q is not accepted (asymmetric signatures only)", h.Alg)
	}
	var unverified claims
	if err := strictUnmarshal(payload, &unverified); err != nil {
		return nil, refuse("claims are not a JSON object: %v", err)
	}
	var firstErr error
	for _, is := range v.issuers {
		if is.iss != strings.TrimSuffix(unverified.Iss, "/") || unverified.Iss == "" {
			continue
		}
		p, err := v.verifyWith(ctx, is, token, h, alg)
		if err == nil {
			return p, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, fmt.Errorf("%w: %w: %q", ErrInvalidToken, ErrUnknownIssuer, truncate(unverified.Iss, 200))
}

func (v *Verifier) verifyWith(ctx context.Context, is *issuer, token string, h header, alg jwa.SignatureAlgorithm) (*Principal, error) {
	keys, err := is.keys.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: issuer %s: no keys: %v", ErrInvalidToken, is.cfg.ID, err)
	}
	cands := candidates(keys, h.Kid, alg)
	if len(cands) == 0 && h.Kid != "" && !hasKid(keys, h.Kid) {
		// A kid the set lacks may be a newly rotated key: reload, rate limited.
		keys = is.keys.refresh(ctx)
		cands = candidates(keys, h.Kid, alg)
	}
	if len(cands) == 0 {
		if h.Kid == "" {
			return nil, refuse("issuer %s: no kid and no single key fits %s", is.cfg.ID, alg)
		}
		return nil, refuse("issuer %s: no key %q usable with %s", is.cfg.ID, truncate(h.Kid, 100), alg)
	}
	var payload []byte
	for _, k := range cands {
		payload, err = jws.Verify([]byte(token), jws.WithKey(alg, k))
		if err == nil {
			break
		}
	}
	if err != nil {
		return nil, refuse("issuer %s: bad signature", is.cfg.ID)
	}
	var c claims
	if err := strictUnmarshal(payload, &c); err != nil {
		return nil, refuse("claims: %v", err)
	}
	return v.checkClaims(is, &c)
}

// candidates picks the keys a token may be verified with: those with its
// kid (or every key when it has none, as long as exactly one fits) whose
// type and curve suit alg and whose own alg, if any, equals alg.
func candidates(keys []jwk.Key, kid string, alg jwa.SignatureAlgorithm) []jwk.Key {
	var out []jwk.Key
	for _, k := range keys {
		if kid != "" && k.KeyID() != kid {
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

func hasKid(keys []jwk.Key, kid string) bool {
	for _, k := range keys {
		if k.KeyID() == kid {
			return true
		}
	}
	return false
}

func keyFits(k jwk.Key, alg jwa.SignatureAlgorithm) bool {
	if ka := k.Algorithm(); ka != nil && ka.String() != "" && ka.String() != alg.String() {
		return false
	}
	switch alg {
	case jwa.RS256, jwa.RS384, jwa.RS512, jwa.PS256, jwa.PS384, jwa.PS512:
		return k.KeyType() == jwa.RSA
	case jwa.ES256, jwa.ES384, jwa.ES512:
		ek, ok := k.(jwk.ECDSAPublicKey)
		if !ok {
			return false
		}
		want := map[jwa.SignatureAlgorithm]jwa.EllipticCurveAlgorithm{jwa.ES256: jwa.P256, jwa.ES384: jwa.P384, jwa.ES512: jwa.P521}[alg]
		return ek.Crv() == want
	case jwa.EdDSA:
		ok, isOKP := k.(jwk.OKPPublicKey)
		return isOKP && ok.Crv() == jwa.Ed25519
	}
	return false
}

func (v *Verifier) checkClaims(is *issuer, c *claims) (*Principal, error) {
	if strings.TrimSuffix(c.Iss, "/") != is.iss {
		return nil, refuse("iss does not match issuer %s", is.cfg.ID)
	}
	now := v.now()
	exp, err := numericDate(c.Exp)
	if err != nil || c.Exp == nil {
		return nil, refuse("exp is missing or not a number")
	}
	if !now.Before(exp.Add(v.skew)) {
		return nil, refuse("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if c.Nbf != nil {
		nbf, err := numericDate(c.Nbf)
		if err != nil {
			return nil, refuse("nbf is not a number")
		}
		if now.Add(v.skew).Before(nbf) {
			return nil, refuse("token not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
	}
	if c.Iat != nil {
		iat, err := numericDate(c.Iat)
		if err != nil {
			return nil, refuse("iat is not a number")
		}
		if now.Add(v.skew).Before(iat) {
			return nil, refuse("token issued in the future")
		}
	}
	auds, err := stringOrList(c.Aud)
	if err != nil {
		return nil, refuse("aud: %v", err)
	}
	if !slices.Contains(auds, is.cfg.Audience) {
		return nil, refuse("audience %q not in token", is.cfg.Audience)
	}
	if is.azps != nil {
		if c.Azp == nil || !is.azps[*c.Azp] {
			return nil, refuse("authorized party (azp) missing or not allowed")
		}
	}
	if c.Sub == nil || *c.Sub == "" {
		return nil, refuse("sub is missing")
	}
	sub := *c.Sub
	if len(sub) > maxSubjectBytes || !utf8.ValidString(sub) || strings.IndexFunc(sub, unicode.IsControl) >= 0 {
		return nil, refuse("sub is too long or has control characters")
	}
	var scopes []string
	for _, raw := range []json.RawMessage{c.Scope, c.Scp} {
		l, err := stringOrList(raw)
		if err != nil {
			return nil, refuse("scope: %v", err)
		}
		for _, s := range l {
			scopes = append(scopes, strings.Fields(s)...)
		}
	}
	return &Principal{
		Owner:    is.cfg.ID + "|" + sub,
		Subject:  sub,
		IssuerID: is.cfg.ID,
		Scopes:   scopes,
		Agents:   append([]string(nil), is.agent...),
		Expires:  exp,
	}, nil
}

// numericDate reads a JWT NumericDate (seconds, possibly fractional).
func numericDate(n *json.Number) (time.Time, error) {
	if n == nil {
		return time.Time{}, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e11 {
		return time.Time{}, errors.New("not a valid NumericDate")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), nil
}

// stringOrList reads a claim that may be a string or a list of strings.
func stringOrList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, errors.New("want a string or a list of strings")
	}
	return l, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
