package importrules

import (
	"path/filepath"
	"testing"
)

// repoRoot is the repository's root folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestImportRules fails on any import the module boundaries forbid.
func TestImportRules(t *testing.T) {
	root := repoRoot(t)
	for _, r := range Rules {
		t.Run(r.Name, func(t *testing.T) {
			vs, err := Check(root, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				t.Error(v)
			}
		})
	}
}

// TestVesselReadsDeploymentInOnePlace: no vessel package but
// vessel/internal/fromspec imports the deployer (the listed exceptions
// aside, which may only shrink), and only cmd/vessel imports fromspec.
func TestVesselReadsDeploymentInOnePlace(t *testing.T) {
	root := repoRoot(t)
	for _, r := range ImportRules {
		t.Run(r.Name, func(t *testing.T) {
			vs, stale, err := CheckImports(root, r)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				t.Error(v)
			}
			for _, s := range stale {
				t.Error(s)
			}
		})
	}
}

// TestImportRuleCatchesPlanted runs the vessel's rule on a fixture module
// claiming the vessel's path, where vessel/tools imports deployer/spec (a
// local stand-in) beside the allowed vessel/internal/fromspec: the rule
// reports tools alone, and an exception for a package that does not need
// it as no longer needed.
func TestImportRuleCatchesPlanted(t *testing.T) {
	r := ImportRules[0]
	r.Dir = "planted/vessel"
	r.Exceptions = map[string][]string{repo + "vessel/loop": {repo + "deployer/spec"}}
	vs, stale, err := CheckImports("testdata", r)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Pkg != repo+"vessel/tools imports "+repo+"deployer/spec" {
		t.Fatalf("want the one planted violation, got %v", vs)
	}
	if len(stale) != len(r.Exceptions) {
		t.Errorf("stale exceptions %v, want one per exception", stale)
	}
	t.Logf("caught: %v", vs[0])
}

// TestImportRulesCatchPlanted runs the egress and sandboxd rules on a
// fixture module that claims the egress's path and imports deployer/spec
// (a local stand-in) and the vessel's server: each rule must report it.
func TestImportRulesCatchPlanted(t *testing.T) {
	for _, name := range []string{"egress links no deployer code and no go-toml", "egress links no vessel server code"} {
		var rule Rule
		for _, r := range Rules {
			if r.Name == name {
				rule = r
			}
		}
		if rule.Forbidden == nil {
			t.Fatalf("no rule %q", name)
		}
		rule.Dir = "planted/egress"
		vs, err := Check("testdata", rule)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1 {
			t.Fatalf("%s: want the one planted violation, got %v", name, vs)
		}
		t.Logf("caught: %v", vs[0])
	}
}

func TestForbidden(t *testing.T) {
	for p, want := range map[string]bool{
		repo + "vessel":                true,
		repo + "vessel/loop":           true,
		repo + "vessel/client":         false,
		repo + "vessel/client/cardsig": false,
		repo + "vesselx":               false,
	} {
		if got := vesselServer(p); got != want {
			t.Errorf("vesselServer(%s) = %v, want %v", p, got, want)
		}
	}
	for p, want := range map[string]bool{
		repo + "deployer/spec":                     true,
		"github.com/pelletier/go-toml/v2":          true,
		"github.com/pelletier/go-toml/v2/unstable": true,
		repo + "runtime/routes":                    false,
		repo + "deployerx":                         false,
	} {
		if got := deployerOrTOML(p); got != want {
			t.Errorf("deployerOrTOML(%s) = %v, want %v", p, got, want)
		}
	}
}
