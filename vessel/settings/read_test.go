package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/envfile"
)

func TestResolveAPIKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	if err := os.WriteFile(file, []byte("  tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"B_FILE": file, "K_FILE": filepath.Join(dir, "absent")}
	env := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	if k, err := (&Model{APIKey: "env:B"}).ResolveAPIKey(envfile.WithFiles(env)); err != nil || k != "tok" {
		t.Errorf("ResolveAPIKey = %q, %v", k, err)
	}
	if k, err := (&Model{APIKey: "literal"}).ResolveAPIKey(env); err != nil || k != "literal" {
		t.Errorf("ResolveAPIKey = %q, %v", k, err)
	}
	if _, err := (&Model{APIKey: "env:D"}).ResolveAPIKey(env); err == nil {
		t.Error("missing key: no error")
	}
	if _, err := (&Model{APIKey: "env:K"}).ResolveAPIKey(env); err == nil || !strings.Contains(err.Error(), "K_FILE") {
		t.Errorf("ResolveAPIKey error = %v; want the read error", err)
	}
}

func TestReadPrompt(t *testing.T) {
	dir := t.TempDir()
	for n, c := range map[string]string{"prompt.md": "You are alpha.\n", "extra.md": "Extra notes.\n"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a := &Agent{ID: "alpha", PackageDir: dir, PromptFiles: []string{"prompt.md", "extra.md"}, Manifest: &Manifest{}}
	if p, err := ReadPrompt(a); err != nil || p != "You are alpha.\n\nExtra notes." {
		t.Errorf("prompt %q %v", p, err)
	}
	a.PromptFiles = append(a.PromptFiles, "gone.md")
	if _, err := ReadPrompt(a); err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ReadPrompt(&Agent{ID: "x"}); err == nil {
		t.Error("no manifest: no error")
	}
}
