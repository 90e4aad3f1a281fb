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

// Violation is one forbidden package a rule's packages link.
type Violation struct {
	Rule, Pkg string
}

func (v Violation) String() string { return v.Rule + ": links " + v.Pkg }

// Check runs r against the module in root/r.Dir: `go list -deps` of its
// packages (without tests: what ships), each module alone (GOWORK=off).
func Check(root string, r Rule) ([]Violation, error) {
	args := append([]string{"list", "-deps"}, r.Pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(root, r.Dir)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps in %s: %w: %s", r.Dir, err, strings.TrimSpace(stderr.String()))
	}
	var vs []Violation
	for p := range strings.Lines(string(out)) {
		p = strings.TrimSpace(p)
		if r.Forbidden(p) {
			vs = append(vs, Violation{Rule: r.Name, Pkg: p})
		}
	}
	slices.SortFunc(vs, func(a, b Violation) int { return strings.Compare(a.Pkg, b.Pkg) })
	return vs, nil
}
