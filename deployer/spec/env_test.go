package spec

import (
	"os"
	"path/filepath"
	"strings"
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
}

// A NAME_FILE that cannot be read is an error, not a missing value, and the
// loader's message for an env:NAME reference says so.
func TestLookupFileReadError(t *testing.T) {
	missingFile := filepath.Join(t.TempDir(), "absent")
	env := envOf(map[string]string{"K_FILE": missingFile})
	if _, ok, err := LookupFile(env, "K"); ok || err == nil || !strings.Contains(err.Error(), "K_FILE") {
		t.Errorf("LookupFile = %v, %v; want an error naming K_FILE", ok, err)
	}
	if msg := missing(EnvWithFiles(env), "K"); !strings.Contains(msg, "K_FILE") || !strings.Contains(msg, "absent") {
		t.Errorf("missing = %q; want the read error", msg)
	}
	if msg := missing(env, "J"); msg != "environment variable J is not set" {
		t.Errorf("missing = %q", msg)
	}
}
