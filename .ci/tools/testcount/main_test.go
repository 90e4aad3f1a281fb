package main

import (
	"bytes"
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

func TestParseListSkipsBenchmarks(t *testing.T) {
	out := "TestOne\nBenchmarkX\nFuzzY\nExampleZ\nok  \tm/a\t0.01s\n?   \tm/c\t[no test files]\nTestTwo\nok  \tm/b\t0.01s\n"
	got := parseList(out)
	if strings.Join(got["m/a"], " ") != "TestOne FuzzY ExampleZ" || strings.Join(got["m/b"], " ") != "TestTwo" {
		t.Errorf("parseList = %v", got)
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
	if p, _ := check("vessel", "", ta, declared, nil, false); len(p) != 0 {
		t.Errorf("not strict: problems = %q", p)
	}
	if p, _ := check("vessel", "", ta, declared, nil, true); len(p) != 2 {
		t.Errorf("strict: problems = %q, want both unlisted skips", p)
	}
}
