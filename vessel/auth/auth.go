// Package auth decides who is calling: app keys (sent as bearer tokens,
// kept only as SHA-256 digests) with the X-Vessel-User header naming the
// end user, or, through further Authenticators, signed tokens. Every caller
// becomes a Principal whose Owner binds its tasks.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Kind tells how a caller proved who it is.
type Kind string

// Kinds of principal.
const (
	KindApp   Kind = "app"   // an app key plus X-Vessel-User
	KindToken Kind = "token" // a signed token from a trusted issuer
)

// Principal is an authenticated caller.
type Principal struct {
	// Owner binds tasks: "<app>/<user>" or "<issuer>|<subject>".
	Owner string
	Kind  Kind
	// AppID is the [[apps]] id for KindApp; IssuerID the [[issuers]] id for
	// KindToken.
	AppID    string
	IssuerID string
	// Subject is the end user: X-Vessel-User or the token's sub.
	Subject string
	// Scopes narrow the tools of a call; nil means no narrowing.
	Scopes []string
	// Agents are the agent ids this caller may call.
	Agents []string
	// Approve are the entries of a token's vessel_approve claim: more
	// calls that wait for approval (docs/approvals.md); never fewer.
	Approve []string
}

// MayCall reports whether the principal was granted agent.
func (p *Principal) MayCall(agent string) bool {
	return p != nil && slices.Contains(p.Agents, agent)
}

// Errors an Authenticator returns; the HTTP layer maps them to 401.
var (
	// ErrNoCredentials means the request carries nothing this
	// authenticator understands; a Chain then asks the next one.
	ErrNoCredentials = errors.New("no credentials")
	// ErrUnauthenticated wraps every refusal.
	ErrUnauthenticated = errors.New("unauthenticated")
)

// Authenticator turns a request into a Principal.
type Authenticator interface {
	// Authenticate returns ErrNoCredentials (possibly wrapped) when the
	// request is not its kind of credential, an error wrapping
	// ErrUnauthenticated when it is but is invalid, or the principal.
	Authenticate(ctx context.Context, r *http.Request) (*Principal, error)
}

// Chain asks each authenticator in turn until one recognises the request.
type Chain []Authenticator

// Authenticate implements Authenticator.
func (c Chain) Authenticate(ctx context.Context, r *http.Request) (*Principal, error) {
	if len(r.Header.Values("Authorization")) > 1 {
		// Two credentials are ambiguous; none of them is picked.
		return nil, fmt.Errorf("%w: more than one Authorization header", ErrUnauthenticated)
	}
	if BearerToken(r) == "" {
		return nil, fmt.Errorf("%w: missing bearer token", ErrUnauthenticated)
	}
	for _, a := range c {
		p, err := a.Authenticate(ctx, r)
		if errors.Is(err, ErrNoCredentials) {
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				err = fmt.Errorf("%w: %w", ErrUnauthenticated, err)
			}
			return nil, err
		}
		return p, nil
	}
	return nil, fmt.Errorf("%w: unknown key or token", ErrUnauthenticated)
}

// BearerToken returns the token of an "Authorization: Bearer" header.
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	const p = "bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return ""
	}
	return strings.TrimSpace(h[len(p):])
}

// UserHeader is the header an app names its end user with.
const UserHeader = "X-Vessel-User"

// MaxUserLen is the longest X-Vessel-User value accepted.
const MaxUserLen = 128

// ValidUser reports whether u is 1 to 128 printable characters with no
// control characters and no leading or trailing space.
func ValidUser(u string) bool {
	if u == "" || len(u) > MaxUserLen*4 || !utf8.ValidString(u) || utf8.RuneCountInString(u) > MaxUserLen {
		return false
	}
	if strings.TrimSpace(u) != u {
		return false
	}
	for _, r := range u {
		if !unicode.IsPrint(r) && r != ' ' {
			return false
		}
	}
	return true
}

// AppKeys authenticates apps by key digest.
type AppKeys struct {
	apps []appKey
}

type appKey struct {
	id     string
	digest [sha256.Size]byte
	agents []string
}

// NewAppKeys reads the [[apps]] entries; a malformed digest is an error.
func NewAppKeys(apps []settings.App) (*AppKeys, error) {
	k := &AppKeys{}
	for _, a := range apps {
		raw, err := hex.DecodeString(strings.TrimSpace(a.KeySHA256))
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("app %q: key_sha256 must be 64 hex digits", a.ID)
		}
		ak := appKey{id: a.ID, agents: slices.Clone(a.Agents)}
		copy(ak.digest[:], raw)
		k.apps = append(k.apps, ak)
	}
	return k, nil
}

// Authenticate implements Authenticator.
func (k *AppKeys) Authenticate(_ context.Context, r *http.Request) (*Principal, error) {
	tok := BearerToken(r)
	if tok == "" {
		return nil, ErrNoCredentials
	}
	sum := sha256.Sum256([]byte(tok))
	// Compare with every app so timing does not reveal which one matched.
	match := -1
	for i := range k.apps {
		if subtle.ConstantTimeCompare(sum[:], k.apps[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, ErrNoCredentials
	}
	app := k.apps[match]
	users := r.Header.Values(UserHeader)
	if len(users) != 1 {
		return nil, fmt.Errorf("%w: an app key needs exactly one %s header", ErrUnauthenticated, UserHeader)
	}
	if !ValidUser(users[0]) {
		return nil, fmt.Errorf("%w: %s must be 1 to %d printable characters", ErrUnauthenticated, UserHeader, MaxUserLen)
	}
	return &Principal{
		Owner: app.id + "/" + users[0], Kind: KindApp, AppID: app.id,
		Subject: users[0], Agents: app.agents,
	}, nil
}

type principalKey struct{}

// WithPrincipal stores p in ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal stored by WithPrincipal.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}
