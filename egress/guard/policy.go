// Package guard is the egress address and port policy: the one function
// every dial of the web proxy goes through, and the strict host parser that
// feeds it.
package guard

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Reasons a decision reports (stable strings: they appear in logs and in
// the X-Egress-Denied header).
const (
	ReasonPublic    = "public"
	ReasonAllowCIDR = "allow-cidr"
	ReasonAllowHost = "allow-host"
	ReasonPort      = "port-not-allowed"
	ReasonSelf      = "egress-self"
)

// Decision is the outcome of one policy check.
type Decision struct {
	Allow  bool
	Reason string // ReasonPublic, an allow reason, or the name of the refused range
}

// Config is the operator's explicit widening of the default policy.
type Config struct {
	// AllowCIDRs are ranges reachable even though they are special-purpose
	// (an intranet). They do not widen the ports.
	AllowCIDRs []netip.Prefix
	// AllowHosts are names (exact, or "*.example.org" for subdomains) whose
	// resolved addresses are reachable even when special-purpose.
	AllowHosts []string
	// AllowPorts are extra ports reachable, but only on allow-listed
	// destinations; the public web stays on 80 and 443.
	AllowPorts []uint16
	// SelfAddrs are the proxy's own addresses; SelfPorts its listening ports.
	// A connection to a self address on a self port is refused even when
	// allow-listed; other self addresses are refused unless allow-listed.
	SelfAddrs []netip.Addr
	SelfPorts []uint16
}

// Policy decides which resolved addresses and ports the proxy may dial.
// The zero value is not usable; call New.
type Policy struct {
	cidrs     []netip.Prefix
	exact     map[string]bool
	suffixes  []string
	ports     map[uint16]bool
	selfAddrs map[netip.Addr]bool
	selfPorts map[uint16]bool
}

// DefaultPorts are the only ports reachable on the public web.
var DefaultPorts = []uint16{80, 443}

// New builds a policy from an operator configuration.
func New(c Config) (*Policy, error) {
	p := &Policy{
		exact:     map[string]bool{},
		ports:     map[uint16]bool{},
		selfAddrs: map[netip.Addr]bool{},
		selfPorts: map[uint16]bool{},
	}
	for _, c := range c.AllowCIDRs {
		if !c.IsValid() {
			return nil, fmt.Errorf("guard: invalid allow CIDR %v", c)
		}
		p.cidrs = append(p.cidrs, c.Masked())
	}
	for _, h := range c.AllowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		wild := strings.HasPrefix(h, "*.")
		name := strings.TrimPrefix(h, "*.")
		parsed, err := ParseHost(name)
		if err != nil {
			return nil, fmt.Errorf("guard: allow host %q: %w", h, err)
		}
		if parsed.IsIP() {
			return nil, fmt.Errorf("guard: allow host %q is an address; use an allow CIDR", h)
		}
		if wild {
			p.suffixes = append(p.suffixes, "."+parsed.Name)
		} else {
			p.exact[parsed.Name] = true
		}
	}
	for _, port := range c.AllowPorts {
		if port == 0 {
			return nil, fmt.Errorf("guard: allow port 0")
		}
		p.ports[port] = true
	}
	for _, a := range c.SelfAddrs {
		p.selfAddrs[a.Unmap().WithZone("")] = true
	}
	for _, port := range c.SelfPorts {
		p.selfPorts[port] = true
	}
	return p, nil
}

// Check is THE policy: may the proxy open a TCP connection to addr:port,
// reached by resolving host (empty for IP literals)? Every address the
// proxy dials has passed this function immediately before.
func (p *Policy) Check(host string, addr netip.Addr, port uint16) Decision {
	if !addr.IsValid() || addr.Zone() != "" {
		return Decision{Reason: "invalid-address"}
	}
	// Unspecified, multicast and broadcast are never a web server.
	if addr.IsUnspecified() || addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		name, _ := SpecialPurpose(addr)
		return Decision{Reason: name}
	}
	self := p.selfAddrs[addr.Unmap()]
	if (self || addr.Unmap().IsLoopback()) && p.selfPorts[port] {
		return Decision{Reason: ReasonSelf}
	}
	allowReason := p.allowListed(host, addr)
	if port != 80 && port != 443 && (allowReason == "" || !p.ports[port]) {
		return Decision{Reason: ReasonPort}
	}
	if allowReason != "" {
		return Decision{Allow: true, Reason: allowReason}
	}
	if self {
		return Decision{Reason: ReasonSelf}
	}
	if name, special := SpecialPurpose(addr); special {
		return Decision{Reason: name}
	}
	return Decision{Allow: true, Reason: ReasonPublic}
}

// MayUsePort reports whether port could be allowed for some destination:
// 80 and 443 always, other ports only when the operator listed them.
func (p *Policy) MayUsePort(port uint16) bool {
	return port == 80 || port == 443 || p.ports[port]
}

func (p *Policy) allowListed(host string, addr netip.Addr) string {
	for _, c := range p.cidrs {
		if c.Contains(addr) {
			return ReasonAllowCIDR
		}
	}
	if host == "" {
		return ""
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if p.exact[host] {
		return ReasonAllowHost
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(host, s) {
			return ReasonAllowHost
		}
	}
	return ""
}

// Describe summarises the operator's widening for the start-up log line.
func (p *Policy) Describe() (cidrs, hosts, ports []string) {
	for _, c := range p.cidrs {
		cidrs = append(cidrs, c.String())
	}
	for h := range p.exact {
		hosts = append(hosts, h)
	}
	for _, s := range p.suffixes {
		hosts = append(hosts, "*"+s)
	}
	for port := range p.ports {
		ports = append(ports, strconv.Itoa(int(port)))
	}
	slices.Sort(hosts)
	slices.Sort(ports)
	return cidrs, hosts, ports
}

// ParseCIDRList parses a comma-separated list of CIDRs or single addresses
// (as in VESSEL_EGRESS_ALLOW_CIDRS).
func ParseCIDRList(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range splitList(s) {
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("guard: allow CIDR %q: %w", f, err)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("guard: allow CIDR %q: %w", f, err)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// ParsePortList parses a comma-separated list of ports.
func ParsePortList(s string) ([]uint16, error) {
	var out []uint16
	for _, f := range splitList(s) {
		p, err := parsePort(f)
		if err != nil {
			return nil, fmt.Errorf("guard: allow port: %w", err)
		}
		out = append(out, p)
	}
	return out, nil
}

// SplitList splits a comma-separated environment value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// SplitList is splitList for callers outside the package (host lists).
func SplitList(s string) []string { return splitList(s) }

// LocalAddrs returns the addresses of this machine's interfaces, used as
// the proxy's own addresses.
func LocalAddrs() ([]netip.Addr, error) {
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("guard: interface addresses: %w", err)
	}
	var out []netip.Addr
	for _, a := range ifAddrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}
