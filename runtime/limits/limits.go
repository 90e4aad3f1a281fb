// Package limits are the vessel's admission limits and their defaults: the
// deployer validates [limits] against them and fills the defaults, the
// vessel's admission control applies them. deployer/spec's Limits is this
// struct with the TOML names.
package limits

// Limits are how much work callers may start at once on one vessel
// replica (docs/configuration.md, [limits]). Every field has a default
// (the Default* constants below); a written 0 is refused, so no limit can
// be switched off by accident.
type Limits struct {
	// MaxTurns bounds the turns running at once on the replica, all agents
	// and callers together.
	MaxTurns int
	// MaxTurnsPerAgent, MaxTurnsPerApp and MaxTurnsPerOwner bound the
	// turns running at once for one agent, one app (an [[apps]] key or an
	// [[issuers]] entry) and one owner (the task owner: app and user, or
	// issuer and subject).
	MaxTurnsPerAgent int
	MaxTurnsPerApp   int
	MaxTurnsPerOwner int
	// MaxStreamsPerOwner bounds one owner's open event streams
	// (SendStreamingMessage and SubscribeToTask together).
	MaxStreamsPerOwner int
	// MaxRequestsPerOwner bounds one owner's requests in flight, of any
	// method: each holds a connection.
	MaxRequestsPerOwner int
	// MaxRequestsPerApp bounds one app's (key's or issuer's) requests in
	// flight, all its owners together: an app that names a new user on
	// every request (X-Vessel-User) cannot hold more than this many
	// connections, bodies included, however many owners it invents.
	MaxRequestsPerApp int
	// RequestsPerSecondPerApp and RequestBurstPerApp are a token bucket per
	// app (key or issuer) over every authenticated request.
	RequestsPerSecondPerApp float64
	RequestBurstPerApp      int
	// RetryAfterSecs is the Retry-After a refused caller is given for a
	// concurrency cap (a rate refusal says when its next token comes).
	RetryAfterSecs int
}

// Defaults of [limits].
const (
	DefaultMaxTurns                = 256
	DefaultMaxTurnsPerAgent        = 128
	DefaultMaxTurnsPerApp          = 128
	DefaultMaxTurnsPerOwner        = 8
	DefaultMaxStreamsPerOwner      = 16
	DefaultMaxRequestsPerOwner     = 32
	DefaultMaxRequestsPerApp       = 256
	DefaultRequestsPerSecondPerApp = 200
	DefaultRequestBurstPerApp      = 400
	DefaultRetryAfterSecs          = 2
)

// WithDefaults returns l with every unset (zero) field at its default: the
// vessel uses it for settings built in code rather than loaded.
func (l Limits) WithDefaults() Limits {
	def := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	def(&l.MaxTurns, DefaultMaxTurns)
	def(&l.MaxTurnsPerAgent, DefaultMaxTurnsPerAgent)
	def(&l.MaxTurnsPerApp, DefaultMaxTurnsPerApp)
	def(&l.MaxTurnsPerOwner, DefaultMaxTurnsPerOwner)
	def(&l.MaxStreamsPerOwner, DefaultMaxStreamsPerOwner)
	def(&l.MaxRequestsPerOwner, DefaultMaxRequestsPerOwner)
	def(&l.MaxRequestsPerApp, DefaultMaxRequestsPerApp)
	def(&l.RequestBurstPerApp, DefaultRequestBurstPerApp)
	def(&l.RetryAfterSecs, DefaultRetryAfterSecs)
	if l.RequestsPerSecondPerApp == 0 {
		l.RequestsPerSecondPerApp = DefaultRequestsPerSecondPerApp
	}
	return l
}
