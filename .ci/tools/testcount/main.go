// Command testcount reads `go test -json` on stdin, prints the tests' own
// output as go test would, and fails when a test that exists did not run:
// per package, every test the source declares for the same -run pattern
// (what `go test -list` would print) must have started. In the unit run (no -run), a test of a
// local-stack module (conformance, stress) that skips must be named
// TestLocalStack… so that test-local runs it, or be listed with its reason in
// the skipped-tests file; a skip elsewhere that the file does not list is
// reported (and fails with -strict).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// localPrefix is the naming rule: test-local runs exactly these.
const localPrefix = "TestLocalStack"

// localModules need the local stack for their TestLocalStack… tests.
var localModules = map[string]bool{"conformance": true, "stress": true}

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type tally struct {
	ran     map[string]map[string]bool // package → top-level tests that started
	skipped map[string][]string        // package → top-level tests that skipped
}

func main() {
	module := flag.String("module", "", "the module's directory, relative to the repository root (e.g. vessel/client)")
	dir := flag.String("dir", ".", "the module's directory, where go test -list runs")
	run := flag.String("run", "", "the -run pattern the tests ran with (empty: every test)")
	skippedFile := flag.String("skipped", "", "file of tests skipped on purpose: <module> <TestName> <reason>")
	strict := flag.Bool("strict", false, "fail on a skip outside conformance/stress that the skipped-tests file does not list")
	flag.Parse()

	t, err := read(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcount: reading go test -json: %v\n", err)
		os.Exit(2)
	}
	declared, err := list(*dir, *run)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcount: %v\n", err)
		os.Exit(2)
	}
	purposeful, err := readSkipped(*skippedFile, *module)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcount: %v\n", err)
		os.Exit(2)
	}
	problems, notes := check(*module, *run, t, declared, purposeful, *strict)
	for _, n := range notes {
		fmt.Println("testcount: " + n)
	}
	for _, p := range problems {
		fmt.Println("testcount: FAIL: " + p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// read echoes each event's output and tallies the top-level tests.
func read(r io.Reader, echo io.Writer) (tally, error) {
	t := tally{ran: map[string]map[string]bool{}, skipped: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// go test prints build failures as plain text, not JSON.
			fmt.Fprintln(echo, string(line))
			continue
		}
		if e.Output != "" {
			fmt.Fprint(echo, e.Output)
		}
		if e.Test == "" || strings.Contains(e.Test, "/") {
			continue
		}
		switch e.Action {
		case "run":
			if t.ran[e.Package] == nil {
				t.ran[e.Package] = map[string]bool{}
			}
			t.ran[e.Package][e.Test] = true
		case "skip":
			t.skipped[e.Package] = append(t.skipped[e.Package], e.Test)
		}
	}
	return t, sc.Err()
}

// list declares, per package, the tests go test runs for the pattern, read
// from the source (go/build honours build tags and _linux file names), so
// counting costs no second build of the test binaries.
func list(dir, run string) (map[string][]string, error) {
	re, err := regexp.Compile(run)
	if err != nil {
		return nil, fmt.Errorf("the -run pattern: %w", err)
	}
	modPath, err := modulePath(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	declared := map[string][]string{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != dir {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		names, err := packageTests(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		pkg := modPath
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		for _, n := range names {
			if re.MatchString(n) {
				declared[pkg] = append(declared[pkg], n)
			}
		}
		return nil
	})
	return declared, err
}

func modulePath(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", fmt.Errorf("reading the module path: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s names no module", gomod)
}

// packageTests names the tests, fuzz targets and examples with output that
// go test runs in one folder, in and outside the package.
func packageTests(dir string) ([]string, error) {
	bp, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range append(append([]string{}, bp.TestGoFiles...), bp.XTestGoFiles...) {
		file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", f, err)
		}
		for _, ex := range doc.Examples(file) {
			if ex.Output != "" || ex.EmptyOutput {
				names = append(names, "Example"+ex.Name)
			}
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && isTestFunc(fn) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	return names, nil
}

// isTestFunc is go test's rule: TestXxx(*testing.T) or FuzzXxx(*testing.F),
// Xxx not starting with a lower-case letter; TestMain is not a test.
func isTestFunc(fn *ast.FuncDecl) bool {
	name := fn.Name.Name
	var prefix, param string
	switch {
	case strings.HasPrefix(name, "Test"):
		prefix, param = "Test", "T"
	case strings.HasPrefix(name, "Fuzz"):
		prefix, param = "Fuzz", "F"
	default:
		return false
	}
	if name == "TestMain" {
		return false
	}
	if rest := name[len(prefix):]; rest != "" {
		if r, _ := utf8.DecodeRuneInString(rest); unicode.IsLower(r) {
			return false
		}
	}
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == param
}

// readSkipped returns the module's purposeful skips: test name → reason.
func readSkipped(path, module string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the skipped-tests file: %w", err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want <module> <TestName> <reason>", path, i+1)
		}
		if f[0] == module {
			out[f[1]] = strings.Join(f[2:], " ")
		}
	}
	return out, nil
}

// check compares what ran with what is declared and sorts the skips.
func check(module, run string, t tally, declared map[string][]string, purposeful map[string]string, strict bool) (problems, notes []string) {
	pkgs := make([]string, 0, len(declared))
	for p := range declared {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	total, ranTotal := 0, 0
	for _, p := range pkgs {
		want := declared[p]
		total += len(want)
		ranTotal += len(t.ran[p])
		var missing []string
		for _, name := range want {
			if !t.ran[p][name] {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s: %d of %d declared tests did not run: %s", p, len(missing), len(want), strings.Join(missing, " ")))
		}
	}
	skips := 0
	for _, p := range sortedKeys(t.skipped) {
		for _, name := range t.skipped[p] {
			skips++
			reason, listed := purposeful[name]
			switch {
			case run == "" && localModules[module] && strings.HasPrefix(name, localPrefix):
				// runs in test-local
			case run == "" && strings.HasPrefix(name, localPrefix):
				problems = append(problems, fmt.Sprintf("%s %s skips in the unit run, and test-local runs %s… tests only in conformance and stress: move it there", p, name, localPrefix))
			case listed:
				notes = append(notes, fmt.Sprintf("skipped on purpose: %s %s (%s)", p, name, reason))
			case run == "" && localModules[module]:
				problems = append(problems, fmt.Sprintf("%s %s skips in the unit run but is not named %s…: test-local would never run it (rename it, or list it in .ci/skipped-tests with the reason)", p, name, localPrefix))
			case strict:
				problems = append(problems, fmt.Sprintf("%s %s skipped and is not listed in .ci/skipped-tests", p, name))
			default:
				notes = append(notes, fmt.Sprintf("skipped, not listed in .ci/skipped-tests: %s %s", p, name))
			}
		}
	}
	notes = append(notes, fmt.Sprintf("%s: %d top-level tests ran of %d declared (%d skipped)", module, ranTotal, total, skips))
	return problems, notes
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
