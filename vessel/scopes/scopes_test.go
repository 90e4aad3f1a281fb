package scopes

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
)

func TestOrder(t *testing.T) {
	want := []string{"tools:read", "tools:search", "tools:files", "tools:system", "tools:write", "tools:execute"}
	if !slices.Equal(All(), want) {
		t.Fatalf("order = %v, want %v", All(), want)
	}
	for i, s := range want {
		if Rank(s) != i || !Valid(s) {
			t.Errorf("Rank(%s) = %d, want %d", s, Rank(s), i)
		}
	}
	if Rank("tools:admin") != -1 || Valid("tools:admin") {
		t.Error("unknown scope ranked")
	}
}

func TestStrongest(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, "tools:read"},
		{[]string{"tools:admin"}, "tools:read"},
		{[]string{"tools:read", "tools:files"}, "tools:files"},
		{[]string{"tools:write", "tools:system", "tools:search"}, "tools:write"},
		{[]string{"tools:execute", "tools:read"}, "tools:execute"},
	}
	for _, c := range cases {
		if got := Strongest(c.in); got != c.want {
			t.Errorf("Strongest(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseHeader(t *testing.T) {
	a, err := ParseHeader(nil, false)
	if err != nil || a.Limited() {
		t.Fatalf("absent header: %v %v", a, err)
	}
	a, err = ParseHeader([]string{"tools:read, tools:files", "tools:search"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Scopes(); !slices.Equal(got, []string{"tools:read", "tools:search", "tools:files"}) {
		t.Fatalf("scopes = %v", got)
	}
	a, err = ParseHeader([]string{""}, true)
	if err != nil || !a.Limited() || len(a.Scopes()) != 0 {
		t.Fatalf("empty header must allow nothing: %v %v", a.Scopes(), err)
	}
	if _, err := ParseHeader([]string{"tools:read tools:admin"}, true); !errors.Is(err, ErrUnknownScope) {
		t.Fatalf("unknown scope: err = %v", err)
	}
	if _, err := ParseHeader([]string{"tools:Read"}, true); !errors.Is(err, ErrUnknownScope) {
		t.Fatalf("case must be exact: err = %v", err)
	}
}

func TestFromToken(t *testing.T) {
	a := FromToken([]string{"openid profile tools:read tools:admin", "tools:search"})
	if got := a.Scopes(); !slices.Equal(got, []string{"tools:read", "tools:search"}) {
		t.Fatalf("scopes = %v", got)
	}
	if !a.Permits("anything", "") || a.Permits("bash", "tools:execute") {
		t.Fatal("permits wrong")
	}
	none := FromToken([]string{"openid email"})
	if none.Permits("present", "tools:read") {
		t.Fatal("token with no tools:* scope must allow no tools")
	}
	named := FromToken([]string{"tools:read tools:execute tool:species"})
	if !named.Permits("species", "tools:read") || named.Permits("other", "tools:read") {
		t.Fatal("tool:<name> entries must limit by name")
	}
}

type tool struct{ name, scope string }

func TestNarrowKeepsOrder(t *testing.T) {
	offered := []tool{{"read", "tools:files"}, {"bash", "tools:execute"}, {"present", ""}, {"websearch", "tools:search"}}
	got := Narrow(offered, func(t tool) string { return t.name }, func(t tool) string { return t.scope }, Only("tools:read", "tools:files"))
	want := []tool{{"read", "tools:files"}, {"present", ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	all := Narrow(offered, func(t tool) string { return t.name }, func(t tool) string { return t.scope }, Unrestricted())
	if !slices.Equal(all, offered) {
		t.Fatal("unrestricted must keep every tool")
	}
}

// TestNarrowNeverWidens checks, over random tool sets and random
// restrictions combined in random ways, that narrowing only removes tools:
// the result is a sub-sequence of the offer, every kept tool is permitted by
// every restriction applied, and intersecting more restrictions never lets
// a tool back in.
func TestNarrowNeverWidens(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"read", "glob", "bash", "present", "species", "lookup", "webfetch"}
	scopeChoices := append(append([]string{}, toolset.Scopes...), "", "tools:admin")
	randAllowed := func() Allowed {
		switch r.IntN(4) {
		case 0:
			return Unrestricted()
		case 1:
			var l []string
			for _, s := range scopeChoices {
				if r.IntN(2) == 0 {
					l = append(l, s)
				}
			}
			return Only(l...)
		case 2:
			var l []string
			for _, s := range scopeChoices {
				if r.IntN(2) == 0 {
					l = append(l, s)
				}
			}
			if r.IntN(2) == 0 {
				l = append(l, "tool:"+names[r.IntN(len(names))])
			}
			return FromToken(l)
		default:
			var l []string
			for _, s := range toolset.Scopes {
				if r.IntN(2) == 0 {
					l = append(l, s)
				}
			}
			a, err := ParseHeader(l, true)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	nameOf := func(t tool) string { return t.name }
	scopeOf := func(t tool) string { return t.scope }
	for i := 0; i < 5000; i++ {
		var offered []tool
		for _, n := range names {
			if r.IntN(3) > 0 {
				offered = append(offered, tool{n, scopeChoices[r.IntN(len(scopeChoices))]})
			}
		}
		a, b := randAllowed(), randAllowed()
		ab := a.Intersect(b)
		na := Narrow(offered, nameOf, scopeOf, a)
		nab := Narrow(offered, nameOf, scopeOf, ab)
		if !isSubsequence(na, offered) || !isSubsequence(nab, na) {
			t.Fatalf("widened: offered %v, a %v, ab %v", offered, na, nab)
		}
		for _, x := range nab {
			if !a.Permits(x.name, x.scope) || !b.Permits(x.name, x.scope) {
				t.Fatalf("intersection kept %v that a or b refuses", x)
			}
		}
		// Narrowing twice is the same as once: no restriction adds back.
		if !slices.Equal(Narrow(na, nameOf, scopeOf, a), na) {
			t.Fatal("narrowing is not idempotent")
		}
	}
}

func isSubsequence(sub, full []tool) bool {
	j := 0
	for _, x := range full {
		if j < len(sub) && sub[j] == x {
			j++
		}
	}
	return j == len(sub)
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"", "tools:read", "tools:read,tools:execute", " , ,", "tools:x", "tools:read\ttools:files"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		a, err := ParseHeader([]string{v}, true)
		if err != nil {
			return
		}
		for _, s := range a.Scopes() {
			if !Valid(s) {
				t.Fatalf("invalid scope %q allowed", s)
			}
		}
	})
}

func TestForCall(t *testing.T) {
	h := http.Header{}
	a, err := ForCall(h, false, nil)
	if err != nil || a.Limited() {
		t.Fatalf("app, no header: %v %v", a, err)
	}
	h.Set(Header, "tools:read tools:execute")
	a, _ = ForCall(h, true, []string{"openid tools:read tools:files"})
	if got := a.Scopes(); !slices.Equal(got, []string{"tools:read"}) {
		t.Fatalf("token ∩ header = %v", got)
	}
	a, _ = ForCall(http.Header{}, true, nil)
	if !a.Limited() || len(a.Scopes()) != 0 {
		t.Fatal("a token with no scopes must allow no tools")
	}
	h.Set(Header, "tools:root")
	if _, err := ForCall(h, false, nil); !errors.Is(err, ErrUnknownScope) {
		t.Fatalf("bad header: %v", err)
	}
}
