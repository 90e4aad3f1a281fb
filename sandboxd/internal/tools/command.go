package tools

import (
	"fmt"
	"path/filepath"
	"strings"
)

// PackagePlaceholder in a declared tool's command is replaced by the
// package directory.
const PackagePlaceholder = "{package}"

// GrepArgv builds a confined grep over a path beneath the roots. grep -r
// does not follow symlinks it meets while recursing, and Landlock stops any
// read outside the roots.
func (r Roots) GrepArgv(a GrepArgs, workspace string) ([]string, error) {
	if a.Pattern == "" {
		return nil, argErr("grep needs a pattern")
	}
	dir, rel, err := r.Resolve(a.Path, workspace)
	if err != nil {
		return nil, err
	}
	// grep follows a symlink named on its command line: name the real path
	// instead, and only when it stays inside the same root.
	real, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
	if err != nil {
		return nil, pathErr(a.Path, err)
	}
	if real != dir && !strings.HasPrefix(real, dir+"/") {
		return nil, fmt.Errorf("%s: %w", a.Path, ErrOutside)
	}
	argv := []string{"grep", "-rnIE", "--color=never"}
	if a.IgnoreCase {
		argv = append(argv, "-i")
	}
	if a.Include != "" {
		argv = append(argv, "--include="+a.Include)
	}
	return append(argv, "-e", a.Pattern, "--", real), nil
}

// BashArgv builds a confined bash -c.
func BashArgv(a BashArgs) ([]string, error) {
	if strings.TrimSpace(a.Command) == "" {
		return nil, argErr("bash needs a command")
	}
	return []string{"bash", "-c", a.Command}, nil
}

// DeclaredArgv fills in the package directory in a declared command.
func DeclaredArgv(command []string, packageDir string) []string {
	out := make([]string, len(command))
	for i, c := range command {
		out[i] = strings.ReplaceAll(c, PackagePlaceholder, packageDir)
	}
	return out
}
