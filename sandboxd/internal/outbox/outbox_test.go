package outbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles/outputfilestest"
)

// TestSniff: the outbox passes and refuses content as outputfiles' rules
// do, on their one table.
func TestSniff(t *testing.T) { outputfilestest.RunSniff(t, Sniff) }

func FuzzSniff(f *testing.F) {
	for _, s := range []string{"%PDF-1.4\n%%EOF", "<svg/>", "a,b\n1,2", "\x89PNG\r\n\x1a\n"} {
		f.Add("svg", []byte(s))
		f.Add("csv", []byte(s))
		f.Add("pdf", []byte(s))
		f.Add("png", []byte(s))
	}
	f.Fuzz(func(t *testing.T, ext string, b []byte) {
		_ = Sniff(ext, b) // must not panic or hang
	})
}

func FuzzPlainName(f *testing.F) {
	for _, s := range outputfilestest.NameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if plainName.MatchString(name) && (!filepath.IsLocal(name) || filepath.Base(name) != name || name[0] == '.') {
			t.Fatalf("%q passed as a plain name", name)
		}
	})
}

func TestCollectRemovesEverything(t *testing.T) {
	ws := t.TempDir()
	box := filepath.Join(ws, ".outbox", "1")
	if err := os.MkdirAll(filepath.Join(box, "d.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(box, "a.csv"), []byte("x,y\n"), 0o644)
	_ = os.Symlink("/etc/passwd", filepath.Join(box, "p.csv"))
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	files, refused, err := Collect(root, ".outbox/1", []string{"csv", "png"}, func(int64) bool { return true })
	if err != nil || len(files) != 1 || len(refused) != 2 {
		t.Fatalf("files %v refused %v err %v", files, refused, err)
	}
	if _, err := os.Stat(box); !os.IsNotExist(err) {
		t.Fatalf("outbox left behind: %v", err)
	}
}

func TestEmpty(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"empty", "full", "inner"} {
		if err := os.MkdirAll(filepath.Join(ws, ".outbox", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(ws, ".outbox", "full", "a.csv"), []byte("x\n"), 0o644)
	_ = os.WriteFile(filepath.Join(ws, ".outbox", "file"), []byte("x\n"), 0o644)
	_ = os.Symlink("/etc", filepath.Join(ws, ".outbox", "out"))
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for dir, want := range map[string]bool{".outbox/empty": true, ".outbox/gone": true, ".outbox/full": false,
		".outbox/file": false, ".outbox/out": false} {
		if got := Empty(root, dir); got != want {
			t.Errorf("Empty(%s) = %v", dir, got)
		}
	}
	for _, dir := range []string{".outbox/empty", ".outbox/full", ".outbox/out", ".outbox/gone"} {
		Remove(root, dir)
		if _, err := os.Lstat(filepath.Join(ws, dir)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", dir, err)
		}
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatalf("removing a link to /etc reached /etc: %v", err)
	}
}
