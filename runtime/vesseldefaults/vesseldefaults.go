// Package vesseldefaults holds the vessel's defaults and names that the
// deployer validates and fills in and the vessel falls back to: one value
// for both, so a deployment file, what is generated from it and the
// process agree.
package vesseldefaults

const (
	// Port is the vessel's HTTP listen port; GRPCPort its gRPC binding's.
	Port     = 8700
	GRPCPort = 8701
	// RequestBodyTimeoutSecs bounds how long an authenticated caller may
	// take to send a request body.
	RequestBodyTimeoutSecs = 60
	// ShutdownMarginSecs is the most the vessel takes, after its running
	// turns' grace, to stop the rest and close connections; a container
	// manager's stop grace is the turns' grace plus this.
	ShutdownMarginSecs = 20
)

// DefaultMaxSteps is how many model steps a turn may take when the
// agent's package sets no max_steps.
const DefaultMaxSteps = 12

// Approval timeouts, in seconds. The most is kept well under sandboxd's
// default --turn-ttl (30 minutes), which deletes a turn's workspace once
// it has been idle that long: a paused turn's workspace must outlive its
// pause.
const (
	DefaultApprovalTimeout = 600
	MaxApprovalTimeout     = 1200
)

// ApprovalTimeout is an approval timeout in seconds: secs, or the default
// when unset (0 or less).
func ApprovalTimeout(secs int) int {
	if secs <= 0 {
		return DefaultApprovalTimeout
	}
	return secs
}

// ApprovalAction is what a timed-out approval means: action, or
// OnTimeoutDeny when unset.
func ApprovalAction(action string) string {
	if action == "" {
		return OnTimeoutDeny
	}
	return action
}

// What a timed-out approval means: the waiting calls are refused and the
// turn goes on (deny), or the turn fails.
const (
	OnTimeoutDeny = "deny"
	OnTimeoutFail = "fail"
)

// Sandbox isolation tiers: confined (Landlock, seccomp and per-call uids
// on the host kernel, the default) or gvisor (the same inside gVisor's
// user-space kernel, without Landlock).
const (
	RuntimeConfined = "confined"
	RuntimeGVisor   = "gvisor"
)

// Tier is a sandbox's isolation tier: runtime, or RuntimeConfined when
// unset.
func Tier(runtime string) string {
	if runtime == "" {
		return RuntimeConfined
	}
	return runtime
}
