package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The guard runs in a child process so its skip or failure is observed,
// not suffered.
func TestRequire(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		Require(t, true, "present")
		Require(t, false, "the thing is missing")
		t.Log("not reached")
		return
	}
	for _, c := range []struct {
		ci      string
		fail    bool
		contain string
	}{{"", false, "SKIP"}, {"true", true, "required under CI"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequire$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail || !strings.Contains(string(out), c.contain) ||
			!strings.Contains(string(out), "the thing is missing") || strings.Contains(string(out), "not reached") {
			t.Errorf("CI=%q: err %v, output:\n%s", c.ci, err, out)
		}
	}
}
