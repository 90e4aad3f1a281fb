// Package envfile reads a service's settings from its environment with the
// NAME_FILE convention, by which deploy hands containers their secrets.
package envfile

import (
	"fmt"
	"os"
	"strings"
)

// LookupFile is the one reader of the NAME_FILE convention: NAME's value
// when env has NAME, else, when NAME_FILE names a file, that file's content
// with surrounding whitespace removed. Deploy gives containers their secrets
// this way (e.g. VESSEL_MODEL_KEY_FILE). A NAME_FILE that cannot be read is
// an error naming it, not a missing value. os.LookupEnv fits env.
func LookupFile(env func(name string) (string, bool), name string) (value string, found bool, err error) {
	if v, ok := env(name); ok {
		return v, true, nil
	}
	p, ok := env(name + "_FILE")
	if !ok || p == "" {
		return "", false, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false, fmt.Errorf("%s_FILE: %w", name, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// WithFiles is env with the NAME_FILE convention (LookupFile), for loaders
// that take a plain lookup: a NAME_FILE that cannot be read gives no
// value here, and the loader then reports that read error (LookupFile) for
// the name it was resolving.
func WithFiles(env func(name string) (string, bool)) func(name string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok, _ := LookupFile(env, name)
		return v, ok
	}
}
