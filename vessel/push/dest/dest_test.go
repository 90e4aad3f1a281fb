package dest

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Every special-purpose class is refused, as a literal in the URL and as
// the address dialled; nothing is ever dialled here.
func TestSpecialPurposeRefused(t *testing.T) {
	special := []string{
		"0.0.0.0", "0.1.2.3", "169.254.169.254", "169.254.0.1", "192.0.0.8", "192.0.2.1", "192.88.99.1",
		"198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250",
		"240.0.0.1", "255.255.255.255", "::", "64:ff9b::a9fe:a9fe", "100::1", "2001::1", "2001:db8::1",
		"2002:a9fe:a9fe::1", "fe80::1", "fec0::1", "ff02::1", "::ffff:169.254.169.254", "::ffff:0.0.0.0",
	}
	pol := Policy{Public: true}
	for _, s := range special {
		a := netip.MustParseAddr(s)
		if c := Classify(a); c != Special {
			t.Errorf("%s classified %s, want special-purpose", s, c)
		}
		host := s
		if strings.Contains(s, ":") {
			host = "[" + s + "]"
		}
		if _, err := pol.Check("https://" + host + "/hook"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "special-purpose") {
			t.Errorf("URL with %s: %v", s, err)
		}
		ap := netip.AddrPortFrom(a, 443).String()
		if err := Control("tcp", ap, nil); !errors.Is(err, ErrRefused) {
			t.Errorf("dial %s allowed", ap)
		}
		if err := PublicControl("tcp", ap, nil); !errors.Is(err, ErrRefused) {
			t.Errorf("public dial %s allowed", ap)
		}
	}
}

// Loopback, private, shared and unique-local addresses only through a
// grant; public ones through push_public.
func TestInternalOnlyThroughAGrant(t *testing.T) {
	internal := []string{"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.1", "::1", "fd00::1", "::ffff:10.0.0.1"}
	for _, s := range internal {
		a := netip.MustParseAddr(s)
		if c := Classify(a); c != Internal {
			t.Errorf("%s classified %s, want internal", s, c)
		}
		host := s
		if strings.Contains(s, ":") {
			host = "[" + s + "]"
		}
		open := Policy{Public: true}
		if _, err := open.Check("http://" + host + ":8080/hooks/x"); !errors.Is(err, ErrRefused) {
			t.Errorf("%s reached without a grant: %v", s, err)
		}
		granted, err := NewPolicy([]string{"http://" + host + ":8080/hooks/"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := granted.Check("http://" + host + ":8080/hooks/x"); err != nil || r != Direct {
			t.Errorf("granted %s: %v %v", s, r, err)
		}
		if err := Control("tcp", netip.AddrPortFrom(a, 8080).String(), nil); err != nil {
			t.Errorf("granted dial to %s refused: %v", s, err)
		}
		if err := PublicControl("tcp", netip.AddrPortFrom(a, 8080).String(), nil); err == nil {
			t.Errorf("public dial to %s allowed", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "2606:4700::1"} {
		if c := Classify(netip.MustParseAddr(s)); c != Public {
			t.Errorf("%s classified %s", s, c)
		}
	}
	if r, err := (Policy{Public: true}).Check("https://hooks.example.com/x"); err != nil || r != ViaEgress {
		t.Fatalf("public name with push_public: %v %v", r, err)
	}
	if _, err := (Policy{}).Check("https://hooks.example.com/x"); !errors.Is(err, ErrRefused) {
		t.Fatalf("public name without push_public: %v", err)
	}
}

// A grant matches scheme, host, port and path prefix exactly.
func TestGrantMatching(t *testing.T) {
	pol, err := NewPolicy([]string{"https://app.internal:8443/hooks/", "http://app.internal/exact"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for url, ok := range map[string]bool{
		"https://app.internal:8443/hooks/a":       true,
		"https://APP.internal:8443/hooks/a?x=1":   true,
		"https://app.internal:8443/hooks":         false,
		"https://app.internal:8443/hooksx":        false,
		"https://app.internal/hooks/a":            false,
		"http://app.internal:8443/hooks/a":        false,
		"https://app.internal.evil:8443/hooks/a":  false,
		"https://app.internal:8443/hooks/../x":    false,
		"http://app.internal/exact":               true,
		"http://app.internal:80/exact/sub":        true,
		"http://app.internal/exactly":             false,
		"https://user@app.internal:8443/hooks/a":  false,
		"https://app.internal:8443/hooks/a#frag":  false,
		"https://app.internal:99999/hooks/a":      false,
		"https://app.internal%2f:8443/hooks/a":    false,
		"https://[::1%25eth0]:8443/hooks/a":       false,
		"javascript:alert(1)":                     false,
		"https://app.internal:8443/hooks/%2e%2e/": false,
		"https://app.internal:8443/hooks/a%2fb":   false,
		"https://app.internal:8443/hooks/a\\\\b":  false,
	} {
		_, err := pol.Check(url)
		if (err == nil) != ok {
			t.Errorf("%q: %v, want allowed=%v", url, err, ok)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"https://app.internal:8443/hooks/a", "http://[::1]:1/x", "http://169.254.169.254/", "%", "http://[", "https://a/b/../c"} {
		f.Add(s)
	}
	pol, err := NewPolicy([]string{"https://app.internal:8443/hooks/", "http://[::1]:1/"}, true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := pol.Check(s)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("%q: error without ErrRefused: %v", s, err)
			}
			return
		}
		if r != Direct && r != ViaEgress {
			t.Fatalf("%q: route %d", s, r)
		}
	})
}

// A granted host name is pinned: whatever it resolves to later, a
// special-purpose or loopback address is refused before any dial, while a
// grant naming the loopback literal reaches it. Only loopback is dialled;
// names resolve through a fake resolver.
func TestDialerPinsGrantedNames(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	var mu sync.Mutex
	answers := map[string][]string{}
	var looked []string
	d := &Dialer{Lookup: func(_ context.Context, _, host string) ([]netip.Addr, error) {
		mu.Lock()
		defer mu.Unlock()
		looked = append(looked, host)
		var out []netip.Addr
		for _, s := range answers[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		return out, nil
	}}
	ctx := context.Background()

	// The literal grant: dialled in its own class.
	c, err := d.DialContext(ctx, "tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("loopback literal: %v", err)
	}
	c.Close()
	// A name rebound to loopback, metadata, link-local, unspecified,
	// multicast: refused, each named.
	for name, addrs := range map[string][]string{
		"hooks.internal":   {"127.0.0.1"},
		"v6.internal":      {"::1"},
		"mapped.internal":  {"::ffff:127.0.0.1"},
		"meta.internal":    {"169.254.169.254"},
		"ll.internal":      {"fe80::1"},
		"zero.internal":    {"0.0.0.0"},
		"mcast.internal":   {"224.0.0.251"},
		"mixed.internal":   {"169.254.169.254", "127.0.0.2", "::"},
		"localhost":        {"127.0.0.1", "::1"},
		"nothing.internal": nil,
	} {
		mu.Lock()
		answers[name] = addrs
		mu.Unlock()
		_, err := d.DialContext(ctx, "tcp", net.JoinHostPort(name, port))
		if err == nil {
			t.Fatalf("%s -> %v dialled", name, addrs)
		}
		if addrs != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want ErrRefused", name, err)
		}
		for _, a := range addrs {
			if !strings.Contains(err.Error(), netip.MustParseAddr(a).Unmap().String()) {
				t.Errorf("%s: %v does not name %s", name, err, a)
			}
		}
	}
	// Special-purpose literals are never dialled, even if a URL got here.
	for _, lit := range []string{"169.254.169.254:80", "[fe80::1]:80", "0.0.0.0:" + port} {
		if _, err := d.DialContext(ctx, "tcp", lit); !errors.Is(err, ErrRefused) {
			t.Errorf("literal %s: %v", lit, err)
		}
	}
	// What a name may reach (decided, not dialled): private and public.
	for _, s := range []string{"10.1.2.3", "192.168.0.9", "fd00::7", "100.64.1.1", "8.8.8.8", "2606:4700::1"} {
		if err := Resolved("hooks.internal", netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(looked) != 10 {
		t.Errorf("lookups %v: literals must not be resolved", looked)
	}
}

// TestDialerTransientFailureNotRefused: a name resolving to a refused
// address and an allowed one whose dial fails is a failure to retry, not a
// refusal (a refusal ends the delivery as a dead letter); only refused
// answers are a refusal. The dial is replaced, so nothing is sent.
func TestDialerTransientFailureNotRefused(t *testing.T) {
	answers := map[string][]string{
		"mixed.internal":   {"127.0.0.1", "10.20.30.40"},
		"refused.internal": {"127.0.0.1", "169.254.169.254"},
	}
	var dialled []string
	d := &Dialer{
		Lookup: func(_ context.Context, _, host string) ([]netip.Addr, error) {
			var out []netip.Addr
			for _, s := range answers[host] {
				out = append(out, netip.MustParseAddr(s))
			}
			return out, nil
		},
		dial: func(_ context.Context, _ *net.Dialer, _, address string) (net.Conn, error) {
			dialled = append(dialled, address)
			return nil, errors.New("connection timed out (simulated)")
		},
	}
	_, err := d.DialContext(context.Background(), "tcp", "mixed.internal:443")
	if err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("mixed answers, allowed dial failed: %v; want a failure that is not ErrRefused", err)
	}
	if !strings.Contains(err.Error(), "simulated") || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("error %q should name the dial failure and the refused answer", err)
	}
	if len(dialled) != 1 || dialled[0] != "10.20.30.40:443" {
		t.Fatalf("dialled %v, want only the allowed address", dialled)
	}
	dialled = nil
	_, err = d.DialContext(context.Background(), "tcp", "refused.internal:443")
	if !errors.Is(err, ErrRefused) || len(dialled) != 0 {
		t.Fatalf("only refused answers: %v (dialled %v); want ErrRefused and no dial", err, dialled)
	}
}
