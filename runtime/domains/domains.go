// Package domains matches host names against an operator's web policy
// lists: exact names and "*." wildcards of whole labels. Names are
// compared as the resolver would ask for them: lower case, without a
// trailing dot, internationalised labels in their ASCII (punycode) form
// (golang.org/x/net/idna), so "Bücher.Example." and
// "xn--bcher-kva.example" are one name. A wildcard may not cover a public
// suffix ("*.com", "*.co.uk"; golang.org/x/net/publicsuffix), and no name
// is an IP literal: addresses are the egress's address policy.
package domains

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// ErrPattern is wrapped by every refused pattern.
var ErrPattern = errors.New("bad domain pattern")

// profile converts names as a resolver's caller does (IDNA 2008 lookup
// rules with the usual UTS #46 mapping), refusing what it cannot convert.
var profile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false), idna.StrictDomainName(false))

// Normalize returns the name as lists hold it: lower case, no trailing
// dot, each label in its ASCII form, every label 1 to 63 bytes of
// letters, digits, hyphens (not first or last) and underscores, the whole
// at most 253 bytes. IP literals are refused.
func Normalize(name string) (string, error) {
	if name == "" {
		return "", errors.New("empty name")
	}
	if len(name) > 1024 {
		return "", errors.New("name too long")
	}
	if !utf8.ValidString(name) {
		return "", errors.New("name is not valid UTF-8")
	}
	if _, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
		return "", fmt.Errorf("%q is an IP address, not a name", name)
	}
	n := strings.TrimSuffix(name, ".")
	if n == "" || strings.HasSuffix(n, ".") {
		return "", fmt.Errorf("%q has an empty label", name)
	}
	ascii, err := profile.ToASCII(n)
	if err != nil {
		return "", fmt.Errorf("%q is not a valid name: %w", name, err)
	}
	ascii = strings.ToLower(ascii)
	// An address written with a trailing dot, or in characters the IDNA
	// mapping turns into digits ("0.0.0.0.", fullwidth digits), is still an
	// address.
	if _, err := netip.ParseAddr(ascii); err == nil {
		return "", fmt.Errorf("%q is an IP address, not a name", name)
	}
	// The ASCII form must be a fixed point: its punycode labels decode
	// and encode back to themselves.
	if again, err := profile.ToASCII(ascii); err != nil || again != ascii {
		return "", fmt.Errorf("%q has labels that do not convert back and forth", name)
	}
	if len(ascii) > 253 {
		return "", fmt.Errorf("%q is longer than 253 bytes", name)
	}
	for l := range strings.SplitSeq(ascii, ".") {
		if err := checkLabel(l); err != nil {
			return "", fmt.Errorf("%q: %w", name, err)
		}
	}
	return ascii, nil
}

func checkLabel(l string) error {
	if l == "" {
		return errors.New("empty label")
	}
	if len(l) > 63 {
		return fmt.Errorf("label %q is longer than 63 bytes", l)
	}
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
		case c == '-':
			if i == 0 || i == len(l)-1 {
				return fmt.Errorf("label %q starts or ends with a hyphen", l)
			}
		default:
			return fmt.Errorf("bad character %q in label %q", c, l)
		}
	}
	return nil
}

// Pattern is one parsed list entry.
type Pattern struct {
	// Name is the normalised name; for a wildcard, the part after "*.".
	Name     string
	Wildcard bool
}

func (p Pattern) String() string {
	if p.Wildcard {
		return "*." + p.Name
	}
	return p.Name
}

// ParsePattern parses an exact name ("docs.example.org") or a wildcard
// ("*.example.org": every name below example.org, at any depth, but not
// example.org itself). "*" stands only for whole leading labels: "*x.org",
// "a.*.org" and "*" alone are refused, and so is a wildcard over a public
// suffix.
func ParsePattern(s string) (Pattern, error) {
	bad := func(format string, args ...any) (Pattern, error) {
		return Pattern{}, fmt.Errorf("%w %q: %s", ErrPattern, s, fmt.Sprintf(format, args...))
	}
	if strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t/:@?#") {
		return bad("want a bare name such as docs.example.org or *.example.org (no scheme, port, path or spaces)")
	}
	rest, wild := strings.CutPrefix(s, "*.")
	if strings.Contains(rest, "*") {
		return bad(`"*" may only stand for whole labels at the front, as in *.example.org`)
	}
	name, err := Normalize(rest)
	if err != nil {
		return bad("%v", err)
	}
	if wild {
		if etld1, err := publicsuffix.EffectiveTLDPlusOne(name); err != nil || len(etld1) > len(name) {
			return bad("a wildcard may not cover a public suffix (%s); name a domain under it", name)
		}
	}
	return Pattern{Name: name, Wildcard: wild}, nil
}

// List is a set of patterns.
type List struct {
	exact    map[string]bool
	suffixes map[string]bool // wildcard names
	patterns []Pattern
}

// NewList parses every entry; the error names each refused one.
func NewList(entries []string) (*List, error) {
	l := &List{exact: map[string]bool{}, suffixes: map[string]bool{}}
	var errs []error
	for i, e := range entries {
		p, err := ParsePattern(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, err))
			continue
		}
		if p.Wildcard {
			l.suffixes[p.Name] = true
		} else {
			l.exact[p.Name] = true
		}
		l.patterns = append(l.patterns, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// Len is the number of patterns.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.patterns)
}

// Match reports the pattern a name is covered by. The name is normalised
// first; a name that does not normalise matches nothing.
func (l *List) Match(name string) (Pattern, bool) {
	if l.Len() == 0 {
		return Pattern{}, false
	}
	n, err := Normalize(name)
	if err != nil {
		return Pattern{}, false
	}
	if l.exact[n] {
		return Pattern{Name: n}, true
	}
	// Each parent of n, longest first: a.b.example.org → b.example.org, example.org, org.
	for i := strings.IndexByte(n, '.'); i >= 0; {
		parent := n[i+1:]
		if l.suffixes[parent] {
			return Pattern{Name: parent, Wildcard: true}, true
		}
		j := strings.IndexByte(parent, '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return Pattern{}, false
}

// Verdict is a policy's answer for one name.
type Verdict struct {
	Allow bool
	// Reason is why: "denylist *.ads.example", "not in the allowlist", or
	// "allowlist docs.example.org"; empty when no list applies.
	Reason string
}

// Policy is a denylist and an allowlist: a name on the denylist is
// refused even when the allowlist covers it; with an allowlist, a name
// not on it is refused; with neither, every name passes (the address
// checks still apply).
type Policy struct {
	Allow *List
	Deny  *List
}

// NewPolicy parses both lists.
func NewPolicy(allow, deny []string) (*Policy, error) {
	a, err := NewList(allow)
	if err != nil {
		return nil, fmt.Errorf("allow: %w", err)
	}
	d, err := NewList(deny)
	if err != nil {
		return nil, fmt.Errorf("deny: %w", err)
	}
	return &Policy{Allow: a, Deny: d}, nil
}

// Check decides one name, as the client asked for it.
func (p *Policy) Check(name string) Verdict {
	if p == nil {
		return Verdict{Allow: true}
	}
	if p.Allow.Len() > 0 || p.Deny.Len() > 0 {
		if _, err := Normalize(name); err != nil {
			return Verdict{Reason: "not a valid name"}
		}
	}
	if m, ok := p.Deny.Match(name); ok {
		return Verdict{Reason: "denylist " + m.String()}
	}
	if p.Allow.Len() == 0 {
		return Verdict{Allow: true}
	}
	if m, ok := p.Allow.Match(name); ok {
		return Verdict{Allow: true, Reason: "allowlist " + m.String()}
	}
	return Verdict{Reason: "not in the allowlist"}
}
