package compose

// Security properties of the generated Compose file, checked on its
// structure rather than against the golden files (which -update rewrites):
// each secret is mounted only into the containers that need it, the model
// key reaches the egress alone, every host folder is mounted read-only, and
// each container sits only on its own networks.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/runtime/cardkeys"
)

// twoAgents writes a deployment with two agents, each with a data mount, and
// loads it; two sandboxes let the test see that neither gets the other's
// token or data.
func twoAgents(t *testing.T, extra string, env map[string]string) (*spec.Deployment, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"deploy/deployment.toml": "[egress]\nupstream_url = \"https://m.example.org/v1\"\n" +
			"[[apps]]\nid = \"web\"\nkey_sha256 = \"" + strings.Repeat("ab", 32) + "\"\nagents = [\"alpha\", \"beta\"]\n" +
			"[[agents]]\nid = \"alpha\"\npackage = \"../agents/alpha\"\n" +
			"[agents.sandbox]\nmounts = [{ source = \"../data/alpha\", target = \"/data/alpha\" }]\n" +
			"[[agents]]\nid = \"beta\"\npackage = \"../agents/beta\"\n" +
			"[agents.sandbox]\nmounts = [{ source = \"../data/beta\", target = \"/data/beta\" }]\n" + extra,
		"agents/alpha/vessel.toml": "name = \"Alpha\"\ndescription = \"A.\"\n[model]\nname = \"m\"\n",
		"agents/alpha/prompt.md":   "hi",
		"agents/beta/vessel.toml":  "name = \"Beta\"\ndescription = \"B.\"\n[model]\nname = \"m\"\n",
		"agents/beta/prompt.md":    "hi",
		"data/alpha/a.csv":         "x\n",
		"data/beta/b.csv":          "y\n",
	}
	for n, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	look := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	d, err := spec.LoadDeployment(filepath.Join(dir, "deploy", "deployment.toml"), look)
	if err != nil {
		t.Fatal(err)
	}
	return d, dir
}

func composeOf(t *testing.T, d *spec.Deployment, src string) *composeFile {
	t.Helper()
	g, err := newGen(d, Options{OutDir: filepath.Dir(d.Path), SourceDir: src})
	if err != nil {
		t.Fatal(err)
	}
	f, err := g.file()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// mounts splits a service's short-syntax volumes into source, target, mode.
func mounts(s *service) [][3]string {
	var out [][3]string
	for _, v := range s.Volumes {
		p := strings.Split(v, ":")
		m := [3]string{p[0], "", ""}
		if len(p) > 1 {
			m[1] = p[1]
		}
		if len(p) > 2 {
			m[2] = p[2]
		}
		out = append(out, m)
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestSecretsMountedOnlyWhereTheyBelong(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	want := map[string][]string{
		"sandbox-master.token": {"vessel"},
		"egress.token":         {"egress"},
		"vessel-egress.token":  {"vessel"},
		// The operator's copy (operator.token) is mounted nowhere.
		VesselOperatorTokenFile: {"vessel"},
		"search.secret":         {"search"},
		SearchProxyFile:         {"search"},
		WebClientsFile:          {"egress"},
		CardKeyFile:             {"vessel"},
		"sandbox-alpha.token":   {"sandbox-alpha"},
		"sandbox-beta.token":    {"sandbox-beta"},
	}
	got := map[string][]string{}
	for _, name := range keys(f.Services) {
		for _, m := range mounts(f.Services[name]) {
			if strings.Contains(m[0], GeneratedDir) {
				secret := filepath.Base(m[0])
				got[secret] = append(got[secret], name)
				if m[2] != "ro" || !strings.HasPrefix(m[1], secretsDir+"/") {
					t.Errorf("%s mounts %s as %s:%s, want read-only under %s", name, secret, m[1], m[2], secretsDir)
				}
			}
		}
	}
	for secret, holders := range want {
		if !slices.Equal(got[secret], holders) {
			t.Errorf("%s is mounted into %v, want only %v", secret, got[secret], holders)
		}
	}
	for secret := range got {
		if _, ok := want[secret]; !ok {
			t.Errorf("unexpected secret %s mounted into %v", secret, got[secret])
		}
	}
}

func TestSandboxHoldsNoSecretOrReference(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	for _, a := range []string{"alpha", "beta"} {
		s := f.Services["sandbox-"+a]
		want := []string{"VESSEL_FINGERPRINT", "VESSEL_SANDBOX_AUDIT_LOG", "VESSEL_SANDBOX_METRICS_LISTEN", "VESSEL_SANDBOX_TOKEN_FILE", "VESSEL_SANDBOX_TOOLS"}
		if got := keys(s.Environment); !slices.Equal(got, want) {
			t.Errorf("sandbox-%s environment %v: a sandbox gets its fingerprint, token file, audit log, metrics address and tools only", a, got)
		}
		for k, v := range s.Environment {
			if strings.Contains(v, "${") {
				t.Errorf("sandbox-%s: %s interpolates %q from the operator's .env", a, k, v)
			}
		}
	}
}

func TestModelKeyOnlyInEgress(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	for _, name := range keys(f.Services) {
		for k, v := range f.Services[name].Environment {
			holds := strings.Contains(v, "${VESSEL_MODEL_KEY}") || strings.Contains(v, "${VESSEL_UPSTREAM_MODEL_KEY}")
			if holds && (name != "egress" || k != "VESSEL_UPSTREAM_MODEL_KEY") {
				t.Errorf("%s gets the model key in %s=%s", name, k, v)
			}
		}
	}
	if f.Services["egress"].Environment["VESSEL_UPSTREAM_MODEL_KEY"] != "${VESSEL_MODEL_KEY}" {
		t.Errorf("egress does not get the model key: %v", f.Services["egress"].Environment)
	}
	// The vessel's VESSEL_MODEL_KEY is the egress token, read from its file.
	if v := f.Services["vessel"].Environment["VESSEL_MODEL_KEY_FILE"]; v != secretsDir+"/vessel-egress.token" {
		t.Errorf("vessel VESSEL_MODEL_KEY_FILE = %q, want the egress token", v)
	}
}

// TestModelKeyReferenceRefused: deployment.toml may name environment
// variables (env:NAME), and the vessel is given every one it names. Naming
// the model key there would hand the real key to the vessel, so deploy
// refuses it.
func TestModelKeyReferenceRefused(t *testing.T) {
	for _, name := range []string{"VESSEL_MODEL_KEY", "VESSEL_UPSTREAM_MODEL_KEY"} {
		t.Run(name, func(t *testing.T) {
			extra := "[agents.services.records]\nurl = \"http://app:8000\"\nheaders = { \"X-Key\" = \"env:" + name + "\" }\n"
			d, src := twoAgents(t, extra, map[string]string{name: "sk-real-model-key"})
			out, err := Generate(d, Options{OutDir: filepath.Dir(d.Path), SourceDir: src})
			if err == nil {
				if strings.Contains(string(out), "${"+name+"}") {
					t.Fatalf("the vessel is handed ${%s}:\n%s", name, out)
				}
				t.Fatalf("deployment naming env:%s accepted", name)
			}
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name %s: %v", name, err)
			}
		})
	}
}

func TestHostFoldersReadOnly(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	for _, name := range keys(f.Services) {
		for _, m := range mounts(f.Services[name]) {
			named := f.Volumes[m[0]] != nil
			if named {
				if name != "vessel" || m[1] != "/data" {
					t.Errorf("%s mounts the named volume %s at %s; only the vessel's /data is writable", name, m[0], m[1])
				}
				continue
			}
			// A service writes its records into its own folder (usage,
			// audit), and nothing else of the host.
			if m[0] == "./"+RecordsDir+"/"+name && m[1] == recordsMount && m[2] == "" {
				continue
			}
			// The host's uid reservations are written by each sandboxd
			// (root's, mode 0700: no call can read them).
			lock := strings.HasPrefix(name, "sandbox-") && m[0] == UIDLockDir && m[1] == UIDLockDir
			if m[2] != "ro" && !lock {
				t.Errorf("%s mounts host path %s at %s writable", name, m[0], m[1])
			}
		}
	}
	// Each sandbox sees its own data and package, not the other agent's.
	for _, pair := range [][2]string{{"alpha", "beta"}, {"beta", "alpha"}} {
		var srcs []string
		for _, m := range mounts(f.Services["sandbox-"+pair[0]]) {
			srcs = append(srcs, m[0])
		}
		joined := strings.Join(srcs, " ")
		if !strings.Contains(joined, "data/"+pair[0]) || strings.Contains(joined, pair[1]) {
			t.Errorf("sandbox-%s mounts %v", pair[0], srcs)
		}
	}
}

func TestNetworksKeepContainersApart(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	want := map[string][]string{
		"vessel":        {"egress", "front", "metrics", "tools-alpha", "tools-beta"},
		"egress":        {"egress", "metrics", "outside"},
		"search":        {"egress"},
		"sandbox-alpha": {"metrics", "tools-alpha"},
		"sandbox-beta":  {"metrics", "tools-beta"},
	}
	if got := keys(f.Services); !slices.Equal(got, keys(want)) {
		t.Fatalf("services %v, want %v", got, keys(want))
	}
	for name, nets := range want {
		if got := keys(f.Services[name].Networks); !slices.Equal(got, nets) {
			t.Errorf("%s is on %v, want %v", name, got, nets)
		}
	}
	// The vessel's API listens on its front address only, so a sandbox on a
	// tools network cannot reach it there.
	v := f.Services["vessel"]
	front := d.Vessel.FrontAddress
	if i := slices.Index(v.Command, "--listen"); i < 0 || i+1 >= len(v.Command) || !strings.HasPrefix(v.Command[i+1], front+":") {
		t.Errorf("vessel command %v does not listen on its front address %s", v.Command, front)
	}
	if a := v.Networks["front"]; a == nil || a.IPv4Address != front {
		t.Errorf("vessel front attachment %+v, want the fixed address %s", a, front)
	}
	for name, n := range f.Networks {
		if n.Internal != (name != "outside") {
			t.Errorf("network %s internal=%v; only outside may route off the host", name, n.Internal)
		}
	}
}

func TestEveryContainerLockedDown(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	for _, name := range keys(f.Services) {
		s := f.Services[name]
		if !s.ReadOnly || !slices.Equal(s.CapDrop, []string{"ALL"}) || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: read_only=%v cap_drop=%v security_opt=%v", name, s.ReadOnly, s.CapDrop, s.SecurityOpt)
		}
		for _, m := range mounts(s) {
			if strings.Contains(m[0], "docker.sock") {
				t.Errorf("%s mounts the Docker socket", name)
			}
		}
		if !strings.HasPrefix(name, "sandbox-") {
			if u := strings.Split(s.User, ":")[0]; u == "" || u == "0" || u == "root" {
				t.Errorf("%s runs as %q", name, s.User)
			}
			if len(s.CapAdd) != 0 {
				t.Errorf("%s adds capabilities %v; only a sandbox may", name, s.CapAdd)
			}
			continue
		}
		// A sandbox: root with exactly the capabilities that switch calls
		// to their turn's uid, everything else as tight as the others.
		if s.User != "0:0" {
			t.Errorf("%s runs as %q, want 0:0 (sandboxd switches each turn to its own uid)", name, s.User)
		}
		if !slices.Equal(s.CapAdd, []string{"CHOWN", "DAC_OVERRIDE", "KILL", "SETGID", "SETUID"}) {
			t.Errorf("%s cap_add %v, want exactly CHOWN DAC_OVERRIDE KILL SETGID SETUID", name, s.CapAdd)
		}
		var seccomp bool
		for _, o := range s.SecurityOpt {
			seccomp = seccomp || strings.HasPrefix(o, "seccomp=/")
		}
		var scratch string
		for _, tm := range s.Tmpfs {
			if strings.HasPrefix(tm, "/scratch:") {
				scratch = tm
			}
		}
		opts := strings.Split(strings.TrimPrefix(scratch, "/scratch:"), ",")
		if !seccomp || !strings.Contains(scratch, "size=") || !slices.Contains(opts, "uid=0") ||
			!slices.Contains(opts, "gid=0") || !slices.Contains(opts, "mode=0711") {
			t.Errorf("%s: seccomp profile %v (%v); /scratch %q, want size-limited, owned by 0:0, mode 0711", name, seccomp, s.SecurityOpt, scratch)
		}
		if s.MemLimit <= 0 || s.PIDsLimit <= 0 {
			t.Errorf("%s: mem_limit %d pids_limit %d", name, s.MemLimit, s.PIDsLimit)
		}
	}
}

func TestGeneratedSecretsPrivate(t *testing.T) {
	d, _ := twoAgents(t, "", nil)
	out := t.TempDir()
	_, handedOver, err := WriteSecrets(out, d)
	if err != nil {
		t.Fatal(err)
	}
	if handedOver != (os.Geteuid() == 0) {
		t.Errorf("WriteSecrets handed the files over = %v as uid %d", handedOver, os.Geteuid())
	}
	st, err := os.Stat(filepath.Join(out, GeneratedDir))
	if err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("%s: %v mode %v; only its owner may read it", GeneratedDir, err, st.Mode())
	}
	entries, err := os.ReadDir(filepath.Join(out, GeneratedDir))
	if err != nil || len(entries) == 0 {
		t.Fatalf("no secrets written: %v", err)
	}
	owners := SecretOwners(d)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v mode %v", e.Name(), err, info.Mode())
			continue
		}
		want, ok := owners[e.Name()]
		if e.Name() == OperatorTokenFile {
			// The operator's copy stays the deployer's (or the sudo user's).
			want, ok = os.Geteuid(), !ok
			if u, err := strconv.Atoi(os.Getenv("SUDO_UID")); err == nil && handedOver && u > 0 {
				want = u
			}
			if st := info.Sys().(*syscall.Stat_t); int(st.Uid) != want {
				t.Errorf("%s owned by %d, want the operator %d", e.Name(), st.Uid, want)
			}
			if !ok {
				t.Errorf("%s is in SecretOwners: no service reads it", e.Name())
			}
			continue
		}
		if !ok {
			t.Errorf("%s has no owner in SecretOwners", e.Name())
		}
		// As root each file belongs to the one service that reads it.
		if st := info.Sys().(*syscall.Stat_t); handedOver && (int(st.Uid) != want || int(st.Gid) != want) {
			t.Errorf("%s owned by %d:%d, want %d:%d", e.Name(), st.Uid, st.Gid, want, want)
		}
	}
	if len(entries) != len(owners)+1 {
		t.Errorf("%d secret files, SecretOwners names %d and the operator's token", len(entries), len(owners))
	}
}

// TestGoServicesKeepUnderTheirMemoryLimit: the Go services (vessel, egress)
// get a GOMEMLIMIT below their container's memory limit, so the collector
// tightens before the kernel's OOM killer would end the process.
func TestGoServicesKeepUnderTheirMemoryLimit(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	for _, name := range []string{"vessel", "egress"} {
		s := f.Services[name]
		if s == nil {
			t.Fatalf("no %s service", name)
		}
		v, ok := strings.CutSuffix(s.Environment["GOMEMLIMIT"], "MiB")
		mib, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("%s: GOMEMLIMIT %q, want <n>MiB", name, s.Environment["GOMEMLIMIT"])
		}
		if lim := mib << 20; s.MemLimit <= 0 || lim >= s.MemLimit || lim < s.MemLimit*3/4 {
			t.Errorf("%s: GOMEMLIMIT %d bytes for mem_limit %d: want between 75%% and 100%%", name, lim, s.MemLimit)
		}
	}
}

// TestChownCommandsForNonRootDeploy: a deploy without root cannot hand the
// secrets over, so it prints one chown per secret file, to the uid of the
// one service that reads it.
func TestChownCommandsForNonRootDeploy(t *testing.T) {
	d, _ := twoAgents(t, "", nil)
	cmds := ChownCommands("/srv/dep", d)
	want := []string{
		"sudo chown 61001:61001 /srv/dep/.generated/card-signing.jwks",
		"sudo chown 61002:61002 /srv/dep/.generated/egress-clients.json",
		"sudo chown 61002:61002 /srv/dep/.generated/egress.token",
		"sudo chown 0:0 /srv/dep/.generated/sandbox-alpha.token",
		"sudo chown 0:0 /srv/dep/.generated/sandbox-beta.token",
		"sudo chown 61001:61001 /srv/dep/.generated/sandbox-master.token",
		"sudo chown 61003:61003 /srv/dep/.generated/search-proxy.url",
		"sudo chown 61003:61003 /srv/dep/.generated/search.secret",
		"sudo chown 61001:61001 /srv/dep/.generated/vessel-egress.token",
		"sudo chown 61001:61001 /srv/dep/.generated/vessel-operator.token",
		"sudo chown 61002:61020 /srv/dep/records/egress",
		"sudo chown 0:61020 /srv/dep/records/sandbox-alpha",
		"sudo chown 0:61020 /srv/dep/records/sandbox-beta",
		"sudo chown 61001:61020 /srv/dep/records/vessel",
	}
	if !slices.Equal(cmds, want) {
		t.Errorf("ChownCommands:\n%s\nwant:\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
}

// TestCardKeyGeneratedKeptAndChecked: deploy generates the card-signing
// key set once, keeps it (a rotated set too) on later deploys, and refuses
// a file that is no key set instead of replacing it.
func TestCardKeyGeneratedKeptAndChecked(t *testing.T) {
	d, _ := twoAgents(t, "", nil)
	out := t.TempDir()
	if _, _, err := WriteSecrets(out, d); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(out, GeneratedDir, CardKeyFile)
	first, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cardkeys.ParseKeys(first); err != nil {
		t.Fatalf("generated key set: %v", err)
	}
	if _, _, err := WriteSecrets(out, d); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(p); string(again) != string(first) {
		t.Fatal("the card key changed on re-deploy")
	}
	if err := os.WriteFile(p, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteSecrets(out, d); err == nil || !strings.Contains(err.Error(), CardKeyFile) {
		t.Fatalf("a broken key set: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "not a key" {
		t.Fatal("a broken key set was replaced")
	}
}

// metricsEnv are the variables that open a service's metrics listener.
var metricsEnv = []string{"VESSEL_METRICS_LISTEN", "VESSEL_EGRESS_METRICS_LISTEN", "VESSEL_SANDBOX_METRICS_LISTEN"}

// metricsProblems lists every metrics listener in f that a tools network,
// the front network or any network other than an internal one named
// metrics could reach: a listener must bind the fixed address its service
// holds on the internal metrics network (a wildcard or any other address
// is reachable from the service's other networks).
func metricsProblems(f *composeFile) []string {
	var out []string
	for _, name := range keys(f.Services) {
		s := f.Services[name]
		var addrs []string
		for i, a := range s.Command {
			if a == "--metrics-listen" && i+1 < len(s.Command) {
				addrs = append(addrs, s.Command[i+1])
			} else if v, ok := strings.CutPrefix(a, "--metrics-listen="); ok {
				addrs = append(addrs, v)
			}
		}
		for _, k := range metricsEnv {
			if v := s.Environment[k]; v != "" {
				addrs = append(addrs, v)
			}
		}
		for _, addr := range addrs {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: metrics address %q: %v", name, addr, err))
				continue
			}
			m, n := s.Networks["metrics"], f.Networks["metrics"]
			switch {
			case m == nil || n == nil || !n.Internal:
				out = append(out, fmt.Sprintf("%s serves metrics on %s without an internal metrics network", name, addr))
			case host == "" || host != m.IPv4Address:
				out = append(out, fmt.Sprintf("%s serves metrics on %s, not only on its metrics address %q (its networks: %v)", name, addr, m.IPv4Address, keys(s.Networks)))
			}
		}
	}
	return out
}

// TestNoMetricsPortOnToolsOrFrontNetworks: the generated file opens every
// metrics listener on its service's fixed address on the internal metrics
// network (the operator API's way in from the host), none a tools network
// or the front network reaches, and the check itself catches a listener on
// a wildcard, on the front address or without the network.
func TestNoMetricsPortOnToolsOrFrontNetworks(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	if p := metricsProblems(f); len(p) > 0 {
		t.Fatalf("generated file: %v", p)
	}
	if n := f.Networks["metrics"]; n == nil || !n.Internal {
		t.Fatalf("metrics network %+v: want an internal one", n)
	}
	for _, name := range []string{"vessel", "egress", "sandbox-alpha", "sandbox-beta"} {
		if f.Services[name].Networks["metrics"] == nil {
			t.Errorf("%s has no metrics listener", name)
		}
	}

	bad := map[string]func(f *composeFile){
		"vessel on a wildcard": func(f *composeFile) {
			f.Services["vessel"].Command = append(f.Services["vessel"].Command, "--metrics-listen", "0.0.0.0:9700")
		},
		"vessel on its front address": func(f *composeFile) {
			f.Services["vessel"].Environment["VESSEL_METRICS_LISTEN"] = d.Vessel.FrontAddress + ":9700"
		},
		"sandbox on a wildcard beside a metrics network": func(f *composeFile) {
			s := f.Services["sandbox-alpha"]
			s.Networks["metrics"] = &netAttach{IPv4Address: "172.31.9.10"}
			s.Environment["VESSEL_SANDBOX_METRICS_LISTEN"] = ":9702"
		},
		"egress on a routed metrics network": func(f *composeFile) {
			f.Networks["metrics"].Internal = false
			s := f.Services["egress"]
			s.Networks["metrics"] = &netAttach{IPv4Address: "172.31.9.11"}
			s.Command = append(s.Command, "--metrics-listen=172.31.9.11:9701")
		},
	}
	for name, mutate := range bad {
		g := composeOf(t, d, src)
		mutate(g)
		if p := metricsProblems(g); len(p) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	// A deployment's subnet is derived from its project; two projects get
	// two subnets.
	if f.Networks["metrics"].IPAM.Config[0].Subnet != MetricsSubnet(d.Vessel.Project) ||
		MetricsSubnet("one") == MetricsSubnet("two") {
		t.Errorf("metrics subnet %v, MetricsSubnet one %s two %s", f.Networks["metrics"].IPAM, MetricsSubnet("one"), MetricsSubnet("two"))
	}
}

// TestOperatorTokenGenerated: deploy generates the operator API's token,
// kept across deploys, in two 0600 copies: operator.token for the
// operator's commands (`astralvessel turns`, `cancel`) and the vessel's,
// mounted read-only into the vessel alone and named by
// VESSEL_OPERATOR_TOKEN_FILE.
func TestOperatorTokenGenerated(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	out := t.TempDir()
	s1, _, err := WriteSecrets(out, d)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, GeneratedDir)
	for _, name := range []string{OperatorTokenFile, VesselOperatorTokenFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || strings.TrimSpace(string(b)) != s1.OperatorToken || len(s1.OperatorToken) < 32 {
			t.Fatalf("%s: %q %v, want the operator token (%d characters)", name, b, err, len(s1.OperatorToken))
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v %v", name, st.Mode(), err)
		}
	}
	s2, _, err := WriteSecrets(out, d)
	if err != nil || s2.OperatorToken != s1.OperatorToken {
		t.Fatalf("a second deploy changed the operator token: %v", err)
	}
	if s1.OperatorToken == s1.EgressToken || s1.OperatorToken == s1.SandboxMaster {
		t.Fatal("the operator token repeats another secret")
	}
	v := composeOf(t, d, src).Services["vessel"]
	path := v.Environment["VESSEL_OPERATOR_TOKEN_FILE"]
	if path != secretsDir+"/"+VesselOperatorTokenFile {
		t.Fatalf("vessel VESSEL_OPERATOR_TOKEN_FILE %q", path)
	}
	if !slices.ContainsFunc(mounts(v), func(m [3]string) bool {
		return m[0] == "./"+GeneratedDir+"/"+VesselOperatorTokenFile && m[1] == path && m[2] == "ro"
	}) {
		t.Fatalf("the vessel does not mount its operator token at %s: %v", path, v.Volumes)
	}
}

// TestRouteKeysOnlyInEgress: each [models] route's key variable reaches
// the egress alone (by name, as ${NAME} from the operator's .env); no
// other service's environment, command or labels mention it, and the
// routes the egress gets carry variable names, never a value.
func TestRouteKeysOnlyInEgress(t *testing.T) {
	extra := "[models.azure]\nurl = \"https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21\"\n" +
		"key = \"env:AZURE_OPENAI_KEY\"\nauth = \"api-key\"\n[models.v1]\nurl = \"https://r.openai.azure.com/openai/v1\"\nkey = \"env:AZURE_V1_KEY\"\n"
	d, src := twoAgents(t, extra, map[string]string{"AZURE_OPENAI_KEY": "az-real-1", "AZURE_V1_KEY": "az-real-2"})
	f := composeOf(t, d, src)
	out, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "az-real-") {
		t.Fatal("a route key's value is in the Compose file")
	}
	for _, name := range keys(f.Services) {
		s := f.Services[name]
		b, _ := yaml.Marshal(s)
		for _, v := range []string{"AZURE_OPENAI_KEY", "AZURE_V1_KEY"} {
			if name == "egress" {
				if s.Environment[v] != "${"+v+"}" {
					t.Errorf("egress lacks %s: %v", v, s.Environment)
				}
				continue
			}
			if strings.Contains(string(b), v) {
				t.Errorf("service %s mentions %s:\n%s", name, v, b)
			}
		}
	}
	routes, err := spec.ParseRoutes(strings.ReplaceAll(f.Services["egress"].Environment["VESSEL_EGRESS_ROUTES"], "$$", "$"))
	if err != nil || routes["azure"].KeyEnv != "AZURE_OPENAI_KEY" || routes["azure"].Auth != "api-key" {
		t.Errorf("egress routes %v, %v", routes, err)
	}
	// Naming a route's key variable elsewhere in the file would hand it
	// to the vessel: refused.
	d, src = twoAgents(t, extra+"[agents.services.records]\nurl = \"http://app:8000\"\nheaders = { \"X-Key\" = \"env:AZURE_V1_KEY\" }\n",
		map[string]string{"AZURE_OPENAI_KEY": "az-real-1", "AZURE_V1_KEY": "az-real-2"})
	if _, err := Generate(d, Options{OutDir: filepath.Dir(d.Path), SourceDir: src}); err == nil || !strings.Contains(err.Error(), "key of model route v1") {
		t.Fatalf("route key named for the vessel: %v", err)
	}
}
