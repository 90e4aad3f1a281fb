package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Symlink and ".." escapes through every file tool.
func TestFileToolEscapes(t *testing.T) {
	e := newEnv(t, envOpts{})
	ws := e.workspace("turn-esc")
	e.bash("turn-esc", "ln -s /etc etc-link; ln -s /etc/passwd pw; ln -s "+e.scratch+" scratch-link; mkdir sub; ln -s ../../.. sub/up; echo mine > ok.txt")
	if _, err := os.Lstat(filepath.Join(ws, "pw")); err != nil {
		t.Fatalf("setup: %v", err)
	}
	// A link planted in the data tree by the operator must not lead out either.
	_ = os.Symlink("/etc/passwd", filepath.Join(e.data, "pw-link"))
	cases := []struct{ tool, args string }{
		{"read", jsonArgs("path", "pw")},
		{"read", jsonArgs("path", "etc-link/passwd")},
		{"read", jsonArgs("path", "sub/up/etc/passwd")},
		{"read", jsonArgs("path", "../../../../../../etc/passwd")},
		{"read", jsonArgs("path", "/etc/passwd")},
		{"read", jsonArgs("path", e.data+"/../../../etc/passwd")},
		{"read", jsonArgs("path", e.data+"/pw-link")},
		{"read", jsonArgs("path", ws+"/../t-other/x")},
		{"list", jsonArgs("path", "etc-link")},
		{"list", jsonArgs("path", "scratch-link")},
		{"list", jsonArgs("path", "/")},
		{"list", jsonArgs("path", "..")},
		{"list", jsonArgs("path", "sub/up")},
		{"glob", jsonArgs("pattern", "*", "path", "etc-link")},
		{"glob", jsonArgs("pattern", "../*")},
		{"glob", jsonArgs("pattern", "*", "path", "/etc")},
		{"glob", jsonArgs("pattern", "**/passwd", "path", "sub/up")},
		{"grep", jsonArgs("pattern", "root", "path", "pw")},
		{"grep", jsonArgs("pattern", "root", "path", "etc-link")},
		{"grep", jsonArgs("pattern", "root", "path", "/etc")},
		{"grep", jsonArgs("pattern", "root", "path", "..")},
		{"grep", jsonArgs("pattern", "root", "path", e.data+"/pw-link")},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			r := e.must(call{turn: "turn-esc", tool: c.tool, args: c.args})
			if strings.Contains(r.stdout, "root:") || strings.Contains(r.stdout, "passwd") || strings.Contains(r.stdout, "hostname") {
				t.Fatalf("escaped:\n%s", r)
			}
			if r.exit.Error == "" && r.exit.Code == 0 && strings.TrimSpace(r.stdout) != "" {
				t.Fatalf("no error and output:\n%s", r)
			}
		})
	}
	// The tools still work inside their roots.
	if r := e.must(call{turn: "turn-esc", tool: "read", args: jsonArgs("path", "ok.txt")}); r.stdout != "mine\n" {
		t.Fatalf("read: %s", r)
	}
	if r := e.must(call{turn: "turn-esc", tool: "read", args: jsonArgs("path", e.data+"/guide.txt")}); !strings.Contains(r.stdout, "finch") {
		t.Fatalf("read data: %s", r)
	}
	if r := e.must(call{turn: "turn-esc", tool: "read", args: `{"path":"` + e.data + `/guide.txt","offset":2,"limit":1}`}); r.stdout != "robin\n" {
		t.Fatalf("read lines: %s", r)
	}
	if r := e.must(call{turn: "turn-esc", tool: "glob", args: jsonArgs("pattern", "**/*.txt", "path", e.data)}); !strings.Contains(r.stdout, "guide.txt") {
		t.Fatalf("glob: %s", r)
	}
	if r := e.must(call{turn: "turn-esc", tool: "list", args: jsonArgs("path", e.pkg)}); !strings.Contains(r.stdout, "probe.py") {
		t.Fatalf("list: %s", r)
	}
	if r := e.must(call{turn: "turn-esc", tool: "grep", args: jsonArgs("pattern", "rob", "path", e.data)}); !strings.Contains(r.stdout, "robin") {
		t.Fatalf("grep: %s", r)
	}
}
