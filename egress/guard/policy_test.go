package guard

import (
	"errors"
	"net/netip"
	"testing"
)

// addrCases: literal addresses against the default policy on port 443.
// want is "" for allowed, otherwise the refused range's name.
var addrCases = []struct {
	addr string
	want string
}{
	// Public IPv4 (allowed).
	{"1.1.1.1", ""},
	{"8.8.8.8", ""},
	{"9.9.9.9", ""},
	{"93.184.216.34", ""},
	{"140.82.112.3", ""},
	{"151.101.1.69", ""},
	{"1.0.0.1", ""},
	{"11.0.0.1", ""},
	{"100.63.255.255", ""},
	{"100.128.0.0", ""},
	{"126.255.255.255", ""},
	{"128.0.0.1", ""},
	{"169.253.255.255", ""},
	{"169.255.0.1", ""},
	{"172.15.255.255", ""},
	{"172.32.0.0", ""},
	{"191.255.255.255", ""},
	{"192.0.1.1", ""},
	{"192.0.3.1", ""},
	{"192.88.98.255", ""},
	{"192.167.255.255", ""},
	{"192.169.0.0", ""},
	{"198.17.255.255", ""},
	{"198.20.0.0", ""},
	{"198.51.99.255", ""},
	{"198.51.101.0", ""},
	{"203.0.112.255", ""},
	{"203.0.114.0", ""},
	{"223.255.255.254", ""},
	// this network 0/8
	{"0.0.0.0", "this-network"},
	{"0.0.0.1", "this-network"},
	{"0.1.2.3", "this-network"},
	{"0.255.255.255", "this-network"},
	// private
	{"10.0.0.0", "private"},
	{"10.0.0.1", "private"},
	{"10.10.10.10", "private"},
	{"10.255.255.255", "private"},
	{"172.16.0.0", "private"},
	{"172.16.0.1", "private"},
	{"172.20.1.1", "private"},
	{"172.31.255.255", "private"},
	{"192.168.0.0", "private"},
	{"192.168.0.1", "private"},
	{"192.168.1.254", "private"},
	{"192.168.255.255", "private"},
	// CGNAT
	{"100.64.0.0", "cgnat"},
	{"100.64.0.1", "cgnat"},
	{"100.100.100.200", "cgnat"},
	{"100.127.255.255", "cgnat"},
	// loopback
	{"127.0.0.1", "loopback"},
	{"127.0.0.0", "loopback"},
	{"127.0.1.1", "loopback"},
	{"127.1.2.3", "loopback"},
	{"127.255.255.254", "loopback"},
	// link-local and cloud metadata
	{"169.254.0.1", "link-local"},
	{"169.254.169.254", "link-local"},
	{"169.254.170.2", "link-local"},
	{"169.254.255.255", "link-local"},
	// IETF protocol assignments, documentation, benchmarking, others
	{"192.0.0.1", "ietf-protocol-assignments"},
	{"192.0.0.8", "ietf-protocol-assignments"},
	{"192.0.0.9", "ietf-protocol-assignments"},
	{"192.0.0.170", "ietf-protocol-assignments"},
	{"192.0.0.255", "ietf-protocol-assignments"},
	{"192.0.2.0", "documentation"},
	{"192.0.2.1", "documentation"},
	{"192.0.2.255", "documentation"},
	{"198.51.100.1", "documentation"},
	{"198.51.100.255", "documentation"},
	{"203.0.113.1", "documentation"},
	{"203.0.113.254", "documentation"},
	{"198.18.0.0", "benchmarking"},
	{"198.18.0.1", "benchmarking"},
	{"198.19.255.255", "benchmarking"},
	{"192.88.99.1", "6to4-relay"},
	{"192.31.196.1", "as112"},
	{"192.175.48.1", "as112"},
	{"192.52.193.1", "amt"},
	// multicast, reserved, broadcast
	{"224.0.0.0", "multicast"},
	{"224.0.0.1", "multicast"},
	{"224.0.0.251", "multicast"},
	{"232.1.1.1", "multicast"},
	{"239.255.255.250", "multicast"},
	{"239.255.255.255", "multicast"},
	{"240.0.0.0", "reserved"},
	{"240.0.0.1", "reserved"},
	{"250.1.2.3", "reserved"},
	{"255.255.255.254", "reserved"},
	{"255.255.255.255", "broadcast"},

	// Public IPv6 (allowed).
	{"2606:4700:4700::1111", ""},
	{"2001:4860:4860::8888", ""},
	{"2620:fe::fe", ""},
	{"2a00:1450:4001:81b::200e", ""},
	{"2400:cb00::1", ""},
	{"2001:200::1", ""},
	{"2003::1", ""},
	{"2620:4f:8001::1", ""},
	{"3ffe::1", ""},
	{"3fff:1000::1", ""},
	// IPv6 special-purpose
	{"::", "unspecified"},
	{"::1", "loopback"},
	{"::2", "ipv4-compatible"},
	{"::127.0.0.1", "ipv4-compatible"},
	{"::10.0.0.1", "ipv4-compatible"},
	{"::8.8.8.8", "ipv4-compatible"},
	{"::ffff:127.0.0.1", "ipv4-mapped"},
	{"::ffff:10.0.0.1", "ipv4-mapped"},
	{"::ffff:169.254.169.254", "ipv4-mapped"},
	{"::ffff:8.8.8.8", "ipv4-mapped"},
	{"::ffff:7f00:1", "ipv4-mapped"},
	{"::ffff:0:7f00:1", "ipv4-translated"},
	{"::ffff:0:a00:1", "ipv4-translated"},
	{"64:ff9b::7f00:1", "nat64"},
	{"64:ff9b::10.0.0.1", "nat64"},
	{"64:ff9b::8.8.8.8", "nat64"},
	{"64:ff9b:1::a00:1", "nat64-local"},
	{"64:ff9b:1:ffff::1", "nat64-local"},
	{"2002::1", "6to4"},
	{"2002:7f00:1::", "6to4"},
	{"2002:a00:1::1", "6to4"},
	{"2002:c000:204::1", "6to4"},
	{"2001::1", "teredo"},
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"},
	{"2001:0:ffff:ffff::1", "teredo"},
	{"100::1", "discard"},
	{"100::ffff", "discard"},
	{"100:0:0:1::1", "dummy"},
	{"2001:2::1", "benchmarking"},
	{"2001:2:0:ffff::1", "benchmarking"},
	{"2001:10::1", "orchid"},
	{"2001:1f::1", "orchid"},
	{"2001:20::1", "orchid"},
	{"2001:2f::1", "orchid"},
	{"2001:1::1", "ietf-protocol-assignments"},
	{"2001:3::1", "ietf-protocol-assignments"},
	{"2001:4:112::1", "ietf-protocol-assignments"},
	{"2001:1ff::1", "ietf-protocol-assignments"},
	{"2001:db8::", "documentation"},
	{"2001:db8::1", "documentation"},
	{"2001:db8:ffff:ffff::1", "documentation"},
	{"3fff::1", "documentation"},
	{"3fff:fff::1", "documentation"},
	{"2620:4f:8000::1", "as112"},
	{"5f00::1", "srv6"},
	{"fc00::1", "unique-local"},
	{"fd00::1", "unique-local"},
	{"fd12:3456:789a::1", "unique-local"},
	{"fdff:ffff::1", "unique-local"},
	{"fe80::1", "link-local"},
	{"fe80::abcd:ef01:2345:6789", "link-local"},
	{"febf::1", "link-local"},
	{"fec0::1", "site-local"},
	{"feff::1", "site-local"},
	{"ff00::1", "multicast"},
	{"ff02::1", "multicast"},
	{"ff02::fb", "multicast"},
	{"ff05::1:3", "multicast"},
	{"ff0e::1", "multicast"},
	{"1::1", "ipv6-reserved"},
	{"100:1::1", "ipv6-reserved"},
	{"1000::1", "ipv6-reserved"},
	{"4000::1", "ipv6-reserved"},
	{"8000::1", "ipv6-reserved"},
	{"e000::1", "ipv6-reserved"},
	{"fe00::1", "ipv6-reserved"},
}

func TestCheckAddresses(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range addrCases {
		a := netip.MustParseAddr(c.addr)
		d := p.Check("", a, 443)
		if c.want == "" {
			if !d.Allow || d.Reason != ReasonPublic {
				t.Errorf("%s: want allowed, got %+v", c.addr, d)
			}
			continue
		}
		if d.Allow || d.Reason != c.want {
			t.Errorf("%s: want denied %q, got %+v", c.addr, c.want, d)
		}
	}
	if len(addrCases) < 150 {
		t.Fatalf("only %d address cases", len(addrCases))
	}
}

func TestCheckPorts(t *testing.T) {
	p, _ := New(Config{})
	pub := netip.MustParseAddr("8.8.8.8")
	for _, port := range []uint16{80, 443} {
		if d := p.Check("", pub, port); !d.Allow {
			t.Errorf("port %d: %+v", port, d)
		}
	}
	for _, port := range []uint16{1, 21, 22, 25, 53, 79, 81, 442, 444, 3128, 6379, 8080, 8443, 65535} {
		if d := p.Check("", pub, port); d.Allow || d.Reason != ReasonPort {
			t.Errorf("port %d: want %s, got %+v", port, ReasonPort, d)
		}
	}
}

func TestAllowList(t *testing.T) {
	cidrs, err := ParseCIDRList("10.1.0.0/16, 192.168.7.7 ,fd00:1::/64")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{
		AllowCIDRs: cidrs,
		AllowHosts: []string{"wiki.corp.example", "*.intra.example"},
		AllowPorts: []uint16{8080},
		SelfAddrs:  []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("203.0.113.9")},
		SelfPorts:  []uint16{3128, 8080},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host, addr string
		port       uint16
		allow      bool
		reason     string
	}{
		{"", "10.1.5.5", 443, true, ReasonAllowCIDR},
		{"", "10.1.5.5", 8080, true, ReasonAllowCIDR},
		{"", "10.1.5.5", 22, false, ReasonPort},
		{"", "10.2.0.1", 443, false, "private"},
		{"", "192.168.7.7", 80, true, ReasonAllowCIDR},
		{"", "192.168.7.8", 80, false, "private"},
		{"", "fd00:1::5", 443, true, ReasonAllowCIDR},
		{"", "fd00:2::5", 443, false, "unique-local"},
		{"wiki.corp.example", "172.16.1.1", 443, true, ReasonAllowHost},
		{"WIKI.corp.example.", "172.16.1.1", 443, true, ReasonAllowHost},
		{"other.corp.example", "172.16.1.1", 443, false, "private"},
		{"a.intra.example", "10.9.9.9", 443, true, ReasonAllowHost},
		{"intra.example", "10.9.9.9", 443, false, "private"},
		{"evilintra.example", "10.9.9.9", 443, false, "private"},
		{"", "8.8.8.8", 8080, false, ReasonPort},
		// The proxy's own address on its own port: refused even though allowed.
		{"", "10.1.2.3", 8080, false, ReasonSelf},
		{"", "10.1.2.3", 443, true, ReasonAllowCIDR},
		{"", "203.0.113.9", 443, false, ReasonSelf},
		{"", "127.0.0.1", 3128, false, ReasonSelf},
		// Never allowed whatever the list says.
		{"wiki.corp.example", "0.0.0.0", 443, false, "this-network"},
		{"wiki.corp.example", "224.0.0.1", 443, false, "multicast"},
		{"wiki.corp.example", "255.255.255.255", 443, false, "broadcast"},
	}
	for _, c := range cases {
		d := p.Check(c.host, netip.MustParseAddr(c.addr), c.port)
		if d.Allow != c.allow || d.Reason != c.reason {
			t.Errorf("%s %s:%d: want %v/%s, got %+v", c.host, c.addr, c.port, c.allow, c.reason, d)
		}
	}
	cs, hs, ps := p.Describe()
	if len(cs) != 3 || len(hs) != 2 || len(ps) != 1 {
		t.Errorf("describe: %v %v %v", cs, hs, ps)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := New(Config{AllowHosts: []string{"10.0.0.1"}}); err == nil {
		t.Error("address as allow host accepted")
	}
	if _, err := New(Config{AllowHosts: []string{"bad host"}}); err == nil {
		t.Error("bad allow host accepted")
	}
	if _, err := ParseCIDRList("10.0.0.0/33"); err == nil {
		t.Error("bad CIDR accepted")
	}
	if _, err := ParsePortList("80,0"); err == nil {
		t.Error("port 0 accepted")
	}
}

func TestZoneAndInvalid(t *testing.T) {
	p, _ := New(Config{})
	if d := p.Check("", netip.MustParseAddr("fe80::1%eth0"), 443); d.Allow {
		t.Error("zoned address allowed")
	}
	if d := p.Check("", netip.Addr{}, 443); d.Allow {
		t.Error("invalid address allowed")
	}
	if !errors.Is(badHost("x"), ErrBadHost) {
		t.Error("badHost does not wrap ErrBadHost")
	}
}
