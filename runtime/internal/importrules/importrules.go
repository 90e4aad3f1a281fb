// Package importrules checks the design's module boundaries with `go list
// -deps`: which binaries and libraries may link which code. The rules are
// in Rules; TestImportRules runs them on the repository.
package importrules

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

const repo = "github.com/astraldeep/astralvessel-go/"

// A Rule forbids the packages Pkgs of the module in Dir (relative to the
// repository root) to link any package whose path Forbidden reports.
type Rule struct {
	Name      string
	Dir       string
	Pkgs      []string
	Forbidden func(path string) bool
}

// vesselServer is the vessel's server code: every package of the vessel
// module but the public client.
func vesselServer(p string) bool {
	return (p == repo+"vessel" || strings.HasPrefix(p, repo+"vessel/")) &&
		p != repo+"vessel/client" && !strings.HasPrefix(p, repo+"vessel/client/")
}

// deployerOrTOML is the deployer's code and the TOML parser: a team must be
// able to swap in its own egress or sandbox without the deployment file.
func deployerOrTOML(p string) bool {
	return p == repo+"deployer" || strings.HasPrefix(p, repo+"deployer/") ||
		strings.HasPrefix(p, "github.com/pelletier/go-toml")
}

// Rules are the module boundaries of docs/architecture.md.
var Rules = []Rule{
	{"sandboxd links no vessel server code", "sandboxd", []string{"./..."}, vesselServer},
	{"egress links no vessel server code", "egress", []string{"./..."}, vesselServer},
	{"vessel/client links no vessel server code", "vessel/client", []string{"./..."}, vesselServer},
	{"the deployer CLI links no vessel server code", "deployer", []string{"./cmd/..."}, vesselServer},
	{"conformance links no vessel server code", "conformance", []string{"./..."}, vesselServer},
	{"stress links no vessel server code", "stress", []string{"./..."}, vesselServer},
	{"egress links no deployer code and no go-toml", "egress", []string{"./..."}, deployerOrTOML},
	{"sandboxd links no deployer code and no go-toml", "sandboxd", []string{"./..."}, deployerOrTOML},
}

// An ImportRule lets only its Owners, among the packages of the module in
// Dir, import (directly, in what ships: tests are not checked) a package
// Forbidden reports. Exceptions are the packages that still do, each with
// the forbidden imports it keeps: the list may only shrink, and an entry
// that is no longer needed is reported as well.
type ImportRule struct {
	Name       string
	Dir        string
	Owners     []string
	Forbidden  func(path string) bool
	Exceptions map[string][]string
}

// fromspec is the one vessel package that reads the deployment files.
const fromspec = repo + "vessel/internal/fromspec"

// ImportRules are the rules within one module of docs/architecture.md.
var ImportRules = []ImportRule{
	{
		Name: "only vessel/internal/fromspec imports deployer code or go-toml", Dir: "vessel",
		Owners: []string{fromspec}, Forbidden: deployerOrTOML,
	},
	{
		Name: "only vessel/cmd/vessel imports vessel/internal/fromspec", Dir: "vessel",
		Owners: []string{repo + "vessel/cmd/vessel"}, Forbidden: func(p string) bool { return p == fromspec },
	},
}

// CheckImports runs r against the module in root/r.Dir (GOWORK=off): the
// forbidden imports of packages that are not owners and not excepted, and
// the exceptions no longer needed.
func CheckImports(root string, r ImportRule) (vs []Violation, stale []string, err error) {
	out, err := goList(filepath.Join(root, r.Dir), "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	if err != nil {
		return nil, nil, err
	}
	used := map[string]bool{}
	for l := range strings.Lines(out) {
		f := strings.Fields(l)
		if len(f) == 0 || slices.Contains(r.Owners, f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if !r.Forbidden(imp) {
				continue
			}
			if slices.Contains(r.Exceptions[f[0]], imp) {
				used[f[0]+" "+imp] = true
				continue
			}
			vs = append(vs, Violation{Rule: r.Name, Pkg: f[0] + " imports " + imp})
		}
	}
	for pkg, imps := range r.Exceptions {
		for _, imp := range imps {
			if !used[pkg+" "+imp] {
				stale = append(stale, pkg+" no longer imports "+imp+": remove the exception")
			}
		}
	}
	slices.SortFunc(vs, func(a, b Violation) int { return strings.Compare(a.Pkg, b.Pkg) })
	slices.Sort(stale)
	return vs, stale, nil
}

// goList runs go with args in dir, each module alone (GOWORK=off).
func goList(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s in %s: %w: %s", args[0], dir, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Violation is one forbidden package a rule's packages link.
type Violation struct {
	Rule, Pkg string
}

func (v Violation) String() string { return v.Rule + ": links " + v.Pkg }

// Check runs r against the module in root/r.Dir: `go list -deps` of its
// packages (without tests: what ships), each module alone (GOWORK=off).
func Check(root string, r Rule) ([]Violation, error) {
	out, err := goList(filepath.Join(root, r.Dir), append([]string{"list", "-deps"}, r.Pkgs...)...)
	if err != nil {
		return nil, err
	}
	var vs []Violation
	for p := range strings.Lines(out) {
		p = strings.TrimSpace(p)
		if r.Forbidden(p) {
			vs = append(vs, Violation{Rule: r.Name, Pkg: p})
		}
	}
	slices.SortFunc(vs, func(a, b Violation) int { return strings.Compare(a.Pkg, b.Pkg) })
	return vs, nil
}
