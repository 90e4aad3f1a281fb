package guard

import "net/netip"

// block is one address range the web proxy never reaches on its own.
type block struct {
	prefix netip.Prefix
	name   string
}

// specialBlocks lists the IANA IPv4 and IPv6 special-purpose registries
// (plus a few ranges Go's IsGlobalUnicast misses) and the IPv6 forms that
// carry an IPv4 address inside them. Order matters only for the reason
// reported: the most specific useful name comes first.
var specialBlocks = mustBlocks([]struct{ cidr, name string }{
	// IPv4 (IANA IPv4 Special-Purpose Address Registry and friends).
	{"0.0.0.0/8", "this-network"},
	{"10.0.0.0/8", "private"},
	{"100.64.0.0/10", "cgnat"},
	{"127.0.0.0/8", "loopback"},
	{"169.254.0.0/16", "link-local"},
	{"172.16.0.0/12", "private"},
	{"192.0.0.0/24", "ietf-protocol-assignments"},
	{"192.0.2.0/24", "documentation"},
	{"192.31.196.0/24", "as112"},
	{"192.52.193.0/24", "amt"},
	{"192.88.99.0/24", "6to4-relay"},
	{"192.168.0.0/16", "private"},
	{"192.175.48.0/24", "as112"},
	{"198.18.0.0/15", "benchmarking"},
	{"198.51.100.0/24", "documentation"},
	{"203.0.113.0/24", "documentation"},
	{"224.0.0.0/4", "multicast"},
	{"255.255.255.255/32", "broadcast"},
	{"240.0.0.0/4", "reserved"},

	// IPv6 forms that embed an IPv4 address: an attacker can hide a private
	// IPv4 destination in them, and some stacks route them as IPv4.
	{"::ffff:0:0/96", "ipv4-mapped"},
	{"::ffff:0:0:0/96", "ipv4-translated"},
	{"64:ff9b::/96", "nat64"},
	{"64:ff9b:1::/48", "nat64-local"},
	{"2002::/16", "6to4"},
	{"2001::/32", "teredo"},

	// IPv6 (IANA IPv6 Special-Purpose Address Registry and friends).
	{"::/128", "unspecified"},
	{"::1/128", "loopback"},
	{"::/96", "ipv4-compatible"},
	{"100::/64", "discard"},
	{"100:0:0:1::/64", "dummy"},
	{"2001:2::/48", "benchmarking"},
	{"2001:10::/28", "orchid"},
	{"2001:20::/28", "orchid"},
	{"2001:db8::/32", "documentation"},
	{"2001::/23", "ietf-protocol-assignments"},
	{"2620:4f:8000::/48", "as112"},
	{"3fff::/20", "documentation"},
	{"5f00::/16", "srv6"},
	{"fc00::/7", "unique-local"},
	{"fe80::/10", "link-local"},
	{"fec0::/10", "site-local"},
	{"ff00::/8", "multicast"},
})

func mustBlocks(in []struct{ cidr, name string }) []block {
	out := make([]block, 0, len(in))
	for _, b := range in {
		out = append(out, block{prefix: netip.MustParsePrefix(b.cidr), name: b.name})
	}
	return out
}

// globalIPv6 is the only IPv6 space IANA allocates for global unicast;
// anything outside it is reserved and refused.
var globalIPv6 = netip.MustParsePrefix("2000::/3")

// SpecialPurpose reports whether a is outside the globally routable
// unicast space, with a short name for the range it fell into.
func SpecialPurpose(a netip.Addr) (string, bool) {
	if !a.IsValid() {
		return "invalid", true
	}
	if a.Zone() != "" {
		return "zone", true
	}
	for _, b := range specialBlocks {
		if b.prefix.Contains(a) {
			return b.name, true
		}
	}
	if a.Is6() && !globalIPv6.Contains(a) {
		return "ipv6-reserved", true
	}
	// Belt and braces: anything Go itself does not call global unicast.
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return "not-global-unicast", true
	}
	return "", false
}
