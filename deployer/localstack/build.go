package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries of the local stack and the package that builds each, relative to
// the repository root (the directory holding go.work).
var Binaries = map[string]string{
	"vessel":         "./vessel/cmd/vessel",
	"scripted-model": "./vessel/cmd/scripted-model",
	"sandboxd":       "./sandboxd/cmd/sandboxd",
	"egress":         "./egress/cmd/egress",
}

// FindRepoRoot walks up from dir to the directory holding a go.work that
// uses ./vessel, or returns "" when there is none.
func FindRepoRoot(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.work"))
		if err == nil && strings.Contains(string(b), "./vessel") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Build builds the named binaries from the repository at root into binDir
// with one `go build` (the go.work ties the modules together). Go's build
// cache makes an unchanged rebuild cheap.
func Build(ctx context.Context, root, binDir string, names []string, log io.Writer) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("localstack: create %s: %w", binDir, err)
	}
	for _, n := range names {
		pkg, ok := Binaries[n]
		if !ok {
			return fmt.Errorf("localstack: unknown binary %q", n)
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, n), pkg)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = log, log
		cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("localstack: go build %s: %w", pkg, err)
		}
	}
	return nil
}

// Locate returns the path of each named binary: from binDir when it holds
// it, else from PATH.
func Locate(binDir string, names []string) (map[string]string, error) {
	out := map[string]string{}
	var missing []string
	for _, n := range names {
		if binDir != "" {
			p := filepath.Join(binDir, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				out[n] = p
				continue
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("localstack: %w", err)
			}
		}
		if p, err := exec.LookPath(n); err == nil {
			out[n] = p
			continue
		}
		missing = append(missing, n)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("localstack: binaries not found (in %s or PATH): %s", binDir, strings.Join(missing, ", "))
	}
	return out, nil
}
