package guard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Host is a destination host after strict parsing: either a canonical
// lower-case DNS name or an IP literal, never both.
type Host struct {
	Name string     // lower-case DNS name without a trailing dot; empty for literals
	Addr netip.Addr // valid only for IP literals
}

// IsIP reports whether the host was an IP literal.
func (h Host) IsIP() bool { return h.Addr.IsValid() }

// String returns the host as it belongs in an authority (IPv6 in brackets).
func (h Host) String() string {
	if h.IsIP() {
		if h.Addr.Is6() {
			return "[" + h.Addr.String() + "]"
		}
		return h.Addr.String()
	}
	return h.Name
}

// ErrBadHost is wrapped by every host parsing error.
var ErrBadHost = errors.New("bad host")

func badHost(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadHost, fmt.Sprintf(format, args...))
}

// ParseHostPort parses an authority ("host", "host:port", "[v6]:port").
// defaultPort is used when the port is absent (0 means a port is required).
// It refuses every literal form that resolvers and URL parsers disagree
// about: decimal, octal and hex IPv4, short dotted forms, zone ids, IPs
// with trailing dots, bracketed IPv4 or names, and odd ports.
func ParseHostPort(hostport string, defaultPort uint16) (Host, uint16, error) {
	if hostport == "" {
		return Host{}, 0, badHost("empty")
	}
	if len(hostport) > 300 {
		return Host{}, 0, badHost("too long")
	}
	var hostPart, portPart string
	hasPort := false
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return Host{}, 0, badHost("unclosed bracket")
		}
		hostPart = hostport[:end+1]
		rest := hostport[end+1:]
		switch {
		case rest == "":
		case strings.HasPrefix(rest, ":"):
			portPart, hasPort = rest[1:], true
		default:
			return Host{}, 0, badHost("junk after bracket")
		}
	} else {
		if strings.ContainsAny(hostport, "[]") {
			return Host{}, 0, badHost("stray bracket")
		}
		switch strings.Count(hostport, ":") {
		case 0:
			hostPart = hostport
		case 1:
			i := strings.IndexByte(hostport, ':')
			hostPart, portPart, hasPort = hostport[:i], hostport[i+1:], true
		default:
			return Host{}, 0, badHost("IPv6 literal without brackets")
		}
	}
	h, err := parseHost(hostPart, true)
	if err != nil {
		return Host{}, 0, err
	}
	if !hasPort {
		if defaultPort == 0 {
			return Host{}, 0, badHost("missing port")
		}
		return h, defaultPort, nil
	}
	p, err := parsePort(portPart)
	if err != nil {
		return Host{}, 0, err
	}
	return h, p, nil
}

// ParseHost parses a bare host as found in a URL's Hostname(): a name, an
// IPv4 literal, or an IPv6 literal with or without brackets.
func ParseHost(s string) (Host, error) {
	if strings.HasPrefix(s, "[") {
		return parseHost(s, true)
	}
	if strings.Contains(s, ":") {
		return parseHost("["+s+"]", true)
	}
	return parseHost(s, false)
}

func parsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 {
		return 0, badHost("bad port %q", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, badHost("bad port %q", s)
		}
	}
	if s[0] == '0' {
		return 0, badHost("bad port %q", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, badHost("bad port %q", s)
	}
	return uint16(n), nil
}

func parseHost(s string, bracketsOK bool) (Host, error) {
	if s == "" {
		return Host{}, badHost("empty host")
	}
	if strings.ContainsRune(s, '%') {
		return Host{}, badHost("zone ids and escapes are not allowed")
	}
	if strings.HasPrefix(s, "[") {
		if !bracketsOK || !strings.HasSuffix(s, "]") || strings.Count(s, "[") != 1 || strings.Count(s, "]") != 1 {
			return Host{}, badHost("bad brackets")
		}
		inner := s[1 : len(s)-1]
		if !strings.Contains(inner, ":") {
			return Host{}, badHost("brackets around a non-IPv6 host")
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return Host{}, badHost("bad IPv6 literal")
		}
		return Host{Addr: a}, nil
	}
	if strings.ContainsAny(s, "[]:") {
		return Host{}, badHost("bad characters")
	}
	// Plain dotted-decimal IPv4 (netip rejects leading zeros, short forms
	// and anything but four decimal parts).
	if a, err := netip.ParseAddr(s); err == nil {
		if !a.Is4() {
			return Host{}, badHost("bad IPv4 literal")
		}
		return Host{Addr: a}, nil
	}
	name := strings.ToLower(s)
	if strings.HasSuffix(name, ".") {
		name = name[:len(name)-1]
		if name == "" {
			return Host{}, badHost("empty name")
		}
	}
	if len(name) > 253 {
		return Host{}, badHost("name too long")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return Host{}, err
		}
	}
	// A final label that is all digits or 0x-hex makes URL parsers read the
	// whole thing as an IPv4 number (2130706433, 0177.1, 0x7f.1, 1.2.3.4.).
	if looksNumeric(labels[len(labels)-1]) {
		return Host{}, badHost("numeric host %q is an odd IPv4 form", s)
	}
	return Host{Name: name}, nil
}

func checkLabel(l string) error {
	if l == "" {
		return badHost("empty label")
	}
	if len(l) > 63 {
		return badHost("label too long")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
		case c == '-':
			if i == 0 || i == len(l)-1 {
				return badHost("label %q starts or ends with a hyphen", l)
			}
		default:
			return badHost("bad character %q in name", c)
		}
	}
	return nil
}

func looksNumeric(l string) bool {
	if strings.HasPrefix(l, "0x") {
		for i := 2; i < len(l); i++ {
			c := l[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}
