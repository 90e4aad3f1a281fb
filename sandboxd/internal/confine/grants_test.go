package confine

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// runConfined runs sh -c script with the given read-only trees and
// devices, held as grants or not, and returns its stdout and exit code.
func runConfined(t *testing.T, ro, devs []string, ws string, grants *Grants, script string) (string, int) {
	t.Helper()
	filter, err := BuildFilter()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(Options{
		Spec: Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
			ReadOnly: ro, ReadWrite: []string{ws}, Devices: devs, Grants: grants,
			Limits: Limits{NoFile: 64, NProc: 512, CPUSecs: 10}, Filter: filter},
		Dir: ws, Timeout: time.Minute, OutputCap: 1 << 20,
	})
	if err != nil {
		t.Fatalf("starting %q: %v", script, err)
	}
	var out strings.Builder
	res := p.Wait(func(stream int, data []byte) error {
		if stream == Stdout {
			out.Write(data)
		}
		return nil
	})
	return out.String(), res.Code
}

func systemTrees() []string {
	var ro []string
	for _, d := range []string{"/usr", "/bin", "/lib", "/lib64", "/etc"} {
		if _, err := os.Stat(d); err == nil {
			ro = append(ro, d)
		}
	}
	return ro
}

// A ruleset built from held grants allows and denies exactly what one
// built from the paths does: the read-only trees readable and executable
// but not writable, the devices read and written, the workspace
// writable, and anything else (a sibling of the workspace, a tree not
// granted) out of reach.
func TestGrantsGiveTheSameRulesetAsPaths(t *testing.T) {
	pkg := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkg, "tool.sh"), []byte("echo pkg-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := append(systemTrees(), pkg)
	devs := []string{"/dev/null", "/dev/zero"}
	probes := []struct{ script, want string }{
		{"cat /etc/passwd >/dev/null && echo read-etc", "read-etc\n"},
		{"sh " + pkg + "/tool.sh", "pkg-ran\n"},
		{"echo x > " + pkg + "/new 2>/dev/null && echo wrote-pkg", ""},
		{"touch /etc/sbx-probe 2>/dev/null && echo wrote-etc", ""},
		{"head -c 4 /dev/zero | wc -c", "4\n"},
		{"echo y > /dev/null && echo wrote-null", "wrote-null\n"},
		{"cat /dev/urandom 2>/dev/null | head -c 1 | wc -c", "0\n"},
		{"cat " + secret + "/key 2>/dev/null && echo read-secret", ""},
		{"ls " + filepath.Dir(secret) + " >/dev/null 2>&1 && echo listed-tmp", ""},
		{"echo z > note && cat note && mkdir d && rm -r d note && echo ws-ok", "z\nws-ok\n"},
		{"mkfifo f 2>/dev/null && echo made-fifo", ""},
	}
	g, err := OpenGrants(ro, devs)
	if err != nil {
		t.Fatal(err)
	}
	for _, probe := range probes {
		wantOut, wantCode := runConfined(t, ro, devs, t.TempDir(), nil, probe.script)
		gotOut, gotCode := runConfined(t, ro, devs, t.TempDir(), g, probe.script)
		if gotOut != wantOut || gotCode != wantCode {
			t.Errorf("%q: with grants %q (exit %d), with paths %q (exit %d)", probe.script, gotOut, gotCode, wantOut, wantCode)
		}
		if gotOut != probe.want {
			t.Errorf("%q: printed %q, want %q", probe.script, gotOut, probe.want)
		}
	}
}

func TestOpenGrantsRefusesAMissingPath(t *testing.T) {
	if _, err := OpenGrants([]string{"/usr", filepath.Join(t.TempDir(), "gone")}, nil); err == nil {
		t.Fatal("a missing read-only tree was granted")
	}
	if _, err := OpenGrants(nil, []string{"/dev/no-such-device"}); err == nil {
		t.Fatal("a missing device was granted")
	}
}

// Starts reuse child stacks: more starts at once than stacks are kept,
// then again, all run and report their own output.
func TestManyStartsAtOnce(t *testing.T) {
	ro := systemTrees()
	g, err := OpenGrants(ro, []string{"/dev/null"})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				want := strings.Repeat("x", i+1) + "\n"
				out, code := runConfined(t, ro, []string{"/dev/null"}, t.TempDir(), g, "echo "+strings.TrimSpace(want))
				if out != want || code != 0 {
					t.Errorf("round %d start %d: %q exit %d", round, i, out, code)
				}
			}()
		}
		wg.Wait()
	}
	// A failing start still says which step failed, through the report pipe.
	filter, _ := BuildFilter()
	_, err = Start(Options{Spec: Spec{Path: "/no/such/program", Argv: []string{"x"}, ReadOnly: ro,
		ReadWrite: []string{t.TempDir()}, Grants: g, Filter: filter}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "/no/such/program") {
		t.Fatalf("exec of a missing program: %v", err)
	}
}
