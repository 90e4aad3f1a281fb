package a2aserver

import (
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// The security schemes every card declares (A2A 1.0 §7.3–7.4; docs/a2a.md,
// "Security schemes"). Scheme names are the keys of the card's
// securitySchemes and of its securityRequirements.
const (
	// SchemeBearer is the Authorization header: an app key, or a token from
	// a configured issuer.
	SchemeBearer a2a.SecuritySchemeName = "bearer"
	// SchemeUser is the end user an app key calls for, in UserHeader.
	SchemeUser a2a.SecuritySchemeName = "user"
	// UserHeader is the header SchemeUser names.
	UserHeader = auth.UserHeader
)

// cardSecurity declares the schemes on card: every call needs the bearer
// credential, and with an app key the user header too. When tokens is
// true (an [[issuers]] entry trusts the agent) a token alone is the second
// alternative. The requirement that holds both schemes comes first: a
// client that reads only the first alternative still sends both.
func cardSecurity(card *a2a.AgentCard, tokens bool) {
	card.SecuritySchemes = a2a.NamedSecuritySchemes{
		SchemeBearer: a2a.HTTPAuthSecurityScheme{
			Scheme:      "Bearer",
			Description: "An app key of the deployment's [[apps]] (with the user header), or a token from one of its [[issuers]].",
		},
		SchemeUser: a2a.APIKeySecurityScheme{
			Location:    a2a.APIKeySecuritySchemeLocationHeader,
			Name:        UserHeader,
			Description: "The end user an app key calls for: 1 to 128 printable characters, sent once. Not sent with an issuer's token.",
		},
	}
	card.SecurityRequirements = a2a.SecurityRequirementsOptions{
		{SchemeBearer: a2a.SecuritySchemeScopes{}, SchemeUser: a2a.SecuritySchemeScopes{}},
	}
	if tokens {
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{SchemeBearer: a2a.SecuritySchemeScopes{}})
	}
}

// issuerTrusts reports whether an [[issuers]] entry of d lets its tokens
// call agent id.
func issuerTrusts(d *settings.Deployment, id string) bool {
	if d == nil {
		return false
	}
	for _, is := range d.Issuers {
		if slices.Contains(is.Agents, id) {
			return true
		}
	}
	return false
}
