package compose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteOperator: deploy writes the operator API's URL and Prometheus's
// targets beside the Compose file, both matching the listeners the Compose
// file opens, and one records folder per writing service: setgid, 2750, the
// operator group's (as root: the service's uid, gid 61020), so every record
// file the service makes (0640) is readable by that group.
func TestWriteOperator(t *testing.T) {
	d, src := twoAgents(t, "", nil)
	out := t.TempDir()
	opts := Options{OutDir: out, SourceDir: src}
	root, err := WriteOperator(out, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	f := composeOf(t, d, src)
	v := f.Services["vessel"]
	b, err := os.ReadFile(filepath.Join(out, OperatorURLFile))
	if err != nil || strings.TrimSpace(string(b)) != "http://"+v.Environment["VESSEL_METRICS_LISTEN"] {
		t.Fatalf("operator.url %q %v, want the vessel's metrics listener %s", b, err, v.Environment["VESSEL_METRICS_LISTEN"])
	}
	var groups []struct {
		Targets []string
		Labels  map[string]string
	}
	b, err = os.ReadFile(filepath.Join(out, MetricsTargetsFile))
	if err != nil || json.Unmarshal(b, &groups) != nil {
		t.Fatalf("metrics targets: %v %s", err, b)
	}
	want := map[string]string{"vessel": v.Environment["VESSEL_METRICS_LISTEN"],
		"egress": f.Services["egress"].Environment["VESSEL_EGRESS_METRICS_LISTEN"]}
	for _, a := range []string{"alpha", "beta"} {
		want["sandboxd/"+a] = f.Services["sandbox-"+a].Environment["VESSEL_SANDBOX_METRICS_LISTEN"]
	}
	for _, g := range groups {
		job := g.Labels["job"]
		if a := g.Labels["agent"]; a != "" {
			job += "/" + a
		}
		if len(g.Targets) != 1 || want[job] != g.Targets[0] {
			t.Errorf("target %s %v, want %q", job, g.Targets, want[job])
		}
		delete(want, job)
	}
	if len(want) > 0 {
		t.Errorf("no targets for %v", want)
	}
	for svc, uid := range RecordOwners(d) {
		dir := filepath.Join(out, RecordsDir, svc)
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode()&os.ModeSetgid == 0 || st.Mode().Perm() != 0o750 {
			t.Errorf("%s: mode %v, want setgid 0750", dir, st.Mode())
		}
		if !root {
			continue
		}
		sys := st.Sys().(*syscall.Stat_t)
		if int(sys.Uid) != uid || sys.Gid != OperatorGID {
			t.Errorf("%s: owner %d:%d, want %d:%d", dir, sys.Uid, sys.Gid, uid, OperatorGID)
		}
		if !mountsRecords(f.Services[svc]) {
			t.Errorf("%s does not mount its records folder", svc)
		}
	}
	if _, err := WriteOperator(out, d, Options{OutDir: out, SourceDir: src, MetricsSubnet: "10.254.9.0/16"}); err == nil {
		t.Error("a metrics subnet that is not a /24 was accepted")
	}
}

func mountsRecords(s *service) bool {
	for _, m := range mounts(s) {
		if m[1] == recordsMount {
			return true
		}
	}
	return false
}
