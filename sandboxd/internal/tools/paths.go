// Package tools holds the sandbox's built-in tools: read, glob and list run
// in the server process beneath fixed roots; grep, bash and declared command
// tools are turned into confined commands.
package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is returned for paths outside every root.
var ErrOutside = errors.New("path is outside the sandbox's package, data and workspace")

// Roots are the directory trees a call may read: the agent package, the
// data mounts and (per call) the turn's workspace. Paths are absolute and
// clean.
type Roots struct {
	Dirs []string
}

// Resolve maps a tool's path argument to one root and a path relative to
// it. Relative paths are relative to the workspace. The relative result is
// opened through os.Root, which refuses any later ".." or symlink escape.
func (r Roots) Resolve(p, workspace string) (root, rel string, err error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", "", fmt.Errorf("%w: it contains a NUL byte", ErrOutside)
	}
	if p == "" || p == "." {
		return workspace, ".", nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	best := ""
	for _, d := range append([]string{workspace}, r.Dirs...) {
		if (p == d || strings.HasPrefix(p, d+"/") || d == "/") && len(d) > len(best) {
			best = d
		}
	}
	if best == "" {
		return "", "", ErrOutside
	}
	rel, err = filepath.Rel(best, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", ErrOutside
	}
	return best, rel, nil
}

// Open opens root as an os.Root.
func openRoot(dir string) (*os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dir, err)
	}
	return r, nil
}
