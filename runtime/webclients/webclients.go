// Package webclients names the egress web proxy's clients, their modes and
// their tokens, which deploy writes into the clients file and the egress
// checks.
package webclients

import "github.com/astraldeep/astralvessel-go/runtime/tokens"

// Web modes of a client: refuse what its policy does not allow, or only log it.
const (
	Enforce = "enforce"
	Report  = "report"
)

// Names of the egress web proxy's clients, and their tokens: derived from
// the egress token, which the vessel and the egress both hold, so deploy
// writes no new secret for them (docs/egress.md).
const (
	Search = "search"
	// Vessel is the vessel's own client: issuers' key sets.
	Vessel = "vessel"
)

// Agent is the web proxy client name of an agent's web tools.
func Agent(agentID string) string { return "agent." + agentID }

// Token is the Proxy-Authorization password of one client.
func Token(egressToken, client string) string {
	return tokens.DeriveToken(egressToken, "egress-web/"+client)
}
