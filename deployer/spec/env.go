package spec

import (
	"os"
	"strings"
)

// EnvWithFiles extends an Env with the NAME_FILE convention: when NAME is
// not set but NAME_FILE is, the value is the content of that file with
// surrounding whitespace removed. Deploy gives containers their secrets
// this way (e.g. VESSEL_MODEL_KEY_FILE), so the vessel should load with
// EnvWithFiles(os.LookupEnv). A NAME_FILE that cannot be read counts as not
// set, which the loaders report naming NAME.
func EnvWithFiles(base Env) Env {
	return func(name string) (string, bool) {
		if v, ok := base(name); ok {
			return v, true
		}
		p, ok := base(name + "_FILE")
		if !ok || p == "" {
			return "", false
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", false
		}
		return strings.TrimSpace(string(b)), true
	}
}
