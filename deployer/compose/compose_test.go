package compose

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

var testEnv = map[string]string{
	"UPSTREAM_URL":   "https://models.example.org/v1",
	"APP_KEY_SHA256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"TASK_STORE":     "postgres://vessel:pw@db/vessel",
	"RECORDS_TOKEN":  "records-token-value",
}

func lookup(name string) (string, bool) { v, ok := testEnv[name]; return v, ok }

func load(t *testing.T, name string) *spec.Deployment {
	t.Helper()
	d, err := spec.LoadDeployment(filepath.Join("testdata", name, "deploy", "deployment.toml"), lookup)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return d
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"basic", "custom"} {
		t.Run(name, func(t *testing.T) {
			d := load(t, name)
			out, err := Generate(d, Options{
				OutDir:         filepath.Join("testdata", name, "deploy"),
				SourceDir:      filepath.Join("testdata", name),
				SeccompProfile: "/opt/astralvessel/deploy/seccomp/sandbox.json",
			})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("output differs from %s (run go test -update and review the diff):\n%s", golden, out)
			}
			// The egress's clients file: one client per agent with its
			// [agents.web] table, the vessel's, the search container's.
			clients, err := spec.WebClients(d)
			if err != nil {
				t.Fatal(err)
			}
			cgolden := filepath.Join("testdata", name+".clients.golden")
			if *update {
				if err := os.WriteFile(cgolden, clients, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want, err := os.ReadFile(cgolden); err != nil || !bytes.Equal(clients, want) {
				t.Errorf("clients file differs from %s (%v; run go test -update and review the diff):\n%s", cgolden, err, clients)
			}
			for _, secret := range []string{"records-token-value", "pw@db"} {
				if bytes.Contains(out, []byte(secret)) || bytes.Contains(clients, []byte(secret)) {
					t.Errorf("the Compose file or the clients file holds the secret %q", secret)
				}
			}
		})
	}
}

func TestHardening(t *testing.T) {
	d := load(t, "custom")
	g, err := newGen(d, Options{OutDir: t.TempDir(), SourceDir: "testdata"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := g.file()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Services["search"]; ok {
		t.Error("duckduckgo deployment has a search container")
	}
	for name, s := range f.Services {
		if !s.ReadOnly || strings.Join(s.CapDrop, ",") != "ALL" || s.Restart != "unless-stopped" ||
			s.MemLimit <= 0 || s.PIDsLimit <= 0 || s.SecurityOpt[0] != "no-new-privileges:true" {
			t.Errorf("%s is not hardened: %+v", name, s)
		}
	}
	sb := f.Services["sandbox-records"]
	if len(sb.Networks) != 2 || sb.Networks["tools-records"] == nil || sb.Networks["metrics"] == nil {
		t.Errorf("sandbox networks: %v", sb.Networks)
	}
	if sb.Build == nil || sb.Image != "second-sandbox-records:local" {
		t.Errorf("custom sandbox image: %+v %v", sb.Build, sb.Image)
	}
	if !strings.HasPrefix(sb.SecurityOpt[1], "seccomp=/") {
		t.Errorf("seccomp profile not absolute: %v", sb.SecurityOpt)
	}
	eg := f.Services["egress"]
	if eg.Environment["VESSEL_UPSTREAM_MODEL_URL"] != "http://models.internal:8080/v$$1" {
		t.Errorf("literal upstream not escaped: %q", eg.Environment["VESSEL_UPSTREAM_MODEL_URL"])
	}
	for name, s := range f.Services {
		for k, v := range s.Environment {
			if name != "egress" && strings.Contains(v, "VESSEL_MODEL_KEY}") {
				t.Errorf("%s gets the model key in %s", name, k)
			}
		}
	}
	if !f.Networks["front"].Internal || !f.Networks["egress"].Internal || f.Networks["outside"].Internal {
		t.Errorf("network internal flags wrong: %+v", f.Networks)
	}
	for _, v := range f.Services["vessel"].Volumes {
		if strings.HasPrefix(v, g.relOut(filepath.Dir(d.Path))+":") {
			t.Errorf("the vessel mounts the deployment folder (with .env and .generated/): %s", v)
		}
	}
	if len(eg.Networks) != 3 || eg.Networks["outside"] == nil || eg.Networks["metrics"] == nil {
		t.Errorf("egress networks: %v", eg.Networks)
	}
}

func TestSecretsStable(t *testing.T) {
	d := load(t, "basic")
	dir := t.TempDir()
	s1, _, err := WriteSecrets(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, GeneratedDir, "sandbox-gone.token"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, _, err := WriteSecrets(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	if s1.SandboxMaster != s2.SandboxMaster || s1.EgressToken != s2.EgressToken || s1.SearchSecret != s2.SearchSecret ||
		s1.Sandbox["guide"] != s2.Sandbox["guide"] {
		t.Error("secrets changed on re-deploy")
	}
	if s2.Sandbox["guide"] != spec.DeriveToken(s2.SandboxMaster, "sandbox/guide") {
		t.Error("sandbox token is not derived from the master")
	}
	if _, err := os.Stat(filepath.Join(dir, GeneratedDir, "sandbox-gone.token")); !errors.Is(err, os.ErrNotExist) {
		t.Error("stale sandbox token kept")
	}
	if b, err := os.ReadFile(filepath.Join(dir, GeneratedDir, "vessel-egress.token")); err != nil || string(b) != s2.EgressToken {
		t.Errorf("the vessel's copy of the egress token: %q, %v", b, err)
	}
	for _, n := range []string{"sandbox-master.token", "sandbox-guide.token", "egress.token", "vessel-egress.token", "search.secret"} {
		st, err := os.Stat(filepath.Join(dir, GeneratedDir, n))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v mode %v", n, err, st)
		}
	}
}

// TestComposeAccepts runs the generated files through docker-compose (and
// `docker compose` when present). Under CI=true a reachable Docker engine
// means it must run.
func TestComposeAccepts(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		if testenv.CI() {
			t.Logf("no Docker engine answers (%v); skipping even under CI", err)
		}
		t.Skip("no Docker engine answers")
	}
	var tools [][]string
	if _, err := exec.LookPath("docker-compose"); err == nil {
		tools = append(tools, []string{"docker-compose"})
	}
	if exec.Command("docker", "compose", "version").Run() == nil {
		tools = append(tools, []string{"docker", "compose"})
	}
	testenv.Require(t, len(tools) > 0, "Docker answers but neither docker-compose nor docker compose is installed")
	for _, name := range []string{"basic", "custom"} {
		d := load(t, name)
		dir := t.TempDir()
		seccomp := filepath.Join(dir, "sandbox.json")
		if err := os.WriteFile(seccomp, []byte(`{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := WriteSecrets(dir, d); err != nil {
			t.Fatal(err)
		}
		out, err := Generate(d, Options{OutDir: dir, SourceDir: "testdata", SeccompProfile: seccomp})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, FileName)
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			args := append(tool[1:], "-p", d.Vessel.Project, "-f", file, "config", "-q")
			cmd := exec.Command(tool[0], args...)
			cmd.Env = append(os.Environ(), "UPSTREAM_URL=https://m.example.org", "APP_KEY_SHA256=x", "VESSEL_MODEL_KEY=k",
				"TASK_STORE=postgres://db/v", "RECORDS_TOKEN=t")
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s rejects %s: %v\n%s", strings.Join(tool, " "), name, err, b)
			}
		}
	}
}

func TestRefusesSecretsInVessel(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"deployment.toml": "[egress]\nupstream_url = \"https://m.example.org\"\n[[agents]]\nid = \"a\"\npackage = \".\"\n",
		"vessel.toml":     "name = \"A\"\ndescription = \"A.\"\n[model]\nname = \"m\"\n",
		"prompt.md":       "hi",
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := spec.LoadDeployment(filepath.Join(dir, "deployment.toml"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(d, Options{OutDir: dir, SourceDir: dir})
	if err == nil || !strings.Contains(err.Error(), "would expose") {
		t.Fatalf("agent folder holding the secrets: err = %v", err)
	}
}

// TestStopGracePeriodFollowsShutdownGrace: docker waits as long as the
// vessel may take to drain (shutdown_grace_seconds plus its margin).
func TestStopGracePeriodFollowsShutdownGrace(t *testing.T) {
	d := load(t, "custom")
	for grace, want := range map[int]string{0: "20s", 20: "40s", 300: "320s"} {
		d.Vessel.ShutdownGraceSecs = grace
		g, err := newGen(d, Options{OutDir: t.TempDir(), SourceDir: "testdata"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := g.file()
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Services["vessel"].StopGracePeriod; got != want {
			t.Errorf("grace %d: stop_grace_period %q, want %q", grace, got, want)
		}
		if got := f.Services["egress"].StopGracePeriod; got != "" {
			t.Errorf("egress stop_grace_period %q", got)
		}
	}
}

// TestEveryServiceHasAHealthcheck: every service of the generated file,
// for both test deployments, has a healthcheck that runs its own image's
// binary with the health subcommand (the images have no shell or curl),
// and the vessel's asks its own front address and port.
func TestEveryServiceHasAHealthcheck(t *testing.T) {
	binaries := map[string]string{"vessel": "/usr/local/bin/vessel", "egress": "/usr/local/bin/egress", "search": "/usr/local/bin/searxng-stub"}
	for _, name := range []string{"basic", "custom"} {
		d := load(t, name)
		g, err := newGen(d, Options{OutDir: t.TempDir(), SourceDir: "testdata"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := g.file()
		if err != nil {
			t.Fatal(err)
		}
		for svc, s := range f.Services {
			h := s.Healthcheck
			if h == nil {
				t.Errorf("%s: service %s has no healthcheck", name, svc)
				continue
			}
			want := binaries[svc]
			if strings.HasPrefix(svc, "sandbox-") {
				want = "/usr/local/bin/sandboxd"
			}
			if len(h.Test) < 3 || h.Test[0] != "CMD" || h.Test[1] != want || h.Test[2] != "health" {
				t.Errorf("%s: %s healthcheck %v, want CMD %s health", name, svc, h.Test, want)
			}
			if h.Interval == "" || h.Timeout == "" || h.Retries < 1 || h.StartPeriod == "" {
				t.Errorf("%s: %s healthcheck timing %+v", name, svc, h)
			}
		}
		v := f.Services["vessel"].Healthcheck.Test
		if want := "http://" + d.Vessel.FrontAddress + ":" + strconv.Itoa(d.Vessel.Port) + "/health"; len(v) != 4 || v[3] != want {
			t.Errorf("%s: vessel healthcheck %v, want %s", name, v, want)
		}
	}
}

// A changed web policy changes the egress service (its clients file's
// digest), so `up -d` recreates the egress and it reads the new file.
func TestEgressLabelFollowsWebPolicy(t *testing.T) {
	d := load(t, "basic")
	label := func() string {
		s, err := newGenEgress(d)
		if err != nil {
			t.Fatal(err)
		}
		return s.Labels["astralvessel.web-clients-hash"]
	}
	before := label()
	d.Agents[0].Web.Deny = append(d.Agents[0].Web.Deny, "more.field-guide.example")
	if after := label(); before == "" || after == before {
		t.Fatalf("label %q then %q", before, after)
	}
	d.Search.Engines = nil
	if _, err := newGenEgress(d); err == nil || !strings.Contains(err.Error(), "engines is empty") {
		t.Fatalf("no engines: %v", err)
	}
}

func newGenEgress(d *spec.Deployment) (*service, error) {
	g, err := newGen(d, Options{OutDir: filepath.Join("testdata", "basic", "deploy"), SourceDir: filepath.Join("testdata", "basic")})
	if err != nil {
		return nil, err
	}
	return g.egress()
}

// TestBudgetsReachTheEgress: [budgets] goes to the egress, and only to it,
// as VESSEL_EGRESS_BUDGETS, which the egress's parser reads back whole; no
// [budgets] sets nothing.
func TestBudgetsReachTheEgress(t *testing.T) {
	d := load(t, "custom")
	for _, b := range []spec.Budgets{{}, {TurnTokens: 500, OwnerDailyTokens: 9000, Agents: map[string]int64{"x": 7}}} {
		d.Budgets = b
		g, err := newGen(d, Options{OutDir: t.TempDir(), SourceDir: "testdata"})
		if err != nil {
			t.Fatal(err)
		}
		f, err := g.file()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := f.Services["egress"].Environment["VESSEL_EGRESS_BUDGETS"]
		if ok != b.Any() {
			t.Fatalf("budgets %+v: VESSEL_EGRESS_BUDGETS set %v", b, ok)
		}
		if _, leak := f.Services["vessel"].Environment["VESSEL_EGRESS_BUDGETS"]; leak {
			t.Error("the vessel was given the budgets")
		}
		if !ok {
			continue
		}
		back, err := spec.ParseBudgets(got)
		if err != nil || back.Encode() != b.Encode() {
			t.Errorf("VESSEL_EGRESS_BUDGETS %q read back as %+v, %v", got, back, err)
		}
	}
}
