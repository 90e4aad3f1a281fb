package localstack

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// localApp makes the deployment accept the local app key. When the first
// [[apps]] entry takes its key_sha256 from an env: reference, it sets that
// variable in vars. Otherwise (a literal digest, or no apps at all) it writes
// a derived deployment file in stateDir, with the key's digest in place and
// every relative path made absolute, and points *file at it. It returns the
// app id the key belongs to.
func localApp(depFile, digest string, vars map[string]string, stateDir string, file *string) (string, error) {
	data, err := os.ReadFile(depFile)
	if err != nil {
		return "", fmt.Errorf("localstack: read %s: %w", depFile, err)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("localstack: parse %s: %w", depFile, err)
	}
	apps, _ := doc["apps"].([]any)
	if len(apps) > 0 {
		if app, ok := apps[0].(map[string]any); ok {
			id, _ := app["id"].(string)
			ks, _ := app["key_sha256"].(string)
			if name, ok := strings.CutPrefix(ks, "env:"); ok && name != "" {
				vars[name] = digest
				return id, nil
			}
			app["key_sha256"] = digest
		}
	} else {
		var ids []any
		agents, _ := doc["agents"].([]any)
		for _, a := range agents {
			if am, ok := a.(map[string]any); ok {
				ids = append(ids, am["id"])
			}
		}
		doc["apps"] = []any{map[string]any{"id": "local", "key_sha256": digest, "agents": ids}}
	}
	absolutize(doc, filepath.Dir(depFile))
	out, err := toml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("localstack: encode derived deployment: %w", err)
	}
	derived := filepath.Join(stateDir, "deployment.local.toml")
	header := "# Derived from " + depFile + " by `astralvessel up`: the local app key's digest, absolute paths.\n"
	if err := os.WriteFile(derived, append([]byte(header), out...), 0o600); err != nil {
		return "", fmt.Errorf("localstack: write %s: %w", derived, err)
	}
	*file = derived
	app, _ := doc["apps"].([]any)[0].(map[string]any)
	id, _ := app["id"].(string)
	return id, nil
}

// absolutize rewrites the deployment's relative paths against dir.
func absolutize(doc map[string]any, dir string) {
	abs := func(m map[string]any, key string) {
		if s, ok := m[key].(string); ok && s != "" && !filepath.IsAbs(s) && !strings.HasPrefix(s, "env:") {
			m[key] = filepath.Join(dir, s)
		}
	}
	agents, _ := doc["agents"].([]any)
	for _, a := range agents {
		am, ok := a.(map[string]any)
		if !ok {
			continue
		}
		abs(am, "package")
		sb, ok := am["sandbox"].(map[string]any)
		if !ok {
			continue
		}
		abs(sb, "dockerfile")
		mounts, _ := sb["mounts"].([]any)
		for _, m := range mounts {
			if mm, ok := m.(map[string]any); ok {
				abs(mm, "source")
			}
		}
	}
	issuers, _ := doc["issuers"].([]any)
	for _, i := range issuers {
		if im, ok := i.(map[string]any); ok {
			abs(im, "jwks_file")
		}
	}
}
