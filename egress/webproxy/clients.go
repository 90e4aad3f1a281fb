package webproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/domains"
	"github.com/astraldeep/astralvessel-go/runtime/redact"
)

// Client is one authenticated user of the web proxy: an agent's web tools
// in the vessel, or the search container. It presents Name and Token as
// Proxy-Authorization Basic credentials (an http://name:token@egress:3128
// proxy URL does that), and the proxy applies its Names policy on the
// name it asks for before the address policy.
type Client struct {
	Name string
	// Token is a redact.Secret: a Client printed or logged by mistake
	// does not show it.
	Token redact.Secret
	// Names is the client's domain policy; nil allows every name.
	Names *domains.Policy
	// Report logs what Names would refuse and lets it through.
	Report bool
}

// Clients are the proxy's clients by name.
type Clients struct {
	byName map[string]*clientEntry
}

type clientEntry struct {
	c   Client
	sum [32]byte // SHA-256 of the token: compared in constant time
}

// NewClients checks that every client has a name and a token of at least
// 32 characters, and no name appears twice.
func NewClients(list []Client) (*Clients, error) {
	cs := &Clients{byName: map[string]*clientEntry{}}
	for _, c := range list {
		if c.Name == "" || strings.ContainsAny(c.Name, ": \t\r\n") {
			return nil, fmt.Errorf("webproxy: client name %q: want a non-empty name without colons or spaces (it is a Basic user name)", c.Name)
		}
		if len(c.Token) < 32 {
			return nil, fmt.Errorf("webproxy: client %s: the token is shorter than 32 characters", c.Name)
		}
		if cs.byName[c.Name] != nil {
			return nil, fmt.Errorf("webproxy: client %s is listed twice", c.Name)
		}
		cs.byName[c.Name] = &clientEntry{c: c, sum: sha256.Sum256([]byte(c.Token))}
	}
	return cs, nil
}

// Len is the number of clients.
func (cs *Clients) Len() int {
	if cs == nil {
		return 0
	}
	return len(cs.byName)
}

// authenticate returns the client whose credentials r carries in
// Proxy-Authorization (Basic, parsed by net/http), or nil.
func (cs *Clients) authenticate(r *http.Request) *Client {
	v := r.Header.Get("Proxy-Authorization")
	if v == "" {
		return nil
	}
	name, token, ok := (&http.Request{Header: http.Header{"Authorization": {v}}}).BasicAuth()
	if !ok {
		return nil
	}
	e := cs.byName[name]
	sum := sha256.Sum256([]byte(token))
	if e == nil {
		// The same work for an unknown name as for a wrong token.
		subtle.ConstantTimeCompare(sum[:], make([]byte, len(sum)))
		return nil
	}
	if subtle.ConstantTimeCompare(sum[:], e.sum[:]) != 1 {
		return nil
	}
	return &e.c
}

type clientKey struct{}

func clientFrom(ctx context.Context) *Client {
	c, _ := ctx.Value(clientKey{}).(*Client)
	return c
}

// HeaderPolicy carries the domain policy's words for a refusal
// (X-Egress-Denied is then ReasonNamePolicy): "denylist *.ads.example",
// "not in the allowlist".
const HeaderPolicy = "X-Egress-Policy"

// ReasonNamePolicy is the refusal reason of a client's domain policy;
// ReasonUnauthenticated that of a request without valid credentials (407).
const (
	ReasonNamePolicy      = "name-policy"
	ReasonUnauthenticated = "unauthenticated"
	// ReasonDuplicateCredentials refuses (400) a request with more than one
	// Proxy-Authorization header.
	ReasonDuplicateCredentials = "duplicate-credentials"
)

// checkName applies the client's domain policy to the name asked for (an
// IP literal is no name on an allowlist). It returns the refusal's words,
// or "" to go on; a report-only client is never refused, the words are
// logged as what enforcement would have done.
func (c *Client) checkName(d *decision) string {
	if c == nil || c.Names == nil {
		return ""
	}
	var why string
	if d.host.IsIP() {
		if c.Names.Allow.Len() > 0 {
			why = "an address is not in the allowlist; ask for the site by name"
		}
	} else if v := c.Names.Check(d.host.Name); !v.Allow {
		why = v.Reason
	}
	if why != "" && c.Report {
		d.wouldRefuse = why
		return ""
	}
	return why
}

func clientName(r *http.Request) string {
	if c := clientFrom(r.Context()); c != nil {
		return c.Name
	}
	return ""
}
