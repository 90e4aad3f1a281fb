package compose

// deploy/gvisor/daemon-json.py, the daemon.json edit of deploy/gvisor-runtime.sh, run on
// temporary files (never the machine's /etc/docker).

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runDaemonJSON(t *testing.T, path, binary string) (stdout, stderr string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 (deploy/gvisor-runtime.sh needs it): %v", err)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(py, "../../deploy/gvisor/daemon-json.py", path, binary, "[]")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("daemon-json.py: %v: %s", err, errb.String())
	}
	return strings.TrimSpace(out.String()), errb.String()
}

func readDaemonJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return conf
}

func TestGvisorDaemonJSONKeepsModeAndFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	realPath := filepath.Join(dir, "realPath.json")
	if err := os.WriteFile(realPath, []byte(`{"log-level": "warn", "runtimes": {"kata": {"path": "/k"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(realPath, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "daemon.json")
	if err := os.Symlink("realPath.json", link); err != nil {
		t.Fatal(err)
	}
	if out, _ := runDaemonJSON(t, link, "/opt/runsc"); out != "changed" {
		t.Fatalf("first run printed %q, want changed", out)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("daemon.json is no longer a symlink: %v %v", fi, err)
	}
	fi, err := os.Stat(realPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %o, want the original 0640", fi.Mode().Perm())
	}
	conf := readDaemonJSON(t, realPath)
	rt, _ := conf["runtimes"].(map[string]any)
	if conf["log-level"] != "warn" || rt["kata"] == nil {
		t.Errorf("other keys lost: %v", conf)
	}
	if rs, _ := rt["runsc"].(map[string]any); rs["path"] != "/opt/runsc" {
		t.Errorf("runtimes.runsc = %v", rt["runsc"])
	}
	if out, _ := runDaemonJSON(t, link, "/opt/runsc"); out != "unchanged" {
		t.Errorf("second run printed %q, want unchanged", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left files behind: %v", entries)
	}
}

func TestGvisorDaemonJSONSaysWhenReplacingRunsc(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.json")
	if err := os.WriteFile(path, []byte(`{"runtimes": {"runsc": {"path": "/usr/bin/runsc"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr := runDaemonJSON(t, path, "/opt/runsc")
	if out != "changed" || !strings.Contains(stderr, "replacing runtimes.runsc") || !strings.Contains(stderr, "/usr/bin/runsc") {
		t.Errorf("stdout %q, stderr %q: want changed and a line naming the replaced entry", out, stderr)
	}
	// a new file gets 0644
	fresh := filepath.Join(t.TempDir(), "daemon.json")
	if out, stderr := runDaemonJSON(t, fresh, "/opt/runsc"); out != "changed" || stderr != "" {
		t.Errorf("new file: stdout %q, stderr %q", out, stderr)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v %v, want mode 0644", fi, err)
	}
}

// A daemon.json whose "runtimes" is not an object, or that is not JSON at
// all, is refused with a line saying so (no traceback) and left as it is.
func TestGvisorDaemonJSONRefusesBadRuntimes(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 (deploy/gvisor-runtime.sh needs it): %v", err)
	}
	for _, tc := range []struct{ text, want string }{
		{`{"runtimes": null}`, `"runtimes" is null, not a JSON object`},
		{`{"runtimes": ["runsc"]}`, `"runtimes" is ["runsc"], not a JSON object`},
		{`{"runtimes": {`, "is not valid JSON"},
		{`[1]`, "is not a JSON object"},
	} {
		path := filepath.Join(t.TempDir(), "daemon.json")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		cmd := exec.Command(py, "../../deploy/gvisor/daemon-json.py", path, "/opt/runsc", "[]")
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err == nil || !strings.Contains(errb.String(), tc.want) || strings.Contains(errb.String(), "Traceback") {
			t.Errorf("%s: err %v, stderr %q: want a refusal saying %q", tc.text, err, errb.String(), tc.want)
		}
		if b, _ := os.ReadFile(path); string(b) != tc.text {
			t.Errorf("%s: the file became %q, want it left as it was", tc.text, b)
		}
	}
}
