// Package dest decides where a webhook may point: inside the grants of the
// caller's [[apps]] or [[issuers]] entry (push_urls), or, with push_public,
// at a public address reached through the egress proxy. Addresses of the
// special-purpose classes that no webhook has business with (link-local,
// multicast, documentation, reserved, ...) are refused always; loopback and
// private ones only through a grant. The same rules are applied again to
// the address actually dialled (Control). A granted host name is pinned
// further (Dialer): the addresses it resolves to may not be loopback, so
// only a grant that names a loopback literal reaches the vessel's host.
package dest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"

	"github.com/astraldeep/astralvessel-go/runtime/pushgrant"
)

// ErrRefused wraps every refusal.
var ErrRefused = errors.New("webhook destination refused")

// Class is what kind of address an IP is.
type Class int

// Address classes.
const (
	Public   Class = iota // globally routable
	Internal              // loopback, private, shared (CGNAT), unique local: only through a grant
	Special               // never: unspecified, link-local, multicast, documentation, reserved, ...
)

func (c Class) String() string {
	switch c {
	case Public:
		return "public"
	case Internal:
		return "internal"
	default:
		return "special-purpose"
	}
}

var (
	internal = prefixes("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
		"::1/128", "fc00::/7")
	special = prefixes(
		"0.0.0.0/8", "169.254.0.0/16", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
		"::/128", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
		"2002::/16", "3fff::/20", "5f00::/16", "fe80::/10", "fec0::/10", "ff00::/8")
)

func prefixes(list ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(list))
	for i, s := range list {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Classify tells an address's class; IPv4-mapped IPv6 addresses are
// classified as the IPv4 address they carry.
func Classify(a netip.Addr) Class {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return Special
	}
	for _, p := range special {
		if p.Contains(a) {
			return Special
		}
	}
	for _, p := range internal {
		if p.Contains(a) {
			return Internal
		}
	}
	return Public
}

// Policy is what one caller's webhooks may reach.
type Policy struct {
	Grants []pushgrant.Grant
	// Public allows public addresses (through the egress proxy).
	Public bool
}

// NewPolicy parses push_urls (already validated by the deployment loader).
func NewPolicy(urls []string, public bool) (Policy, error) {
	p := Policy{Public: public}
	for _, s := range urls {
		g, err := pushgrant.Parse(s)
		if err != nil {
			return Policy{}, err
		}
		p.Grants = append(p.Grants, g)
	}
	return p, nil
}

// Route is how a webhook URL is reached.
type Route int

// Routes.
const (
	// Direct: a granted destination, dialled from the vessel.
	Direct Route = iota + 1
	// ViaEgress: a public destination, through the egress proxy.
	ViaEgress
)

// Check decides a webhook URL: within a grant it is dialled directly; else,
// with Public, it goes through the egress proxy; else it is refused. An IP
// literal of a special-purpose class is refused either way, and an
// internal one is only allowed through a grant.
func (p Policy) Check(raw string) (Route, error) {
	u, err := pushgrant.ParseURL(raw)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if a, err := netip.ParseAddr(u.Host); err == nil {
		switch Classify(a) {
		case Special:
			return 0, fmt.Errorf("%w: %s is a special-purpose address", ErrRefused, u.Host)
		case Internal:
			if !p.granted(u) {
				return 0, fmt.Errorf("%w: %s is an internal address, and %s is outside the push_urls granted to this caller", ErrRefused, u.Host, u)
			}
		}
	}
	if p.granted(u) {
		return Direct, nil
	}
	if p.Public {
		return ViaEgress, nil
	}
	return 0, fmt.Errorf("%w: %s is outside the push_urls granted to this caller", ErrRefused, u)
}

func (p Policy) granted(u pushgrant.Grant) bool {
	for _, g := range p.Grants {
		if g.Allows(u) {
			return true
		}
	}
	return false
}

// Control is a net.Dialer Control function for direct deliveries: the
// address actually dialled must not be special-purpose.
func Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: dial %q: %w", ErrRefused, address, err)
	}
	if c := Classify(ap.Addr()); c == Special {
		return fmt.Errorf("%w: %s is a %s address", ErrRefused, ap.Addr(), c)
	}
	return nil
}

// PublicControl is the Control of a dialer that may only reach public
// addresses (the egress guard applies the same rule on its side).
func PublicControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: dial %q: %w", ErrRefused, address, err)
	}
	if c := Classify(ap.Addr()); c != Public {
		return fmt.Errorf("%w: %s is a %s address", ErrRefused, ap.Addr(), c)
	}
	return nil
}

// Dialer dials direct deliveries. The host of the address dialled is the
// granted host (the URL matched a grant's scheme, host and port). An IP
// literal is dialled as it is, in its own class (a grant naming 127.0.0.1
// reaches loopback). A host name is resolved here and each address it
// resolves to is pinned to the classes a name may reach: public and
// private, never special-purpose (link-local and the metadata address
// 169.254.169.254, unspecified, multicast, reserved, ...) nor loopback,
// whatever the name's DNS says later. The address chosen is dialled as a
// literal, and Control checks it once more on the socket.
type Dialer struct {
	// Dialer dials; its Control is replaced by Control. nil: a default.
	Dialer *net.Dialer
	// Lookup resolves a host name; nil: net.DefaultResolver.LookupNetIP.
	Lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)

	// dial replaces the dial of a checked address in tests, so no test
	// sends a packet to an address that is not loopback.
	dial func(ctx context.Context, nd *net.Dialer, network, address string) (net.Conn, error)
}

// Resolved decides one address a granted host name resolved to: nil when a
// name may be dialled there.
func Resolved(host string, a netip.Addr) error {
	a = a.Unmap().WithZone("")
	switch {
	case Classify(a) == Special:
		return fmt.Errorf("%w: %s resolves to %s, a special-purpose address", ErrRefused, host, a)
	case a.IsLoopback():
		return fmt.Errorf("%w: %s resolves to %s, a loopback address; only a grant naming a loopback literal reaches it", ErrRefused, host, a)
	}
	return nil
}

// DialContext is for http.Transport.DialContext.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	nd := net.Dialer{}
	if d.Dialer != nil {
		nd = *d.Dialer
	}
	nd.Control, nd.ControlContext = Control, nil
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %q: %w", ErrRefused, address, err)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if Classify(a) == Special {
			return nil, fmt.Errorf("%w: %s is a special-purpose address", ErrRefused, a)
		}
		return nd.DialContext(ctx, network, address)
	}
	lookup := d.Lookup
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	ipnet := "ip"
	switch {
	case strings.HasSuffix(network, "4"):
		ipnet = "ip4"
	case strings.HasSuffix(network, "6"):
		ipnet = "ip6"
	}
	addrs, err := lookup(ctx, ipnet, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	dial := d.dial
	if dial == nil {
		dial = func(ctx context.Context, nd *net.Dialer, network, address string) (net.Conn, error) {
			return nd.DialContext(ctx, network, address)
		}
	}
	var refused, failed []error
	for _, a := range addrs {
		if err := Resolved(host, a); err != nil {
			refused = append(refused, err)
			continue
		}
		c, err := dial(ctx, &nd, network, net.JoinHostPort(a.Unmap().WithZone("").String(), port))
		if err == nil {
			return c, nil
		}
		failed = append(failed, err)
		if ctx.Err() != nil {
			break
		}
	}
	switch {
	case len(failed) > 0:
		// An allowed address was tried and could not be reached: a
		// failure to retry, not a refusal (which ends the delivery), even
		// when the name also resolved to refused addresses.
		err := fmt.Errorf("dial %s: %w", host, errors.Join(failed...))
		if len(refused) > 0 {
			err = fmt.Errorf("%w (other answers refused: %v)", err, errors.Join(refused...))
		}
		return nil, err
	case len(refused) > 0:
		return nil, errors.Join(refused...)
	}
	return nil, fmt.Errorf("resolve %s: no addresses", host)
}
