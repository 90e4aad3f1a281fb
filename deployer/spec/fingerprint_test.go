package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fingerprintOf(t *testing.T, overrides map[string]string, env map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, fixture, overrides)
	if env == nil {
		env = fixtureEnv
	}
	d, err := LoadDeployment(filepath.Join(dir, "deploy", "deployment.toml"), envOf(env))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	fp, err := Fingerprint(d, d.Agents[0].ID)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	return fp
}

func TestFingerprintInputs(t *testing.T) {
	base := fingerprintOf(t, nil, nil)
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("fingerprint form: %q", base)
	}
	// The same inputs in another folder give the same fingerprint.
	if again := fingerprintOf(t, nil, nil); again != base {
		t.Fatalf("not stable across locations: %s vs %s", base, again)
	}
	dep := fixture["deploy/deployment.toml"]
	changes := map[string]map[string]string{
		"agent id":                  {"deploy/deployment.toml": strings.ReplaceAll(strings.ReplaceAll(dep, `"alpha"`, `"alpha2"`), `id = "alpha"`, `id = "alpha2"`)},
		"scratch":                   {"deploy/deployment.toml": strings.Replace(dep, `"64MB"`, `"128MB"`, 1)},
		"memory":                    {"deploy/deployment.toml": strings.Replace(dep, `scratch = "64MB"`, "scratch = \"64MB\"\nmemory = \"1GiB\"", 1)},
		"pids":                      {"deploy/deployment.toml": strings.Replace(dep, `scratch = "64MB"`, "scratch = \"64MB\"\npids = 100", 1)},
		"mount":                     {"deploy/deployment.toml": strings.Replace(dep, `/data/guide`, `/data/birds`, 1)},
		"manifest":                  {"agents/alpha/vessel.toml": strings.Replace(alphaManifest, "max_steps = 8", "max_steps = 9", 1)},
		"model":                     {"agents/alpha/vessel.toml": strings.Replace(alphaManifest, `name = "test-model"`, `name = "other-model"`, 1)},
		"tool":                      {"agents/alpha/tools/species.toml": strings.Replace(fixture["agents/alpha/tools/species.toml"], "List species.", "List all species.", 1)},
		"new tool":                  {"agents/alpha/tools/more.toml": strings.Replace(fixture["agents/alpha/tools/species.toml"], `"species"`, `"more"`, 1)},
		"dockerfile":                {"agents/alpha/sandbox/Dockerfile": fixture["agents/alpha/sandbox/Dockerfile"] + "RUN true\n"},
		"copied file":               {"agents/alpha/sandbox/bin/tool.sh": "#!/bin/sh\necho bye\n"},
		"added file":                {"agents/alpha/sandbox/conf.txt": "setting=2\n"},
		"new file in copied folder": {"agents/alpha/sandbox/bin/other": "x"},
	}
	for name, ov := range changes {
		if fp := fingerprintOf(t, ov, nil); fp == base {
			t.Errorf("%s: fingerprint did not change", name)
		}
	}
	same := map[string]map[string]string{
		"other agent":      {"agents/beta/vessel.toml": strings.Replace(fixture["agents/beta/vessel.toml"], "Reads things.", "Reads more things.", 1)},
		"prompt":           {"agents/alpha/prompt.md": "A new briefing.\n", "agents/alpha/extra.md": "More.\n"},
		"comments":         {"agents/alpha/vessel.toml": "# a comment\n\n" + strings.ReplaceAll(alphaManifest, " = ", "   =   ")},
		"deployment noise": {"deploy/deployment.toml": "# noise\n" + strings.Replace(dep, `project = "test"`, `project = "other"`, 1)},
		"tool script":      {"agents/alpha/tools/species.py": "print('[1]')\n"},
		"uncopied file":    {"agents/alpha/sandbox/notes.txt": "not copied"},
		"service url":      {"deploy/deployment.toml": strings.Replace(dep, "http://app:8000", "http://app:9000", 1)},
	}
	for name, ov := range same {
		if fp := fingerprintOf(t, ov, nil); fp != base {
			t.Errorf("%s: fingerprint changed", name)
		}
	}
	// The model key is not part of it, nor the variable naming it.
	key := strings.Replace(alphaManifest, "max_steps = 8", "max_steps = 8\napi_key = \"env:OTHER_KEY\"", 1)
	if fp := fingerprintOf(t, map[string]string{"agents/alpha/vessel.toml": key}, nil); fp != base {
		t.Errorf("model key reference changed the fingerprint")
	}
}

func TestFingerprintErrors(t *testing.T) {
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fingerprint(d, "nope"); err == nil {
		t.Error("unknown agent: no error")
	}
	df := filepath.Join(filepath.Dir(d.Path), d.Agents[0].Sandbox.Dockerfile)
	if err := os.WriteFile(df, []byte("FROM x\nCOPY missing.txt /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Fingerprint(d, "alpha"); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing COPY source: %v", err)
	}
}

func TestCopySources(t *testing.T) {
	srcs, urls, err := copySources([]byte("FROM a\ncopy --chown=1:1 a.txt \\\n  b/ /dst/\nADD https://example.test/x.tgz /x\nCOPY --from=build /a /b\nCOPY [\"c d\", \"/e\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(srcs, ",") != "a.txt,b,c d" || strings.Join(urls, ",") != "https://example.test/x.tgz" {
		t.Errorf("srcs %q urls %q", srcs, urls)
	}
}
