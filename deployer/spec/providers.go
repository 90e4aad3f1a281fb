package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
)

// Provider is a provider profile (runtime/routes, which the vessel's
// reader takes it from).
type Provider = routes.Provider

// ProviderAuto is the profile of a route that names none.
const ProviderAuto = routes.ProviderAuto

// Providers are the profiles a route's provider may name.
var Providers = routes.Providers

// ProviderNames lists the profiles, sorted.
func ProviderNames() []string { return routes.ProviderNames() }

// ProfileOf is the named profile (routes.ProfileOf).
func ProfileOf(name string) *Provider { return routes.ProfileOf(name) }

// MaxSendBack bounds a send_back list; MaxSendBackName one of its names.
const (
	MaxSendBack     = 16
	MaxSendBackName = 64
)

// checkSendBack is the problem with a send_back list, or "".
func checkSendBack(names []string) string {
	if len(names) > MaxSendBack {
		return fmt.Sprintf("%d names; at most %d", len(names), MaxSendBack)
	}
	seen := map[string]bool{}
	for _, n := range names {
		switch {
		case n == "" || len(n) > MaxSendBackName:
			return fmt.Sprintf("%q: a name is 1 to %d bytes", n, MaxSendBackName)
		case strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == '\\' }):
			return fmt.Sprintf("%q: no control characters, quotes or backslashes", n)
		case slices.ContainsFunc(vesselMessageFields, func(f string) bool { return strings.EqualFold(f, n) }):
			// Case folded: a decoder that matches names regardless of
			// case would take "Role" for the vessel's own role.
			return fmt.Sprintf("%q is written by the vessel itself; send_back names provider fields", n)
		case seen[n]:
			return fmt.Sprintf("%q listed twice", n)
		}
		seen[n] = true
	}
	return ""
}

// vesselMessageFields are the members of a message and a tool call the
// vessel writes itself.
var vesselMessageFields = []string{"role", "content", "name", "tool_calls", "tool_call_id", "id", "type", "function"}

// Profile is the agent's route's profile, with the route's send_back
// override applied (the override also ends marker detection: the operator
// said what to send).
func (d *Deployment) Profile(a *Agent) *Provider {
	p := ProfileOf(d.Provider(a))
	sb := d.Egress.UpstreamSendBack
	if r, ok := d.Models[a.ModelRoute]; ok {
		sb = r.SendBack
	} else if a.ModelRoute != "" && a.ModelRoute != DefaultRoute {
		sb = nil
	}
	if sb != nil {
		names := slices.Clone(*sb)
		if names == nil {
			names = []string{}
		}
		p.SendBack, p.CallSendBack, p.Detect = names, names, false
	}
	return p
}

// checkProvider is the problem with a route's provider, or "".
func checkProvider(name string) string {
	if _, ok := Providers[name]; ok || name == "" {
		return ""
	}
	return "unknown provider \"" + name + "\"; allowed: " + strings.Join(ProviderNames(), ", ")
}

// Provider is the profile name of the agent's route ("" : ProviderAuto).
func (d *Deployment) Provider(a *Agent) string {
	if r, ok := d.Models[a.ModelRoute]; ok {
		return r.Provider
	}
	if a.ModelRoute == "" || a.ModelRoute == DefaultRoute {
		return d.Egress.UpstreamProvider
	}
	return ""
}
