package jwt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/auth"
)

// Authenticator adapts a Verifier to auth.Authenticator, for use in an
// auth.Chain after the app keys.
type Authenticator struct{ V *Verifier }

// refusedToken is the error a refused token gets. Its text is only
// "unauthenticated": the HTTP layer shows the caller any reason that follows
// that word, and a token's reason (which check failed, for which issuer and
// kid) is for the vessel's log, where Verify has put it. errors.Is still
// sees both auth.ErrUnauthenticated and the reason's ErrInvalidToken.
type refusedToken struct{ reason error }

func (e refusedToken) Error() string   { return auth.ErrUnauthenticated.Error() }
func (e refusedToken) Unwrap() []error { return []error{auth.ErrUnauthenticated, e.reason} }

// Authenticate implements auth.Authenticator. A bearer value that is not
// shaped like a JWT, or a JWT from an issuer this deployment does not list,
// is left to the other authenticators (ErrNoCredentials); a JWT of a listed
// issuer that fails any check is refused (auth.ErrUnauthenticated) without
// saying why.
func (a Authenticator) Authenticate(ctx context.Context, r *http.Request) (*auth.Principal, error) {
	tok := auth.BearerToken(r)
	if tok == "" || strings.Count(tok, ".") != 2 {
		return nil, auth.ErrNoCredentials
	}
	p, err := a.V.Verify(ctx, tok)
	if errors.Is(err, ErrUnknownIssuer) {
		return nil, fmt.Errorf("%w: %w", auth.ErrNoCredentials, err)
	}
	if err != nil {
		return nil, refusedToken{reason: err}
	}
	scopes := p.Scopes
	if scopes == nil {
		// Non-nil: a token always narrows (to nothing when it has no
		// tools:* scope); nil would mean "no narrowing" to the vessel.
		scopes = []string{}
	}
	return &auth.Principal{
		Owner:    p.Owner,
		Kind:     auth.KindToken,
		IssuerID: p.IssuerID,
		Subject:  p.Subject,
		Scopes:   scopes,
		Agents:   p.Agents,
		Approve:  p.Approve,
	}, nil
}
