package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// The fuzz targets check the loaders never panic and that every failure is
// reported as located *Error values.

func FuzzLoadDeployment(f *testing.F) {
	f.Add([]byte(fixture["deploy/deployment.toml"]))
	f.Add([]byte("[vessel]\nport = 0\n[[agents]]\nid = \"x\"\n"))
	f.Add([]byte("[[agents]]\n[[agents.sandbox.mounts]]\nsource = 1\n"))
	f.Add([]byte("a = [{b = [{c = 1}]}]\n"))
	dir := f.TempDir()
	writeTree(f, dir, fixture, nil)
	file := filepath.Join(dir, "deploy", "fuzz.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		d, err := LoadDeployment(file, envOf(fixtureEnv))
		if err == nil {
			for _, a := range d.Agents {
				if _, err := Fingerprint(d, a.ID); err != nil {
					t.Fatalf("fingerprint of a valid deployment: %v", err)
				}
			}
			return
		}
		if _, ok := err.(Errors); !ok {
			t.Fatalf("error of type %T: %v", err, err)
		}
	})
}

func FuzzLoadPackage(f *testing.F) {
	f.Add([]byte(alphaManifest))
	f.Add([]byte(fixture["agents/beta/vessel.toml"]))
	f.Add([]byte("[model]\nmax_steps = -1\n[tools]\nenabled = [1]\n"))
	dir := f.TempDir()
	writeTree(f, dir, map[string]string{"prompt.md": "hi", "extra.md": "x"}, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "vessel.toml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPackage(dir, envOf(nil)); err != nil {
			if _, ok := err.(Errors); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
		}
	})
}

func FuzzLoadTool(f *testing.F) {
	f.Add([]byte(fixture["agents/alpha/tools/species.toml"]))
	f.Add([]byte(fixture["agents/alpha/tools/lookup.toml"]))
	f.Add([]byte("name = \"x\"\ncommand = []\nservice = \"\"\n[parameters]\ntype = 3\n"))
	f.Add([]byte("name = \"notes\"\n[mcp]\ncommand = [\"{package}/bin/n\"]\nenv = { A = \"env:B\" }\ntools = [\"*\", \"x\"]\nscopes = { y = \"tools:root\" }\ntimeout_seconds = 0\n"))
	f.Add([]byte("name = \"x\"\ndescription = \"d\"\ncommand = [\"x\"]\nscope = \"tools:read\"\n[parameters]\ntype = \"object\"\nn = nan\nd = 1979-05-27\n"))
	dir := f.TempDir()
	writeTree(f, dir, map[string]string{"vessel.toml": fixture["agents/beta/vessel.toml"], "prompt.md": "hi", "tools/t.toml": ""}, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, "tools", "t.toml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadPackage(dir, envOf(nil))
		if err != nil {
			if _, ok := err.(Errors); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(m.Declared) != 1 {
			t.Fatalf("valid tool file gave %d tools", len(m.Declared))
		}
		d := &Deployment{Path: filepath.Join(dir, "deployment.toml"), Agents: []Agent{{ID: "a", Manifest: m}}}
		if _, err := Fingerprint(d, "a"); err != nil {
			t.Fatalf("fingerprint of a valid package: %v", err)
		}
	})
}

func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"512MB", "1GiB", "64k", "1.5g", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseByteSize(s); err == nil && v < 0 {
			t.Fatalf("ParseByteSize(%q) = %d", s, v)
		}
	})
}
