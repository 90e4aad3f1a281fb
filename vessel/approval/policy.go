// Package approval decides which tool calls wait for a decision before they
// run, and reads and checks the two messages of a pause: the request the
// vessel sends (the pending calls, in an input-required status message) and
// the decisions the task's owner sends back. The loop asks a Policy about
// each call by the name and scope it sees, so a tool from any source (the
// sandbox, the vessel, a service, an MCP server) is covered the same way.
// See docs/approvals.md.
package approval

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Header is the HTTP header a caller uses to ask for more approvals on one
// call; Claim is the token claim that does the same (a string or a list).
const (
	Header = "X-Vessel-Approve"
	Claim  = "vessel_approve"
)

// EntryAll, in the header or claim, makes every call of the turn wait.
const EntryAll = "all"

// servicePrefix marks a service entry: "service:records".
const servicePrefix = "service:"

// Servicer is a tool that calls a granted service (service tools; an MCP
// tool can name its server the same way), so a policy can name services.
type Servicer interface {
	Service() string
}

// Policy says which calls of a turn need approval, how long a decision
// may take and what happens when none comes. The zero value (or nil)
// needs none.
type Policy struct {
	all      bool
	tools    map[string]bool
	scopes   map[string]bool
	services map[string]bool
	// Timeout bounds the wait for a decision; OnTimeout is
	// vesseldefaults.OnTimeoutDeny or vesseldefaults.OnTimeoutFail.
	Timeout   time.Duration
	OnTimeout string
	// AllowEdit lets the decider replace a waiting call's arguments.
	AllowEdit bool
}

// FromSettings is the policy of an agent's [agents.approval] table (nil gives
// a policy that needs nothing, with the default timeout).
func FromSettings(a *settings.Approval) *Policy {
	p := &Policy{Timeout: time.Duration(a.Timeout()) * time.Second, OnTimeout: a.TimeoutAction(),
		tools: map[string]bool{}, scopes: map[string]bool{}, services: map[string]bool{}}
	if a == nil {
		return p
	}
	for _, t := range a.Tools {
		p.tools[t] = true
	}
	for _, s := range a.Scopes {
		p.scopes[s] = true
	}
	for _, s := range a.Services {
		p.services[s] = true
	}
	p.AllowEdit = a.AllowEdit
	return p
}

// Empty reports whether no call can need approval under p.
func (p *Policy) Empty() bool {
	return p == nil || (!p.all && len(p.tools) == 0 && len(p.scopes) == 0 && len(p.services) == 0)
}

// Needs reports whether a call of tool (with its scope, and the service it
// calls, "" for none) waits for a decision, and why, in words for the
// decider.
func (p *Policy) Needs(tool, scope, service string) (bool, string) {
	switch {
	case p == nil:
		return false, ""
	case p.tools[tool]:
		return true, "the policy lists tool " + tool
	case p.scopes[scope]:
		return true, "the policy lists scope " + scope
	case service != "" && p.services[service]:
		return true, "the policy lists service " + service
	case p.all:
		return true, "the caller asked to approve every call"
	}
	return false, ""
}

// Extra is what a caller added for one call: more tools, scopes, services,
// or all. It can only add.
type Extra struct {
	All      bool
	Tools    []string
	Scopes   []string
	Services []string
}

// Empty reports whether the caller added nothing.
func (x Extra) Empty() bool {
	return !x.All && len(x.Tools) == 0 && len(x.Scopes) == 0 && len(x.Services) == 0
}

// With returns p widened by x; p itself is not changed. A nil p stands
// for the default policy (nothing needs approval, default timeout).
func (p *Policy) With(x Extra) *Policy {
	if p == nil {
		p = FromSettings(nil)
	}
	if x.Empty() {
		return p
	}
	out := *p
	out.all = p.all || x.All
	out.tools = widen(p.tools, x.Tools)
	out.scopes = widen(p.scopes, x.Scopes)
	out.services = widen(p.services, x.Services)
	return &out
}

func widen(m map[string]bool, add []string) map[string]bool {
	out := make(map[string]bool, len(m)+len(add))
	for k := range m {
		out[k] = true
	}
	for _, k := range add {
		out[k] = true
	}
	return out
}

// MaxEntries bounds the entries of one header or claim.
const MaxEntries = 64

// ParseExtra reads the entries a caller sent (header values and claim
// entries, each a comma- or space-separated list): "all", one of the six
// scopes, "service:<name>" of a service the agent is granted, or the name
// of one of the agent's tools. An entry that names nothing the agent has
// is an error rather than ignored: the caller asked for a check that would
// otherwise silently not happen.
func ParseExtra(values []string, toolNames, services []string) (Extra, error) {
	var x Extra
	n := 0
	for _, v := range values {
		for _, e := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			if n++; n > MaxEntries {
				return Extra{}, fmt.Errorf("%s: at most %d entries", Header, MaxEntries)
			}
			switch {
			case e == EntryAll:
				x.All = true
			case slices.Contains(toolset.Scopes, e):
				x.Scopes = append(x.Scopes, e)
			case strings.HasPrefix(e, servicePrefix):
				s := strings.TrimPrefix(e, servicePrefix)
				if !slices.Contains(services, s) {
					return Extra{}, fmt.Errorf("%s: the agent is granted no service %q", Header, clip(s, 64))
				}
				x.Services = append(x.Services, s)
			case slices.Contains(toolNames, e):
				x.Tools = append(x.Tools, e)
			default:
				return Extra{}, fmt.Errorf("%s: %q is not %s, a scope, service:<name> or one of the agent's tools", Header, clip(e, 64), EntryAll)
			}
		}
	}
	return x, nil
}

// FromRequest reads the header of r and the claim entries a token carried.
func FromRequest(r *http.Request, claim []string, toolNames, services []string) (Extra, error) {
	values := append(slices.Clone(r.Header.Values(Header)), claim...)
	return ParseExtra(values, toolNames, services)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
