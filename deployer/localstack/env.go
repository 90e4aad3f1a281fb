package localstack

import (
	"os"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// overlay is an Env whose own values win over base.
func overlay(over map[string]string, base spec.Env) spec.Env {
	return func(name string) (string, bool) {
		if v, ok := over[name]; ok {
			return v, true
		}
		return base(name)
	}
}

// processEnv builds a child environment: base entries first, overrides last
// (later entries win), without the names in drop.
func processEnv(base []string, over map[string]string, drop ...string) []string {
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, overridden := over[k]; overridden || slices.Contains(drop, k) {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range over {
		out = append(out, k+"="+v)
	}
	return out
}

// minimalEnv is the environment of processes that must hold no secrets of
// the operator (sandboxd, scripted model).
func minimalEnv(over map[string]string) []string {
	base := []string{"PATH=" + os.Getenv("PATH")}
	if h := os.Getenv("HOME"); h != "" {
		base = append(base, "HOME="+h)
	}
	return processEnv(base, over)
}

// operatorEnviron is the process environment plus the values of every env:
// reference of the deployment that come from the operator's env (such as a
// .env file), so the vessel resolves them the same way.
func operatorEnviron(base spec.Env, d *spec.Deployment) []string {
	env := os.Environ()
	for _, name := range d.EnvRefs {
		if _, set := os.LookupEnv(name); set {
			continue
		}
		if v, ok := base(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}
