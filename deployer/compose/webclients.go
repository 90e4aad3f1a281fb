package compose

// Files of the egress web proxy's clients (docs/egress.md, "Clients and
// their domain policies").
const (
	// WebClientsFile lists the clients and their names policies; it holds
	// no secret (their tokens derive from the egress token).
	WebClientsFile = "egress-clients.json"
	// SearchProxyFile is the search container's proxy URL with its
	// credentials: a secret, mounted into the search container only.
	SearchProxyFile = "search-proxy.url"
)
