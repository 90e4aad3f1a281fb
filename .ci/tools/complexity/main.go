// Command complexity enforces the project's limits on hand-written Go: no
// function over cyclomatic complexity 30 and no file over 800 lines.
// Generated files (a "Code generated … DO NOT EDIT." line) and third_party/
// are left out. An allowlist names the exceptions with a reason each; the
// check prints them so they stay in sight, fails on any other offender, and
// names an allowlist entry that no longer offends so it can be removed (a
// warning, not a failure: a split or a file moved on another branch must not
// turn CI red).
//
// Cyclomatic complexity is counted as gocyclo counts it: 1, plus one per if,
// for, range, non-default case or select clause, && and ||, closures included
// in their enclosing function. (gocyclo itself is not served by the module
// proxy this project builds from.)
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

type finding struct {
	kind  string // "cyclo" or "lines"
	key   string // file for lines, file:Func for cyclo
	value int
}

func main() {
	root := flag.String("root", ".", "repository root")
	maxCyclo := flag.Int("max-cyclo", 30, "highest cyclomatic complexity allowed")
	maxLines := flag.Int("max-lines", 800, "most lines allowed in a hand-written file")
	allowPath := flag.String("allow", ".ci/complexity-allow", "allowlist: <cyclo|lines> <key> <reason>")
	flag.Parse()

	allow, err := readAllow(*allowPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "complexity: %v\n", err)
		os.Exit(2)
	}
	found, err := scan(*root, *maxCyclo, *maxLines)
	if err != nil {
		fmt.Fprintf(os.Stderr, "complexity: %v\n", err)
		os.Exit(2)
	}
	bad := report(os.Stdout, found, allow, *maxCyclo, *maxLines)
	if bad {
		os.Exit(1)
	}
}

// report prints every offender and stale allowlist entry; it says whether
// the check fails.
func report(w io.Writer, found []finding, allow map[string]string, maxCyclo, maxLines int) bool {
	bad := false
	seen := map[string]bool{}
	for _, f := range found {
		id := f.kind + " " + f.key
		seen[id] = true
		if reason, ok := allow[id]; ok {
			fmt.Fprintf(w, "complexity: allowed: %s = %d (%s)\n", id, f.value, reason)
			continue
		}
		limit := maxCyclo
		if f.kind == "lines" {
			limit = maxLines
		}
		fmt.Fprintf(w, "complexity: FAIL: %s = %d, over %d: split it into named steps\n", id, f.value, limit)
		bad = true
	}
	stale := make([]string, 0)
	for id := range allow {
		if !seen[id] {
			stale = append(stale, id)
		}
	}
	sort.Strings(stale)
	for _, id := range stale {
		fmt.Fprintf(w, "complexity: note: %s is in the allowlist but no longer over the limit (or gone): remove it\n", id)
	}
	return bad
}

func readAllow(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the allowlist: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Fields(line)
		if len(p) < 3 || (p[0] != "cyclo" && p[0] != "lines") {
			return nil, fmt.Errorf("%s:%d: want <cyclo|lines> <key> <reason>", path, n)
		}
		out[p[0]+" "+p[1]] = strings.Join(p[2:], " ")
	}
	return out, sc.Err()
}

var generated = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// scan walks every .go file under root outside third_party and hidden
// folders and returns the offenders, sorted.
func scan(root string, maxCyclo, maxLines int) ([]finding, error) {
	var found []finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "third_party" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated.Match(src) {
			return nil
		}
		fs, err := fileFindings(filepath.ToSlash(rel), src, maxCyclo, maxLines)
		found = append(found, fs...)
		return err
	})
	sort.Slice(found, func(i, j int) bool { return found[i].kind+found[i].key < found[j].kind+found[j].key })
	return found, err
}

func fileFindings(rel string, src []byte, maxCyclo, maxLines int) ([]finding, error) {
	var out []finding
	if n := bytes.Count(src, []byte("\n")); n > maxLines {
		out = append(out, finding{kind: "lines", key: rel, value: n})
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", rel, err)
	}
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		if c := cyclomatic(fn); c > maxCyclo {
			out = append(out, finding{kind: "cyclo", key: rel + ":" + funcName(fn), value: c})
		}
	}
	return out, nil
}

// funcName is Func or Recv.Method, as gocyclo names them.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}

func cyclomatic(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if x.List != nil {
				c++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
