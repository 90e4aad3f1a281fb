package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const jsonRun = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestOne"}
{"Action":"output","Package":"m/a","Test":"TestOne","Output":"=== RUN   TestOne\n"}
{"Action":"run","Package":"m/a","Test":"TestOne/sub"}
{"Action":"pass","Package":"m/a","Test":"TestOne"}
{"Action":"run","Package":"m/a","Test":"TestLocalStackUp"}
{"Action":"skip","Package":"m/a","Test":"TestLocalStackUp"}
{"Action":"run","Package":"m/a","Test":"TestNeedsStack"}
{"Action":"skip","Package":"m/a","Test":"TestNeedsStack"}
# m/b [build failed]
`

func TestReadEchoesOutputAndCountsTopLevel(t *testing.T) {
	var echo bytes.Buffer
	got, err := read(strings.NewReader(jsonRun), &echo)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.ran["m/a"]); n != 3 {
		t.Errorf("top-level tests run = %d, want 3 (subtests not counted)", n)
	}
	if !strings.Contains(echo.String(), "=== RUN   TestOne") || !strings.Contains(echo.String(), "[build failed]") {
		t.Errorf("output not echoed: %q", echo.String())
	}
}

func TestCheckFailsOnMissingTestAndMisnamedLocalSkip(t *testing.T) {
	ta, err := read(strings.NewReader(jsonRun), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{"m/a": {"TestOne", "TestLocalStackUp", "TestNeedsStack", "TestDropped"}}
	problems, _ := check("conformance", "", ta, declared, nil, false)
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, "TestDropped") || !strings.Contains(joined, "TestNeedsStack skips in the unit run") {
		t.Errorf("problems = %q", joined)
	}
	if strings.Contains(joined, "TestLocalStackUp") {
		t.Errorf("a TestLocalStack… skip in the unit run is expected: %q", joined)
	}

	// Listed on purpose, and every declared test ran: no problem.
	declared["m/a"] = declared["m/a"][:3]
	problems, notes := check("conformance", "", ta, declared, map[string]string{"TestNeedsStack": "why"}, false)
	if len(problems) != 0 {
		t.Errorf("problems = %q", problems)
	}
	if last := notes[len(notes)-1]; last != "conformance: 3 top-level tests ran of 3 declared (2 skipped)" {
		t.Errorf("count line = %q", last)
	}
}

func TestCheckStrictOutsideLocalModules(t *testing.T) {
	ta, err := read(strings.NewReader(jsonRun), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{"m/a": {"TestOne", "TestLocalStackUp", "TestNeedsStack"}}
	// Outside conformance and stress, a skipped TestLocalStack… would never run.
	if p, _ := check("vessel", "", ta, declared, nil, false); len(p) != 1 || !strings.Contains(p[0], "TestLocalStackUp") {
		t.Errorf("not strict: problems = %q, want only the TestLocalStack one", p)
	}
	if p, _ := check("vessel", "", ta, declared, nil, true); len(p) != 2 {
		t.Errorf("strict: problems = %q, want both skips", p)
	}
}

func TestListReadsTheSource(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26.0\n")
	write("a/a.go", "package a\n")
	write("a/a_test.go", `package a

import "testing"

func TestMain(m *testing.M) {}
func TestOne(t *testing.T) {}
func Testlower(t *testing.T) {}
func TestHelper(x int) {}
func FuzzTwo(f *testing.F) {}
func BenchmarkThree(b *testing.B) {}
`)
	write("a/x_test.go", "package a_test\n\nimport \"fmt\"\n\nfunc ExampleShown() {\n\tfmt.Println(1)\n\t// Output: 1\n}\n\nfunc ExampleSilent() {}\n")
	write("a/never_test.go", "//go:build never\n\npackage a\n\nimport \"testing\"\n\nfunc TestTagged(t *testing.T) {}\n")
	write("nested/go.mod", "module example.com/n\n")
	write("nested/n_test.go", "package n\n\nimport \"testing\"\n\nfunc TestNested(t *testing.T) {}\n")

	got, err := list(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || strings.Join(got["example.com/m/a"], " ") != "TestOne FuzzTwo ExampleShown" {
		t.Errorf("list = %v", got)
	}
	got, err = list(root, "^Fuzz")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got["example.com/m/a"], " ") != "FuzzTwo" {
		t.Errorf("list ^Fuzz = %v", got)
	}
}
