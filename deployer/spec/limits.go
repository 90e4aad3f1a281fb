package spec

import (
	"fmt"
	"slices"

	"github.com/astraldeep/astralvessel-go/runtime/domains"
	"github.com/astraldeep/astralvessel-go/runtime/limits"
	"github.com/astraldeep/astralvessel-go/runtime/webclients"
)

// Limits is the [limits] table: how much work callers may start at once
// on one vessel replica (docs/configuration.md). Every field has a default
// (the Default* constants below); a written 0 is refused, so no limit can
// be switched off by accident.
type Limits struct {
	// MaxTurns bounds the turns running at once on the replica, all agents
	// and callers together.
	MaxTurns int `toml:"max_turns"`
	// MaxTurnsPerAgent, MaxTurnsPerApp and MaxTurnsPerOwner bound the
	// turns running at once for one agent, one app (an [[apps]] key or an
	// [[issuers]] entry) and one owner (the task owner: app and user, or
	// issuer and subject).
	MaxTurnsPerAgent int `toml:"max_turns_per_agent"`
	MaxTurnsPerApp   int `toml:"max_turns_per_app"`
	MaxTurnsPerOwner int `toml:"max_turns_per_owner"`
	// MaxStreamsPerOwner bounds one owner's open event streams
	// (SendStreamingMessage and SubscribeToTask together).
	MaxStreamsPerOwner int `toml:"max_streams_per_owner"`
	// MaxRequestsPerOwner bounds one owner's requests in flight, of any
	// method: each holds a connection.
	MaxRequestsPerOwner int `toml:"max_requests_per_owner"`
	// MaxRequestsPerApp bounds one app's (key's or issuer's) requests in
	// flight, all its owners together: an app that names a new user on
	// every request (X-Vessel-User) cannot hold more than this many
	// connections, bodies included, however many owners it invents.
	MaxRequestsPerApp int `toml:"max_requests_per_app"`
	// RequestsPerSecondPerApp and RequestBurstPerApp are a token bucket per
	// app (key or issuer) over every authenticated request.
	RequestsPerSecondPerApp float64 `toml:"requests_per_second_per_app"`
	RequestBurstPerApp      int     `toml:"request_burst_per_app"`
	// RetryAfterSecs is the Retry-After a refused caller is given for a
	// concurrency cap (a rate refusal says when its next token comes).
	RetryAfterSecs int `toml:"retry_after_seconds"`
}

// Defaults of [limits] (runtime/limits).
const (
	DefaultMaxTurns                = limits.DefaultMaxTurns
	DefaultMaxTurnsPerAgent        = limits.DefaultMaxTurnsPerAgent
	DefaultMaxTurnsPerApp          = limits.DefaultMaxTurnsPerApp
	DefaultMaxTurnsPerOwner        = limits.DefaultMaxTurnsPerOwner
	DefaultMaxStreamsPerOwner      = limits.DefaultMaxStreamsPerOwner
	DefaultMaxRequestsPerOwner     = limits.DefaultMaxRequestsPerOwner
	DefaultMaxRequestsPerApp       = limits.DefaultMaxRequestsPerApp
	DefaultRequestsPerSecondPerApp = limits.DefaultRequestsPerSecondPerApp
	DefaultRequestBurstPerApp      = limits.DefaultRequestBurstPerApp
	DefaultRetryAfterSecs          = limits.DefaultRetryAfterSecs
)

// maxLimit bounds every count of [limits].
const maxLimit = 1_000_000

// WithDefaults returns l with every unset (zero) field at its default
// (limits.Limits.WithDefaults).
func (l Limits) WithDefaults() Limits { return Limits(limits.Limits(l).WithDefaults()) }

func (v *validator) limits() {
	c, l := v.c, &v.d.Limits
	ints := []struct {
		key string
		p   *int
		max int
	}{
		{"limits.max_turns", &l.MaxTurns, maxLimit},
		{"limits.max_turns_per_agent", &l.MaxTurnsPerAgent, maxLimit},
		{"limits.max_turns_per_app", &l.MaxTurnsPerApp, maxLimit},
		{"limits.max_turns_per_owner", &l.MaxTurnsPerOwner, maxLimit},
		{"limits.max_streams_per_owner", &l.MaxStreamsPerOwner, maxLimit},
		{"limits.max_requests_per_owner", &l.MaxRequestsPerOwner, maxLimit},
		{"limits.max_requests_per_app", &l.MaxRequestsPerApp, maxLimit},
		{"limits.request_burst_per_app", &l.RequestBurstPerApp, maxLimit},
		{"limits.retry_after_seconds", &l.RetryAfterSecs, 3600},
	}
	for _, f := range ints {
		if c.set(f.key) && (*f.p < 1 || *f.p > f.max) {
			c.add(f.key, "%d is out of range; allowed 1 to %d", *f.p, f.max)
		}
	}
	if c.set("limits.requests_per_second_per_app") && !(l.RequestsPerSecondPerApp >= 0.001 && l.RequestsPerSecondPerApp <= maxLimit) {
		c.add("limits.requests_per_second_per_app", "%s is out of range; allowed 0.001 to %d", fmt.Sprint(l.RequestsPerSecondPerApp), maxLimit)
	}
	*l = l.WithDefaults()
	if l.MaxStreamsPerOwner > l.MaxRequestsPerOwner {
		c.add("limits.max_streams_per_owner", "%d is more than max_requests_per_owner (%d): every stream is a request in flight", l.MaxStreamsPerOwner, l.MaxRequestsPerOwner)
	}
	if l.MaxRequestsPerOwner > l.MaxRequestsPerApp {
		c.add("limits.max_requests_per_owner", "%d is more than max_requests_per_app (%d): an owner's requests are its app's", l.MaxRequestsPerOwner, l.MaxRequestsPerApp)
	}
}

// Web is an agent's [agents.web] table: which names its web tools may ask
// the egress for (docs/egress.md). Allow, when not empty, is the only
// names reachable; Deny is refused even when Allow covers it. Entries are
// exact names or "*." wildcards of whole labels (runtime/domains). Mode
// is "enforce" (the default) or "report": log what would be refused and
// let it through.
type Web struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
	Mode  string   `toml:"mode"`
}

// Web modes.
const (
	WebEnforce = webclients.Enforce
	WebReport  = webclients.Report
)

func (v *validator) web(f string, a *Agent) {
	w := a.Web
	if w == nil {
		return
	}
	c := v.c
	for key, list := range map[string][]string{"allow": w.Allow, "deny": w.Deny} {
		for i, e := range list {
			if _, err := domains.ParsePattern(e); err != nil {
				c.add(fmt.Sprintf("%s.%s[%d]", f, key, i), "%v", err)
			}
		}
	}
	switch w.Mode {
	case "":
		w.Mode = WebEnforce
	case WebEnforce, WebReport:
	default:
		c.add(f+".mode", "unknown mode %q; allowed: %s (refuse), %s (log what would be refused, refuse nothing)", w.Mode, WebEnforce, WebReport)
	}
}

// Names of the egress web proxy's clients, and their tokens: derived from
// the egress token, which the vessel and the egress both hold, so deploy
// writes no new secret for them (docs/egress.md).
const (
	SearchWebClient = webclients.Search
	// VesselWebClient is the vessel's own client: issuers' key sets.
	VesselWebClient = webclients.Vessel
)

// AgentWebClient is the web proxy client name of an agent's web tools.
func AgentWebClient(agentID string) string { return webclients.Agent(agentID) }

// WebClientToken is the Proxy-Authorization password of one client.
func WebClientToken(egressToken, client string) string {
	return webclients.Token(egressToken, client)
}

// DefaultSearchEngines are the hosts of the engines the search container
// uses when [search] engines is not written: those of SearXNG's default
// general engines the project relies on. An operator who enables others in
// SearXNG's settings lists their hosts in [search] engines.
var DefaultSearchEngines = []string{"duckduckgo.com", "*.duckduckgo.com", "*.wikipedia.org", "*.wikidata.org", "search.brave.com"}

// searchEngines checks [search] engines and fills in the default: the
// search client's allowlist at the egress, so an empty list (which would
// allow every name) is refused.
func (v *validator) searchEngines() {
	c, s := v.c, &v.d.Search
	if !c.set("search.engines") {
		s.Engines = slices.Clone(DefaultSearchEngines)
		return
	}
	if len(s.Engines) == 0 {
		c.add("search.engines", "empty; list the host names of the search container's engines (an empty allowlist would let it reach every name)")
	}
	for i, e := range s.Engines {
		if _, err := domains.ParsePattern(e); err != nil {
			c.add(fmt.Sprintf("search.engines[%d]", i), "%v", err)
		}
	}
}
