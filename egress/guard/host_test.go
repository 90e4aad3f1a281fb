package guard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// hostCases: authorities as a client may send them. ok=false must be
// refused by the parser; ok=true gives the canonical host and port.
var hostCases = []struct {
	in   string
	ok   bool
	host string
	port uint16
}{
	{"example.com", true, "example.com", 443},
	{"example.com:80", true, "example.com", 80},
	{"EXAMPLE.com:443", true, "example.com", 443},
	{"example.com.", true, "example.com", 443},
	{"example.com.:443", true, "example.com", 443},
	{"a-b.example", true, "a-b.example", 443},
	{"_dmarc.example.org", true, "_dmarc.example.org", 443},
	{"xn--bcher-kva.example", true, "xn--bcher-kva.example", 443},
	{"1.example", true, "1.example", 443},
	{"123.example.com", true, "123.example.com", 443},
	{"0x7f.example", true, "0x7f.example", 443},
	{"localhost", true, "localhost", 443},
	{"8.8.8.8", true, "8.8.8.8", 443},
	{"8.8.8.8:80", true, "8.8.8.8", 80},
	{"127.0.0.1:443", true, "127.0.0.1", 443},
	{"[2606:4700::1111]:443", true, "[2606:4700::1111]", 443},
	{"[::1]", true, "[::1]", 443},
	{"[::ffff:127.0.0.1]:80", true, "[::ffff:127.0.0.1]", 80},
	{"[2001:DB8::1]", true, "[2001:db8::1]", 443},
	// Odd IPv4 encodings.
	{"2130706433", false, "", 0},
	{"2130706433:80", false, "", 0},
	{"017700000001", false, "", 0},
	{"0x7f000001", false, "", 0},
	{"0X7F000001", false, "", 0},
	{"0177.0.0.1", false, "", 0},
	{"0177.0.0.01", false, "", 0},
	{"127.000.000.001", false, "", 0},
	{"010.0.0.1", false, "", 0},
	{"0x7f.0.0.1", false, "", 0},
	{"0x7f.1", false, "", 0},
	{"0x7f.0x0.0x0.0x1", false, "", 0},
	{"127.1", false, "", 0},
	{"127.0.1", false, "", 0},
	{"10.1", false, "", 0},
	{"192.168.1", false, "", 0},
	{"0", false, "", 0},
	{"0.0", false, "", 0},
	{"1.2.3.4.5", false, "", 0},
	{"256.0.0.1", false, "", 0},
	{"1.2.3.256", false, "", 0},
	{"127.0.0.1.", false, "", 0},
	{"127.0.0.1.:80", false, "", 0},
	{"8.8.8.8.", false, "", 0},
	{"169.254.169.254.", false, "", 0},
	{"0x", false, "", 0},
	{"example.0x1f", false, "", 0},
	{"foo.123", false, "", 0},
	// Zone ids, escapes, brackets.
	{"[fe80::1%eth0]", false, "", 0},
	{"[fe80::1%25eth0]:443", false, "", 0},
	{"fe80::1%eth0", false, "", 0},
	{"127.0.0.1%00", false, "", 0},
	{"exa%6dple.com", false, "", 0},
	{"[127.0.0.1]", false, "", 0},
	{"[127.0.0.1]:80", false, "", 0},
	{"[example.com]:443", false, "", 0},
	{"[::1", false, "", 0},
	{"::1]", false, "", 0},
	{"[[::1]]", false, "", 0},
	{"[::1]]:80", false, "", 0},
	{"[::1]x", false, "", 0},
	{"[::1]:", false, "", 0},
	{"[]", false, "", 0},
	{"[::ffff:7f00:1%1]", false, "", 0},
	{"::1", false, "", 0},
	{"::1:443", false, "", 0},
	{"2001:db8::1", false, "", 0},
	// Ports.
	{"example.com:", false, "", 0},
	{"example.com:0", false, "", 0},
	{"example.com:080", false, "", 0},
	{"example.com:+80", false, "", 0},
	{"example.com:-1", false, "", 0},
	{"example.com:65536", false, "", 0},
	{"example.com:443443", false, "", 0},
	{"example.com:80:80", false, "", 0},
	{"example.com: 80", false, "", 0},
	{"example.com:http", false, "", 0},
	// Names.
	{"", false, "", 0},
	{":443", false, "", 0},
	{".", false, "", 0},
	{"..", false, "", 0},
	{"example..com", false, "", 0},
	{".example.com", false, "", 0},
	{"example.com..", false, "", 0},
	{"-example.com", false, "", 0},
	{"example-.com", false, "", 0},
	{"exa mple.com", false, "", 0},
	{"example.com/path", false, "", 0},
	{"user@example.com", false, "", 0},
	{"example.com\\", false, "", 0},
	{"exämple.com", false, "", 0},
	{"example.com\x00", false, "", 0},
	{"ex\nample.com", false, "", 0},
	{strings.Repeat("a", 64) + ".com", false, "", 0},
	{strings.Repeat("a.", 130) + "com", false, "", 0},
}

func TestParseHostPort(t *testing.T) {
	for _, c := range hostCases {
		h, port, err := ParseHostPort(c.in, 443)
		if !c.ok {
			if err == nil {
				t.Errorf("%q: accepted as %v:%d", c.in, h, port)
			} else if !errors.Is(err, ErrBadHost) {
				t.Errorf("%q: error does not wrap ErrBadHost: %v", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if h.String() != c.host || port != c.port {
			t.Errorf("%q: got %s:%d, want %s:%d", c.in, h, port, c.host, c.port)
		}
	}
	if _, _, err := ParseHostPort("example.com", 0); err == nil {
		t.Error("missing port accepted with defaultPort 0")
	}
}

func TestParseHost(t *testing.T) {
	for in, want := range map[string]string{
		"example.com": "example.com",
		"::1":         "[::1]",
		"[::1]":       "[::1]",
		"10.0.0.1":    "10.0.0.1",
	} {
		h, err := ParseHost(in)
		if err != nil || h.String() != want {
			t.Errorf("%q: got %v, %v", in, h, err)
		}
	}
	for _, in := range []string{"fe80::1%eth0", "127.1", "2130706433", "[127.0.0.1]", "::1]"} {
		if _, err := ParseHost(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzParseHostPort checks the parser never panics, and that anything it
// accepts is canonical: re-parsing the output gives the same host, and an
// accepted name can never be read as an IPv4 number.
func FuzzParseHostPort(f *testing.F) {
	for _, c := range hostCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, port, err := ParseHostPort(in, 443)
		if err != nil {
			return
		}
		if port == 0 {
			t.Fatalf("%q: port 0", in)
		}
		again, port2, err := ParseHostPort(h.String()+":"+itoa(port), 0)
		if err != nil || again != h || port2 != port {
			t.Fatalf("%q: not canonical: %v %v %d", in, h, err, port2)
		}
		if h.IsIP() {
			if h.Addr.Zone() != "" {
				t.Fatalf("%q: zone accepted", in)
			}
			return
		}
		if _, err := netip.ParseAddr(h.Name); err == nil {
			t.Fatalf("%q: name parses as an address", in)
		}
		last := h.Name[strings.LastIndexByte(h.Name, '.')+1:]
		if strings.Trim(last, "0123456789") == "" {
			t.Fatalf("%q: numeric final label accepted: %q", in, h.Name)
		}
	})
}

func itoa(p uint16) string {
	var b [5]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + p%10)
		p /= 10
		if p == 0 {
			return string(b[i:])
		}
	}
}
