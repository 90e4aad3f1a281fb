package compose

// Identity properties of the generated Compose file, checked on its
// structure: every service runs as its own documented uid (as its image
// does), every sandbox's calls get a block of uids no one else holds, and
// each sandbox carries the fingerprint the vessel expects of it.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// uidOf reads the uid of a Compose user: "uid:gid" with gid equal to uid.
func uidOf(t *testing.T, svc, user string) uint32 {
	t.Helper()
	u, g, ok := strings.Cut(user, ":")
	n, err := strconv.ParseUint(u, 10, 32)
	if !ok || err != nil || g != u {
		t.Fatalf("%s: user %q, want UID:GID with GID = UID", svc, user)
	}
	return uint32(n)
}

// uidRangeArg is the --uid-range a sandbox is started with.
func uidRangeArg(t *testing.T, svc string, cmd []string) spec.UIDRange {
	t.Helper()
	i := slices.Index(cmd, "--uid-range")
	if i < 0 || i+1 >= len(cmd) {
		t.Fatalf("%s: no --uid-range in %v", svc, cmd)
	}
	first, count, ok := strings.Cut(cmd[i+1], ":")
	f, err1 := strconv.ParseUint(first, 10, 32)
	c, err2 := strconv.ParseUint(count, 10, 32)
	if !ok || err1 != nil || err2 != nil || c == 0 {
		t.Fatalf("%s: --uid-range %q, want FIRST:COUNT", svc, cmd[i+1])
	}
	return spec.UIDRange{First: uint32(f), Count: uint32(c)}
}

// TestServiceAndCallIdentities: no two services share a uid, every
// sandbox's calls get their own block (disjoint from every other agent's),
// and no block holds a service's uid, since the kernel counts process
// limits per uid across all containers.
func TestServiceAndCallIdentities(t *testing.T) {
	extra := "[[agents]]\nid = \"gamma\"\npackage = \"../agents/alpha\"\n"
	d, src := twoAgents(t, extra, nil)
	f := composeOf(t, d, src)
	serviceUIDs := map[uint32]string{}
	ranges := map[string]spec.UIDRange{}
	for _, name := range keys(f.Services) {
		s := f.Services[name]
		if strings.HasPrefix(name, "sandbox-") {
			ranges[name] = uidRangeArg(t, name, s.Command)
			continue
		}
		uid := uidOf(t, name, s.User)
		if uid == 0 {
			t.Errorf("%s runs as root", name)
		}
		if other, dup := serviceUIDs[uid]; dup {
			t.Errorf("%s and %s both run as uid %d", name, other, uid)
		}
		serviceUIDs[uid] = name
		if want := ServiceUIDs[name]; want == 0 || uint32(want) != uid {
			t.Errorf("%s runs as %d, the documented uid is %d", name, uid, want)
		}
	}
	if len(serviceUIDs) != 3 || len(ranges) != 3 {
		t.Fatalf("services %v, sandboxes %v", serviceUIDs, ranges)
	}
	// The identities outside the generated file count too: the e2e's test
	// stand-ins (deploy/e2e.sh), the probe containers, and the users images
	// used to run as.
	others := map[string]uint32{"nobody": 65534, "old shared uid": 65532}
	for n, u := range ServiceUIDs {
		others[n] = uint32(u)
	}
	for n, u := range e2eStandins(t).uids {
		others["e2e stand-in "+n] = u
	}
	for i, a := range d.Agents {
		name := "sandbox-" + a.ID
		r := ranges[name]
		if want := a.Sandbox.UIDs; r != want || want.Count == 0 {
			t.Errorf("%s: --uid-range %v, want the deployment's range %v (agent %d)", name, r, want, i)
		}
		if r.Count != spec.CallUIDsPerAgent || r.Contains(0) {
			t.Errorf("%s: range %v", name, r)
		}
		for n, u := range others {
			if r.Contains(u) {
				t.Errorf("%s's call range %v holds %s's uid %d", name, r, n, u)
			}
		}
		for other, o := range ranges {
			if other != name && r.Overlaps(o) {
				t.Errorf("%s %v and %s %v share uids", name, r, other, o)
			}
		}
	}
	seen := map[int]string{}
	for n, u := range ServiceUIDs {
		if prev, dup := seen[u]; dup {
			t.Errorf("ServiceUIDs gives %s and %s the same uid %d", n, prev, u)
		}
		seen[u] = n
	}
}

// TestImagesRunAsTheirServiceUID: each service image's Dockerfile ends on
// the uid the Compose file runs it as, so files the image gives its user
// (the vessel's /data) are readable and writable by the running service.
func TestImagesRunAsTheirServiceUID(t *testing.T) {
	repo := filepath.Join("..", "..")
	for file, uid := range map[string]int{
		"vessel/Dockerfile":                VesselUID,
		"egress/Dockerfile":                EgressUID,
		"deploy/images/searxng/Dockerfile": SearchUID,
		"vessel/Dockerfile.scripted-model": ScriptedModelUID,
	} {
		b, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(file)))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var last string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.EqualFold(f[0], "USER") {
				last = f[1]
			}
		}
		if want := fmt.Sprintf("%d:%d", uid, uid); last != want {
			t.Errorf("%s: last USER %q, want %s", file, last, want)
		}
	}
	st := e2eStandins(t)
	if got := st.uids["model"]; got != ScriptedModelUID {
		t.Errorf("deploy/e2e.sh runs the scripted model as uid %d, want ScriptedModelUID %d", got, ScriptedModelUID)
	}
}

// TestFingerprintsTieSandboxesToTheVessel: each sandbox is started with the
// fingerprint the vessel is labelled with and will compute itself, and an
// edit to an agent's tools changes it, so the vessel refuses a sandbox that
// was not redeployed and `up -d` recreates the vessel.
func TestFingerprintsTieSandboxesToTheVessel(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	f := composeOf(t, d, src)
	before := map[string]string{}
	for _, a := range []string{"alpha", "beta"} {
		want, err := spec.Fingerprint(d, a)
		if err != nil {
			t.Fatal(err)
		}
		before[a] = want
		sb := f.Services["sandbox-"+a]
		i := slices.Index(sb.Command, "--fingerprint")
		if i < 0 || i+1 >= len(sb.Command) || sb.Command[i+1] != want {
			t.Errorf("sandbox-%s command %v, want --fingerprint %s", a, sb.Command, want)
		}
		if sb.Environment["VESSEL_FINGERPRINT"] != want {
			t.Errorf("sandbox-%s VESSEL_FINGERPRINT %q, want %s", a, sb.Environment["VESSEL_FINGERPRINT"], want)
		}
		if got := f.Services["vessel"].Labels["astralvessel.fingerprint."+a]; got != want {
			t.Errorf("vessel label for %s %q, want %s", a, got, want)
		}
	}
	tool := filepath.Join(filepath.Dir(filepath.Dir(d.Path)), "agents", "alpha", "tools", "extra.toml")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("name = \"extra\"\ndescription = \"New.\"\ncommand = [\"true\"]\nscope = \"tools:read\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d2, err := spec.LoadDeployment(d.Path, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	f2 := composeOf(t, d2, src)
	if got := f2.Services["vessel"].Labels["astralvessel.fingerprint.alpha"]; got == before["alpha"] {
		t.Error("a new tool file left alpha's fingerprint unchanged")
	}
	if got := f2.Services["vessel"].Labels["astralvessel.fingerprint.beta"]; got != before["beta"] {
		t.Error("alpha's new tool changed beta's fingerprint")
	}
}
