package fromspec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// testdata is a deployment that sets something in every table the vessel
// reads: limits, apps with push grants, an issuer, agents with a route,
// approval, a service, a remote MCP server, a mount, and a package with
// request settings, a declared tool, a stdio MCP server and prompt_append.

func load(t *testing.T) (string, *spec.Deployment, *settings.Deployment) {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "deploy", "deployment.toml")
	env := func(string) (string, bool) { return "", false }
	d, err := spec.LoadDeployment(path, env)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	return path, d, s
}

// TestTranslateCopiesEveryField: every settings field with a namesake in
// deployer/spec holds the same value after translation, so a field added
// to settings and forgotten here fails.
func TestTranslateCopiesEveryField(t *testing.T) {
	_, d, s := load(t)
	n := same(t, "Deployment", reflect.ValueOf(*d), reflect.ValueOf(*s))
	t.Logf("%d values compared", n)
	if n < 80 {
		t.Errorf("only %d fields compared; the fixture should set most of them", n)
	}
}

// same compares v (settings) with its spec namesake w field by field and
// returns how many leaf values it compared.
func same(t *testing.T, path string, w, v reflect.Value) int {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if f := w.FieldByName(name); f.IsValid() {
				n += same(t, path+"."+name, f, v.Field(i))
			}
		}
		return n
	case reflect.Pointer:
		if v.IsNil() != w.IsNil() {
			t.Errorf("%s: nil %v, spec nil %v", path, v.IsNil(), w.IsNil())
			return 0
		}
		if v.IsNil() {
			return 1
		}
		return same(t, path, w.Elem(), v.Elem())
	case reflect.Slice:
		if v.Len() != w.Len() {
			t.Errorf("%s: %d items, spec %d", path, v.Len(), w.Len())
			return 0
		}
		if v.Type().Elem().Kind() != reflect.Struct {
			return leaf(t, path, w, v)
		}
		n := 0
		for i := range v.Len() {
			n += same(t, path+"["+w.Index(i).FieldByName("ID").String()+"]", w.Index(i), v.Index(i))
		}
		return n
	case reflect.Map:
		if v.Len() != w.Len() {
			t.Errorf("%s: %d entries, spec %d", path, v.Len(), w.Len())
			return 0
		}
		if v.Type().Elem().Kind() != reflect.Struct {
			return leaf(t, path, w, v)
		}
		n := 0
		for _, k := range v.MapKeys() {
			n += same(t, path+"."+k.String(), w.MapIndex(k), v.MapIndex(k))
		}
		return n
	}
	return leaf(t, path, w, v)
}

func leaf(t *testing.T, path string, w, v reflect.Value) int {
	t.Helper()
	if !reflect.DeepEqual(w.Interface(), v.Convert(w.Type()).Interface()) {
		t.Errorf("%s = %v, spec %v", path, v, w)
	}
	return 1
}

// TestTranslateDerived: the values the translation computes per agent are
// the deployer's: route profile and token parameter, fingerprint, prompt
// files (read by settings.ReadPrompt), and the sandbox tier.
func TestTranslateDerived(t *testing.T) {
	_, d, s := load(t)
	for i := range d.Agents {
		sa, a := &s.Agents[i], &d.Agents[i]
		if fp, err := spec.Fingerprint(d, a.ID); err != nil || sa.Fingerprint != fp || sa.FingerprintErr != nil {
			t.Errorf("%s: fingerprint %q %v, want %q %v", a.ID, sa.Fingerprint, sa.FingerprintErr, fp, err)
		}
		if !reflect.DeepEqual(sa.Provider, d.Profile(a)) || sa.TokenParam != d.TokenParam(a) {
			t.Errorf("%s: profile %+v %q, want %+v %q", a.ID, sa.Provider, sa.TokenParam, d.Profile(a), d.TokenParam(a))
		}
		if sa.Sandbox.Tier() != a.Sandbox.Tier() || sa.Route() != a.Route() {
			t.Errorf("%s: tier %s route %s, want %s %s", a.ID, sa.Sandbox.Tier(), sa.Route(), a.Sandbox.Tier(), a.Route())
		}
		if sa.Approval.Timeout() != a.Approval.Timeout() || sa.Approval.TimeoutAction() != a.Approval.TimeoutAction() {
			t.Errorf("%s: approval %d %s", a.ID, sa.Approval.Timeout(), sa.Approval.TimeoutAction())
		}
	}
	alpha := &s.Agents[0]
	if alpha.TokenParam != routes.TokenParamMaxCompletionTokens || alpha.Provider.Detect || !reflect.DeepEqual(alpha.Provider.SendBack, []string{"extra_content"}) {
		t.Errorf("alpha's route: %q %+v", alpha.TokenParam, alpha.Provider)
	}
	if p, err := settings.ReadPrompt(alpha); err != nil || p != "You are alpha.\n\nExtra notes." {
		t.Errorf("prompt %q %v", p, err)
	}
	if g := alpha.Manifest.MCP[0].MCP.Grant(); !g.AllTools() || g.ToolScope("x") != "tools:files" {
		t.Errorf("stdio grant %+v", g)
	}
	if m := alpha.MCP["github"]; !m.Allows("create_issue") || m.Allows("delete") || m.ToolScope("create_issue") != "tools:write" {
		t.Errorf("remote grant %+v", m)
	}
}

// TestReloadSeesEdits: Load reads the files again each time (the vessel's
// Reload), so an edited package changes the agent's fingerprint and a
// broken file is an error.
func TestReloadSeesEdits(t *testing.T) {
	path, _, s := load(t)
	dir := filepath.Dir(filepath.Dir(path))
	if err := os.WriteFile(filepath.Join(dir, "agents/beta/vessel.toml"), []byte("name = \"Beta\"\ndescription = \"Reads more.\"\n[model]\nname = \"m\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(string) (string, bool) { return "", false }
	again, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	if again.Agents[1].Fingerprint == s.Agents[1].Fingerprint || again.Agents[0].Fingerprint != s.Agents[0].Fingerprint {
		t.Error("fingerprints do not follow the edit")
	}
	if err := os.WriteFile(path, []byte("[vessel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, env); err == nil {
		t.Error("a broken deployment loaded")
	}
}
