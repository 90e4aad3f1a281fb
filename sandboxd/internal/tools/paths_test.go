package tools

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	r := Roots{Dirs: []string{"/agent", "/data/guide"}}
	ws := "/scratch/t-1"
	for _, c := range []struct{ in, root, rel string }{
		{"", ws, "."},
		{"a/b", ws, "a/b"},
		{"/agent/tools/x.py", "/agent", "tools/x.py"},
		{"/data/guide", "/data/guide", "."},
		{"/scratch/t-1/f", ws, "f"},
		{"/agent/../agent/x", "/agent", "x"},
	} {
		root, rel, err := r.Resolve(c.in, ws)
		if err != nil || root != c.root || rel != c.rel {
			t.Errorf("Resolve(%q) = %q %q %v, want %q %q", c.in, root, rel, err, c.root, c.rel)
		}
	}
	for _, bad := range []string{"/etc/passwd", "../x", "/agentx/y", "/data", "/scratch/t-2/x", "/scratch", "a/../../x", "/", "x\x00y"} {
		if _, _, err := r.Resolve(bad, ws); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q) = %v, want ErrOutside", bad, err)
		}
	}
}

// FuzzResolve: whatever the input, the result is one of the roots and a
// local path beneath it.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", ".", "..", "/agent/../../etc", "a/b/../../..", "/data/guide/./x", "//agent//x", "/scratch/t-1/../t-2"} {
		f.Add(s)
	}
	r := Roots{Dirs: []string{"/agent", "/data/guide"}}
	ws := "/scratch/t-1"
	f.Fuzz(func(t *testing.T, p string) {
		root, rel, err := r.Resolve(p, ws)
		if err != nil {
			return
		}
		if root != ws && root != "/agent" && root != "/data/guide" {
			t.Fatalf("root %q", root)
		}
		if rel != "." && !filepath.IsLocal(rel) {
			t.Fatalf("rel %q is not local (input %q)", rel, p)
		}
	})
}

// escapeTree builds a workspace and a data root full of links that point
// outside, next to a secret.
func escapeTree(t testing.TB) (Roots, string, string) {
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	ws := filepath.Join(base, "ws")
	data := filepath.Join(base, "data")
	for _, d := range []string{secret, ws, data, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(secret, "key.txt"), []byte("TOPSECRET\n"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "ok.txt"), []byte("fine\n"), 0o644))
	must(os.WriteFile(filepath.Join(data, "d.txt"), []byte("data\n"), 0o644))
	must(os.Symlink(secret, filepath.Join(ws, "out")))
	must(os.Symlink(filepath.Join(secret, "key.txt"), filepath.Join(ws, "key")))
	must(os.Symlink("../../secret", filepath.Join(ws, "sub", "up")))
	must(os.Symlink("../secret/key.txt", filepath.Join(data, "rel")))
	must(os.Symlink("ok.txt", filepath.Join(ws, "inside")))
	return Roots{Dirs: []string{data}}, ws, data
}

func TestFileToolsStayInside(t *testing.T) {
	r, ws, data := escapeTree(t)
	for _, p := range []string{"out/key.txt", "key", "sub/up/key.txt", "../secret/key.txt", data + "/rel", data + "/../secret/key.txt"} {
		var b bytes.Buffer
		if _, err := r.RunRead(ReadArgs{Path: p}, ws, &b, 1<<20); err == nil || strings.Contains(b.String(), "TOPSECRET") {
			t.Errorf("read %q: %v %q", p, err, b.String())
		}
	}
	var b bytes.Buffer
	if _, err := r.RunRead(ReadArgs{Path: "inside"}, ws, &b, 1<<20); err != nil || b.String() != "fine\n" {
		t.Errorf("read link inside: %v %q", err, b.String())
	}
	for _, p := range []string{"out", "sub/up", ".."} {
		var b bytes.Buffer
		if err := r.RunList(ListArgs{Path: p}, ws, &b); err == nil || strings.Contains(b.String(), "key.txt") {
			t.Errorf("list %q: %v %q", p, err, b.String())
		}
	}
	b.Reset()
	if err := r.RunGlob(GlobArgs{Pattern: "**"}, ws, &b); err != nil || strings.Contains(b.String(), "key.txt") {
		t.Errorf("glob followed a link: %v %q", err, b.String())
	}
	for _, p := range []string{"key", "out", data + "/rel"} {
		if _, err := r.GrepArgv(GrepArgs{Pattern: "x", Path: p}, ws); !errors.Is(err, ErrOutside) {
			t.Errorf("grep %q: %v", p, err)
		}
	}
}

// FuzzReadStaysInside feeds arbitrary paths to read and list: the secret
// next to the roots never shows up.
func FuzzReadStaysInside(f *testing.F) {
	for _, s := range []string{"out/key.txt", "key", "sub/up/key.txt", "../secret/key.txt", "sub/up", "./../../secret", "inside"} {
		f.Add(s)
	}
	r, ws, _ := escapeTree(f)
	f.Fuzz(func(t *testing.T, p string) {
		var b bytes.Buffer
		_, _ = r.RunRead(ReadArgs{Path: p}, ws, &b, 1<<20)
		_ = r.RunList(ListArgs{Path: p}, ws, &b)
		_ = r.RunGlob(GlobArgs{Pattern: "*", Path: p}, ws, &b)
		if strings.Contains(b.String(), "TOPSECRET") || strings.Contains(b.String(), "key.txt") {
			t.Fatalf("path %q reached the secret: %q", p, b.String())
		}
	})
}

func FuzzGlobPattern(f *testing.F) {
	for _, s := range []string{"**", "*.txt", "a/**/b", "[", "**/**/*", "\\"} {
		f.Add(s)
	}
	r, ws, _ := escapeTree(f)
	f.Fuzz(func(t *testing.T, pat string) {
		var b bytes.Buffer
		_ = r.RunGlob(GlobArgs{Pattern: pat}, ws, &b)
		if strings.Contains(b.String(), "TOPSECRET") || strings.Contains(b.String(), "key.txt") {
			t.Fatalf("pattern %q listed the secret: %q", pat, b.String())
		}
	})
}

func TestMatchSegments(t *testing.T) {
	for _, c := range []struct {
		pat, p string
		ok     bool
	}{
		{"**/*.csv", "a/b/c.csv", true}, {"**/*.csv", "c.csv", true}, {"*.csv", "a/c.csv", false},
		{"a/**", "a/b/c", true}, {"a/*/c", "a/b/c", true}, {"a/*/c", "a/b/d/c", false},
	} {
		if got := matchSegments(strings.Split(c.pat, "/"), strings.Split(c.p, "/")); got != c.ok {
			t.Errorf("%s ~ %s = %v", c.pat, c.p, got)
		}
	}
}

func TestDeclaredArgv(t *testing.T) {
	got := DeclaredArgv([]string{"python3", "{package}/tools/x.py", "--dir={package}"}, "/agent")
	if strings.Join(got, " ") != "python3 /agent/tools/x.py --dir=/agent" {
		t.Fatal(got)
	}
}

func TestReadCapsOutput(t *testing.T) {
	r, ws, _ := escapeTree(t)
	if err := os.WriteFile(filepath.Join(ws, "big"), bytes.Repeat([]byte("x"), 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	cut, err := r.RunRead(ReadArgs{Path: "big"}, ws, &b, 4096)
	if err != nil || !cut || b.Len() != 4096 {
		t.Fatalf("cut=%v len=%d err=%v", cut, b.Len(), err)
	}
	b.Reset()
	cut, err = r.RunRead(ReadArgs{Path: "ok.txt"}, ws, &b, 4096)
	if err != nil || cut || b.String() != "fine\n" {
		t.Fatalf("cut=%v %q err=%v", cut, b.String(), err)
	}
}

// W3: reading a line range of a file made of one huge line holds a buffer,
// not the line: sandboxd's memory stays flat however long lines are.
func TestReadLinesDoesNotHoldALine(t *testing.T) {
	ws := t.TempDir()
	line := bytes.Repeat([]byte("x"), 20<<20)
	if err := os.WriteFile(filepath.Join(ws, "one-line"), append(line, "\nsecond\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Roots{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var b bytes.Buffer
	cut, err := r.RunRead(ReadArgs{Path: "one-line", Offset: 1, Limit: 1}, ws, &b, 1<<20)
	runtime.ReadMemStats(&after)
	if err != nil || !cut || b.Len() != 1<<20 {
		t.Fatalf("read: cut %v, %d bytes, %v", cut, b.Len(), err)
	}
	// The output itself is 1 MiB (and the buffer holding it grows to about
	// 2 MiB); the old line reader allocated the whole 20 MiB line.
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Fatalf("reading one line range allocated %d bytes", got)
	}
	b.Reset()
	if _, err := r.RunRead(ReadArgs{Path: "one-line", Offset: 2, Limit: 1}, ws, &b, 1<<20); err != nil || b.String() != "second\n" {
		t.Fatalf("line 2: %q %v", b.String(), err)
	}
}
