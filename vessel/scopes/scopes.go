// Package scopes holds Astral's six permission scopes, the order the vessel
// ranks them in, and the narrowing of an agent's tools to what one call may
// use.
//
// Narrowing is a filter: it can only remove tools. A caller's scopes (a
// token's tools:* scopes, or an app's X-Vessel-Scopes header) say which tools
// of the agent this call may use; they never add a tool the agent does not
// have. A tool is kept when its scope is in the allowed set (membership, as
// AstralDeep checks it: tools:execute does not imply tools:read).
package scopes

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
)

// Header is the HTTP header an app uses to narrow one call's tools.
const Header = "X-Vessel-Scopes"

// Default is the scope of a tool that declares none, and AstralDeep's default.
const Default = "tools:read"

// ErrUnknownScope is wrapped by Parse errors for a name that is not one of
// the six scopes.
var ErrUnknownScope = errors.New("unknown scope")

// rank maps each scope to its position in toolset.Scopes (weakest first).
var rank = func() map[string]int {
	m := make(map[string]int, len(toolset.Scopes))
	for i, s := range toolset.Scopes {
		m[s] = i
	}
	return m
}()

// All returns the six scopes, weakest first.
func All() []string { return append([]string(nil), toolset.Scopes...) }

// Valid reports whether s is one of the six scopes.
func Valid(s string) bool {
	_, ok := rank[s]
	return ok
}

// Rank is s's position in the order, weakest = 0; -1 for an unknown scope.
func Rank(s string) int {
	if r, ok := rank[s]; ok {
		return r
	}
	return -1
}

// Strongest returns the strongest known scope in list. Unknown names are
// skipped; an empty list (an agent with no tools) gives Default, the weakest.
func Strongest(list []string) string {
	best := -1
	for _, s := range list {
		if r := Rank(s); r > best {
			best = r
		}
	}
	if best < 0 {
		return Default
	}
	return toolset.Scopes[best]
}

// Of returns a tool's effective scope: its declared scope, or Default.
func Of(declared string) string {
	if declared == "" {
		return Default
	}
	return declared
}

// Allowed is what one call may use. The zero value allows everything (no
// narrowing); Restrict and Intersect only ever shrink it.
type Allowed struct {
	// limited is true once any restriction applies; then only scopes in
	// set are allowed.
	limited bool
	set     map[string]bool
	// tools, when non-nil, additionally limits the call to named tools
	// (AstralDeep's tool:<name> scope entries).
	tools map[string]bool
}

// Unrestricted allows every tool of the agent (no header, app caller).
func Unrestricted() Allowed { return Allowed{} }

// Only allows exactly the given scopes. Unknown names allow nothing.
func Only(list ...string) Allowed {
	a := Allowed{limited: true, set: map[string]bool{}}
	for _, s := range list {
		if Valid(s) {
			a.set[s] = true
		}
	}
	return a
}

// Limited reports whether any restriction applies.
func (a Allowed) Limited() bool { return a.limited || a.tools != nil }

// Scopes lists the allowed scopes, weakest first; all six when unrestricted.
func (a Allowed) Scopes() []string {
	var out []string
	for _, s := range toolset.Scopes {
		if !a.limited || a.set[s] {
			out = append(out, s)
		}
	}
	return out
}

// Permits reports whether a tool with this name and declared scope may be
// used on the call.
func (a Allowed) Permits(tool, declaredScope string) bool {
	if a.limited && !a.set[Of(declaredScope)] {
		return false
	}
	if a.tools != nil && !a.tools[tool] {
		return false
	}
	return true
}

// Intersect returns what both a and b allow: the result never permits a
// tool that either one refuses.
func (a Allowed) Intersect(b Allowed) Allowed {
	out := Allowed{}
	switch {
	case a.limited && b.limited:
		out.limited = true
		out.set = map[string]bool{}
		for s := range a.set {
			if b.set[s] {
				out.set[s] = true
			}
		}
	case a.limited:
		out.limited, out.set = true, copySet(a.set)
	case b.limited:
		out.limited, out.set = true, copySet(b.set)
	}
	switch {
	case a.tools != nil && b.tools != nil:
		out.tools = map[string]bool{}
		for t := range a.tools {
			if b.tools[t] {
				out.tools[t] = true
			}
		}
	case a.tools != nil:
		out.tools = copySet(a.tools)
	case b.tools != nil:
		out.tools = copySet(b.tools)
	}
	return out
}

func copySet(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Narrow returns the tools of offered that a permits, in their order. It
// never adds: the result is always a sub-sequence of offered.
func Narrow[T any](offered []T, nameOf, scopeOf func(T) string, a Allowed) []T {
	out := make([]T, 0, len(offered))
	for _, t := range offered {
		if a.Permits(nameOf(t), scopeOf(t)) {
			out = append(out, t)
		}
	}
	return out
}

// splitList splits a header value or claim on spaces and commas.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == ',' || r == '\t'
	})
}

// ParseHeader reads X-Vessel-Scopes values (an app's own narrowing). present
// is whether the header was sent at all: an absent header means no
// narrowing, a present one allows exactly the scopes it lists (an empty value
// allows none). Every entry must be one of the six scopes: a typo is an
// error rather than a silently different tool set.
func ParseHeader(values []string, present bool) (Allowed, error) {
	if !present {
		return Unrestricted(), nil
	}
	a := Allowed{limited: true, set: map[string]bool{}}
	for _, v := range values {
		for _, s := range splitList(v) {
			if !Valid(s) {
				return Allowed{}, fmt.Errorf("%s: %w %q (known: %s)", Header, ErrUnknownScope, s, strings.Join(toolset.Scopes, ", "))
			}
			a.set[s] = true
		}
	}
	return a, nil
}

// FromToken builds the allowance of a verified token from its scope entries
// (the "scope" claim split on spaces, plus "scp"). Only the six tools:*
// scopes grant anything; other entries (openid, profile, an unknown
// tools:admin) are ignored, so a token with no tools:* scope may use no tools.
// If the token carries AstralDeep's tool:<name> entries, only those tools are
// allowed as well.
func FromToken(entries []string) Allowed {
	a := Allowed{limited: true, set: map[string]bool{}}
	for _, e := range entries {
		for _, s := range splitList(e) {
			switch {
			case Valid(s):
				a.set[s] = true
			case strings.HasPrefix(s, "tool:") && len(s) > len("tool:"):
				if a.tools == nil {
					a.tools = map[string]bool{}
				}
				a.tools[strings.TrimPrefix(s, "tool:")] = true
			}
		}
	}
	return a
}

// ForCall combines what limits one call: a token's scope entries (when the
// caller came with a token) and the X-Vessel-Scopes header (from any
// caller). The result allows only what every one of them allows.
func ForCall(h http.Header, token bool, tokenScopes []string) (Allowed, error) {
	a := Unrestricted()
	if token {
		a = FromToken(tokenScopes)
	}
	vals, present := h[http.CanonicalHeaderKey(Header)]
	hdr, err := ParseHeader(vals, present)
	if err != nil {
		return Allowed{}, err
	}
	return a.Intersect(hdr), nil
}
