package domains

import (
	"errors"
	"strings"
	"testing"
)

// policy under test: an allowlist with exact names, wildcards and an
// internationalised name, and a denylist that carves parts out of it.
var (
	testAllow = []string{"docs.example.org", "*.wiki.example", "Bücher.example", "*.münchen.example", "api.example.com.", "*.Upper.Example",
		"xn--caf-dma.example", "under_score.example"}
	testDeny = []string{"*.private.wiki.example", "secret.wiki.example", "evil.docs.example.org", "*.ads.münchen.example"}
)

func TestPolicyTable(t *testing.T) {
	p, err := NewPolicy(testAllow, testDeny)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		allow  bool
		reason string
	}{
		// exact names
		{"docs.example.org", true, "allowlist docs.example.org"},
		{"DOCS.EXAMPLE.ORG", true, "allowlist docs.example.org"},
		{"Docs.Example.Org", true, "allowlist docs.example.org"},
		{"docs.example.org.", true, "allowlist docs.example.org"},
		{"DOCS.example.org.", true, "allowlist docs.example.org"},
		{"docs.example.org..", false, "not a valid name"},
		{"www.docs.example.org", false, "not in the allowlist"}, // an exact name covers no subdomain
		{"example.org", false, "not in the allowlist"},
		{"docs.example.org.evil.test", false, "not in the allowlist"},
		{"xdocs.example.org", false, "not in the allowlist"},
		{"docs-example.org", false, "not in the allowlist"},
		{"docs.example.or", false, "not in the allowlist"},
		{"api.example.com", true, "allowlist api.example.com"}, // the pattern's trailing dot is dropped
		{"api.example.com.", true, "allowlist api.example.com"},
		{"under_score.example", true, "allowlist under_score.example"},
		// wildcards: whole labels, any depth, not the parent itself
		{"a.wiki.example", true, "allowlist *.wiki.example"},
		{"A.WIKI.EXAMPLE.", true, "allowlist *.wiki.example"},
		{"a.b.wiki.example", true, "allowlist *.wiki.example"},
		{"x.y.z.wiki.example", true, "allowlist *.wiki.example"},
		{"wiki.example", false, "not in the allowlist"},
		{"awiki.example", false, "not in the allowlist"},     // not a whole label
		{"a-wiki.example", false, "not in the allowlist"},    // not a whole label
		{"wiki.example.evil", false, "not in the allowlist"}, // not a suffix
		{"a.wiki.examples", false, "not in the allowlist"},
		{"a.wikiexample", false, "not in the allowlist"},
		{"x.upper.example", true, "allowlist *.upper.example"}, // the pattern is lower-cased
		{"X.UPPER.EXAMPLE", true, "allowlist *.upper.example"},
		// denylist over allowlist
		{"secret.wiki.example", false, "denylist secret.wiki.example"},
		{"SECRET.wiki.example.", false, "denylist secret.wiki.example"},
		{"a.secret.wiki.example", true, "allowlist *.wiki.example"}, // exact deny covers no subdomain
		{"x.private.wiki.example", false, "denylist *.private.wiki.example"},
		{"x.y.private.wiki.example", false, "denylist *.private.wiki.example"},
		{"private.wiki.example", true, "allowlist *.wiki.example"}, // the deny wildcard's parent is not denied
		{"evil.docs.example.org", false, "denylist evil.docs.example.org"},
		{"publicprivate.wiki.example", true, "allowlist *.wiki.example"},
		// punycode and Unicode
		{"bücher.example", true, "allowlist xn--bcher-kva.example"},
		{"BÜCHER.example", true, "allowlist xn--bcher-kva.example"},
		{"xn--bcher-kva.example", true, "allowlist xn--bcher-kva.example"},
		{"XN--BCHER-KVA.EXAMPLE.", true, "allowlist xn--bcher-kva.example"},
		{"bucher.example", false, "not in the allowlist"},
		{"café.example", true, "allowlist xn--caf-dma.example"}, // a punycode pattern matches the Unicode name
		{"cafe.example", false, "not in the allowlist"},
		{"a.münchen.example", true, "allowlist *.xn--mnchen-3ya.example"},
		{"a.xn--mnchen-3ya.example", true, "allowlist *.xn--mnchen-3ya.example"},
		{"a.MÜNCHEN.example", true, "allowlist *.xn--mnchen-3ya.example"},
		{"x.ads.münchen.example", false, "denylist *.ads.xn--mnchen-3ya.example"},
		{"x.ads.xn--mnchen-3ya.example", false, "denylist *.ads.xn--mnchen-3ya.example"},
		{"a.munchen.example", false, "not in the allowlist"},
		// names that are not names
		{"", false, "not a valid name"},
		{".", false, "not a valid name"},
		{"..", false, "not a valid name"},
		{"a..wiki.example", false, "not a valid name"},
		{".a.wiki.example", false, "not a valid name"},
		{"-a.wiki.example", false, "not a valid name"},
		{"a-.wiki.example", false, "not a valid name"},
		{"a b.wiki.example", false, "not a valid name"},
		{"a*.wiki.example", false, "not a valid name"},
		{"*.wiki.example", false, "not a valid name"},
		{"a.wiki.example:443", false, "not a valid name"},
		{"a/b.wiki.example", false, "not a valid name"},
		{strings.Repeat("a", 64) + ".wiki.example", false, "not a valid name"},
		{strings.Repeat("a.", 130) + "wiki.example", false, "not a valid name"},
		{"192.0.2.1", false, "not a valid name"},
		{"[2001:db8::1]", false, "not a valid name"},
		{"2001:db8::1", false, "not a valid name"},
		{"xn--zz.wiki.example", false, "not a valid name"}, // invalid punycode
		{"a\x00.wiki.example", false, "not a valid name"},
	} {
		got := p.Check(tc.name)
		if got.Allow != tc.allow || got.Reason != tc.reason {
			t.Errorf("Check(%q) = %+v, want allow=%v %q", tc.name, got, tc.allow, tc.reason)
		}
	}
}

// With no allowlist every valid name passes but the denied ones.
func TestDenyOnly(t *testing.T) {
	p, err := NewPolicy(nil, []string{"*.tracker.example", "ads.example"})
	if err != nil {
		t.Fatal(err)
	}
	for name, allow := range map[string]bool{"news.example": true, "ads.example": false, "ADS.example.": false, "a.tracker.example": false,
		"tracker.example": true, "sub.ads.example": true} {
		if got := p.Check(name); got.Allow != allow {
			t.Errorf("Check(%q) = %+v, want %v", name, got, allow)
		}
	}
	var none *Policy
	if !none.Check("anything.example").Allow {
		t.Error("a nil policy refused")
	}
	empty, _ := NewPolicy(nil, nil)
	if !empty.Check("anything.example").Allow {
		t.Error("an empty policy refused")
	}
}

func TestParsePatternRefuses(t *testing.T) {
	for _, s := range []string{
		"", "*", "*.", "*.com", "*.COM", "*.co.uk", "*.uk", "*.org.", "*.xn--p1ai", // TLDs and public suffixes
		"**.example.org", "*example.org", "a*.example.org", "a.*.example.org", "example.*", "*.*.example.org",
		"http://example.org", "example.org/path", "example.org:443", "user@example.org", " example.org", "example.org ",
		"exa mple.org", "192.0.2.1", "[::1]", "::1", "-a.example.org", "a..example.org", "xn--zz.example",
		strings.Repeat("a", 64) + ".example", "example.org?x", "example.org#x",
	} {
		if _, err := ParsePattern(s); err == nil || !errors.Is(err, ErrPattern) {
			t.Errorf("ParsePattern(%q) = %v, want a refusal", s, err)
		}
	}
	for s, want := range map[string]string{"*.example.org": "*.example.org", "*.a.co.uk": "*.a.co.uk", "Example.ORG.": "example.org",
		"*.Bücher.example": "*.xn--bcher-kva.example", "com": "com"} {
		p, err := ParsePattern(s)
		if err != nil || p.String() != want {
			t.Errorf("ParsePattern(%q) = %v %v, want %s", s, p, err, want)
		}
	}
	_, err := NewList([]string{"ok.example", "*.com", "bad name"})
	if err == nil || !strings.Contains(err.Error(), "[1]") || !strings.Contains(err.Error(), "[2]") || strings.Contains(err.Error(), "[0]") {
		t.Errorf("NewList: %v", err)
	}
}

// FuzzMatch: whatever the name, the matcher never panics, a match is
// consistent with normalisation (a name and its normal form get the same
// verdict), and a denied name is never allowed.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"docs.example.org", "A.WIKI.EXAMPLE.", "bücher.example", "xn--bcher-kva.example", "x.private.wiki.example",
		"", ".", "a..b", "192.0.2.1", "*.wiki.example", "xn--zz.example", "ß.example", "\u200d.example", "a.wiki.example\x00"} {
		f.Add(s)
	}
	p, err := NewPolicy(testAllow, testDeny)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		v := p.Check(name)
		n, err := Normalize(name)
		if err != nil {
			if v.Allow {
				t.Fatalf("%q does not normalise (%v) but was allowed", name, err)
			}
			return
		}
		if again, err := Normalize(n); err != nil || again != n {
			t.Fatalf("Normalize(%q) = %q, again %q %v", name, n, again, err)
		}
		if w := p.Check(n); w != v {
			t.Fatalf("Check(%q) = %+v but Check(%q) = %+v", name, v, n, w)
		}
		if _, denied := p.Deny.Match(name); denied && v.Allow {
			t.Fatalf("%q is denied but allowed", name)
		}
	})
}
