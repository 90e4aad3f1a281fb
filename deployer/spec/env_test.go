package spec

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnvWithFiles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte("  tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := EnvWithFiles(envOf(map[string]string{"A": "direct", "A_FILE": file, "B_FILE": file, "C_FILE": file + ".missing"}))
	for name, want := range map[string]string{"A": "direct", "B": "tok"} {
		if v, ok := env(name); !ok || v != want {
			t.Errorf("%s = %q, %v; want %q", name, v, ok, want)
		}
	}
	for _, name := range []string{"C", "D"} {
		if _, ok := env(name); ok {
			t.Errorf("%s found", name)
		}
	}
	m := Model{APIKey: "env:B"}
	if k, err := m.ResolveAPIKey(env); err != nil || k != "tok" {
		t.Errorf("ResolveAPIKey = %q, %v", k, err)
	}
	if _, err := (&Model{APIKey: "env:D"}).ResolveAPIKey(env); err == nil {
		t.Error("missing key: no error")
	}
}
