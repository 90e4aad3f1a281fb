package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

func init() {
	register(&command{
		name:    "validate",
		usage:   "validate FILE [--env-file F]",
		summary: "check a deployment.toml and every agent it serves",
		run:     runValidate,
	})
}

func runValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", stderr)
	envFile := fs.String("env-file", "", "read env: references from this file too (default: .env beside FILE, if present)")
	pos, code, ok := parseFlags(fs, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		usageError("validate", stderr)
		return 2
	}
	d, _, ok := loadChecked(pos[0], *envFile, stderr)
	if !ok {
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok, %d agent(s)\n", pos[0], len(d.Agents))
	for _, w := range warnings(d) {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	for _, a := range d.Agents {
		fp, err := spec.Fingerprint(d, a.ID)
		if err != nil {
			fmt.Fprintf(stderr, "%v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "  %s  %s\n", a.ID, fp)
	}
	return 0
}

// loadChecked loads a deployment with the operator's environment and checks
// its host paths, printing each problem on its own line.
// It also returns the env file it read, if any.
func loadChecked(file, envFile string, stderr io.Writer) (*spec.Deployment, string, bool) {
	env, used, err := operatorEnv(file, envFile)
	if err != nil {
		fmt.Fprintf(stderr, "astralvessel: %v\n", err)
		return nil, "", false
	}
	d, err := spec.LoadDeployment(file, env)
	if err == nil {
		err = spec.CheckHostPaths(d)
	}
	if err == nil {
		// The egress refuses to start without a route's key; the vessel,
		// which loads the same file, never holds them.
		err = spec.CheckRouteKeys(d, env)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		if h := envHint(err, file, used); h != "" {
			fmt.Fprintln(stderr, h)
		}
		return nil, "", false
	}
	return d, used, true
}

// envHint says where env: references come from when some are not set.
func envHint(err error, file, usedEnvFile string) string {
	var missing []string
	var es spec.Errors
	if !errors.As(err, &es) {
		return ""
	}
	for _, e := range es {
		if m := notSetRE.FindStringSubmatch(e.Msg); m != nil && !slices.Contains(missing, m[1]) {
			missing = append(missing, m[1])
		}
	}
	if len(missing) == 0 {
		return ""
	}
	vars := strings.Join(missing, ", ")
	dir := filepath.Dir(file)
	if usedEnvFile != "" {
		return fmt.Sprintf("hint: %s: set them in %s or export them", vars, usedEnvFile)
	}
	example := filepath.Join(dir, ".env.example")
	if _, err := os.Stat(example); err == nil {
		return fmt.Sprintf("hint: %s come from the environment or from %s: cp %s %s and fill it in (or export them, or pass --env-file)",
			vars, filepath.Join(dir, ".env"), example, filepath.Join(dir, ".env"))
	}
	return fmt.Sprintf("hint: %s come from the environment or from %s: export them, write them there, or pass --env-file", vars, filepath.Join(dir, ".env"))
}

var notSetRE = regexp.MustCompile(`^environment variable ([A-Za-z_][A-Za-z0-9_]*) is not set`)

// warnings are legal but probably unintended settings.
func warnings(d *spec.Deployment) []string {
	granted := map[string]bool{}
	for _, a := range d.Apps {
		for _, id := range a.Agents {
			granted[id] = true
		}
	}
	for _, is := range d.Issuers {
		for _, id := range is.Agents {
			granted[id] = true
		}
	}
	var out []string
	for _, a := range d.Agents {
		if !granted[a.ID] {
			out = append(out, fmt.Sprintf("agent %s is granted to no app or issuer, so nobody can call it", a.ID))
		}
	}
	return out
}
