package localstack

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
)

const depEnvRef = `
[egress]
upstream_url = "env:VESSEL_UPSTREAM_MODEL_URL"

[[apps]]
id = "app"
key_sha256 = "env:MY_APP_SHA"
agents = ["a"]

[[agents]]
id = "a"
package = "pkg"
`

func TestLocalAppEnvRef(t *testing.T) {
	dir := t.TempDir()
	dep := filepath.Join(dir, "deployment.toml")
	if err := os.WriteFile(dep, []byte(depEnvRef), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	file := dep
	id, err := localApp(dep, strings.Repeat("ab", 32), vars, t.TempDir(), &file)
	if err != nil {
		t.Fatal(err)
	}
	if id != "app" || file != dep || vars["MY_APP_SHA"] != strings.Repeat("ab", 32) {
		t.Errorf("id %q file %q vars %v", id, file, vars)
	}
}

func TestLocalAppDerivedFile(t *testing.T) {
	dir := t.TempDir()
	writePackage(t, filepath.Join(dir, "pkg"))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"literal": strings.Replace(depEnvRef, `"env:MY_APP_SHA"`, `"`+strings.Repeat("0", 64)+`"`, 1),
		"no apps": strings.Replace(depEnvRef, "[[apps]]\nid = \"app\"\nkey_sha256 = \"env:MY_APP_SHA\"\nagents = [\"a\"]\n", "", 1),
	} {
		t.Run(name, func(t *testing.T) {
			body += "[agents.sandbox]\nmounts = [{ source = \"data\", target = \"/data/x\" }]\n"
			dep := filepath.Join(dir, name+".toml")
			if err := os.WriteFile(dep, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			state := t.TempDir()
			digest := strings.Repeat("cd", 32)
			file := dep
			id, err := localApp(dep, digest, map[string]string{}, state, &file)
			if err != nil {
				t.Fatal(err)
			}
			if file == dep || filepath.Dir(file) != state {
				t.Fatalf("no derived file: %s", file)
			}
			env := func(n string) (string, bool) {
				if n == "VESSEL_UPSTREAM_MODEL_URL" {
					return "https://m.test/v1", true
				}
				return "", false
			}
			d, err := spec.LoadDeployment(file, env)
			if err != nil {
				t.Fatalf("derived deployment does not load: %v", err)
			}
			if d.Apps[0].ID != id || d.Apps[0].KeySHA256 != digest {
				t.Errorf("apps %+v, id %q", d.Apps, id)
			}
			if d.Agents[0].PackageDir != filepath.Join(dir, "pkg") {
				t.Errorf("package %s", d.Agents[0].PackageDir)
			}
			if got := d.ResolvePath(d.Agents[0].Sandbox.Mounts[0].Source); got != filepath.Join(dir, "data") {
				t.Errorf("mount source %s", got)
			}
		})
	}
}

func writePackage(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"vessel.toml": "name = \"A\"\ndescription = \"An agent.\"\nversion = \"1.0.0\"\n[model]\nname = \"m\"\n",
		"prompt.md":   "Be brief.\n",
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHealthReady(t *testing.T) {
	if err := healthReady([]byte(`{"ok":true,"agents":{"a":true,"b":true}}`), []string{"a", "b"}); err != nil {
		t.Error(err)
	}
	if err := healthReady([]byte(`{"ok":false,"agents":{"a":true,"b":false}}`), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "b") {
		t.Errorf("not ready: %v", err)
	}
	if err := healthReady([]byte(`nope`), nil); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestProcessEnv(t *testing.T) {
	env := processEnv([]string{"A=1", "SECRET=x", "B=2"}, map[string]string{"B": "3"}, "SECRET")
	got := strings.Join(env, ",")
	if got != "A=1,B=3" {
		t.Errorf("env %s", got)
	}
}

func TestSecretIsStable(t *testing.T) {
	dir := t.TempDir()
	a, err := secret(dir, "k", "p_")
	if err != nil {
		t.Fatal(err)
	}
	b, err := secret(dir, "k", "p_")
	if err != nil || a != b || !strings.HasPrefix(a, "p_") || len(a) != 2+64 {
		t.Errorf("%q %q %v", a, b, err)
	}
	st, _ := os.Stat(filepath.Join(dir, "k"))
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestFindRepoRootAndLocate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.work"), []byte("go 1.26\nuse (\n\t./vessel\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := FindRepoRoot(sub); got != dir {
		t.Errorf("root %q, want %q", got, dir)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "vessel"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Locate(bin, []string{"vessel"})
	if err != nil || got["vessel"] != filepath.Join(bin, "vessel") {
		t.Errorf("%v %v", got, err)
	}
	if _, err := Locate(bin, []string{"no-such-binary-here"}); err == nil {
		t.Error("missing binary found")
	}
}

func TestReadInfoMissing(t *testing.T) {
	if _, err := ReadInfo(t.TempDir()); err == nil || !strings.Contains(err.Error(), "astralvessel up") {
		t.Errorf("err %v", err)
	}
}

// TestVesselAdvertisesListenAddress (issue 14, defect 2): the vessel is told
// to advertise the stack's own address in its cards.
func TestVesselAdvertisesListenAddress(t *testing.T) {
	args := vesselArgs("/d.toml", "127.0.0.1:18700", "127.0.0.1:18701", []string{"--sandbox-url", "a=http://127.0.0.1:1"})
	want := "--deployment /d.toml --listen 127.0.0.1:18700 --grpc-listen 127.0.0.1:18701 --public-url http://127.0.0.1:18700 --sandbox-url a=http://127.0.0.1:1"
	if got := strings.Join(args, " "); got != want {
		t.Fatalf("vessel args:\n%s\nwant\n%s", got, want)
	}
}

// DefaultGRPCListen: the gRPC binding sits beside the vessel's address.
func TestDefaultGRPCListen(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1:18700": "127.0.0.1:18701", "127.0.0.1:8700": "127.0.0.1:8701", "[::1]:9000": "[::1]:9001"} {
		if got, err := DefaultGRPCListen(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:65535", "127.0.0.1:x"} {
		if _, err := DefaultGRPCListen(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// withDefaults puts the gRPC binding beside Listen, leaves it to a free
// port when Listen's is 0, and keeps one that is given.
func TestGRPCListenDefault(t *testing.T) {
	for _, c := range []struct{ listen, grpc, want string }{
		{"", "", "127.0.0.1:8701"},
		{"127.0.0.1:18700", "", "127.0.0.1:18701"},
		{"127.0.0.1:0", "", ""},
		{"127.0.0.1:18700", "127.0.0.1:9999", "127.0.0.1:9999"},
	} {
		got, err := Config{Listen: c.listen, GRPCListen: c.grpc}.withDefaults()
		if err != nil || got.GRPCListen != c.want {
			t.Errorf("listen %q grpc %q: %q %v, want %q", c.listen, c.grpc, got.GRPCListen, err, c.want)
		}
	}
}

// TestSandboxGetsItsTools: the local stack hands sandboxd the package's
// tools as --tools (sandboxd reads no TOML), the same set deploy writes.
func TestSandboxGetsItsTools(t *testing.T) {
	dir := t.TempDir()
	writePackage(t, filepath.Join(dir, "pkg"))
	if err := os.WriteFile(filepath.Join(dir, "pkg", "vessel.toml"),
		[]byte("name = \"A\"\ndescription = \"An agent.\"\n[model]\nname = \"m\"\n[tools]\nenabled = [\"read\", \"bash\"]\n[output]\nfiles = [\"png\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dep := filepath.Join(dir, "deployment.toml")
	if err := os.WriteFile(dep, []byte(depEnvRef), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(n string) (string, bool) {
		switch n {
		case "VESSEL_UPSTREAM_MODEL_URL":
			return "https://m.test/v1", true
		case "MY_APP_SHA":
			return strings.Repeat("ab", 32), true
		}
		return "", false
	}
	d, err := spec.LoadDeployment(dep, env)
	if err != nil {
		t.Fatal(err)
	}
	args, err := sandboxArgs(d, 0, d.Agents[0], filepath.Join(dir, "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(args, "--tools")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("no --tools in %v", args)
	}
	got, err := toolset.Parse(args[i+1])
	if err != nil {
		t.Fatal(err)
	}
	if want := d.Agents[0].Manifest.Toolset(); !reflect.DeepEqual(got, want) || !slices.Equal(got.Tools.Enabled, []string{"read", "bash"}) ||
		!slices.Equal(got.Output.Files, []string{"png"}) {
		t.Fatalf("--tools %+v, want %+v", got, want)
	}
}
