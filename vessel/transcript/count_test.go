package transcript

import (
	"strings"
	"testing"
)

// checkCut checks CountMessages on b's first cut bytes against the whole
// of b (n, final).
func checkCut(t *testing.T, b []byte, cut, n int) {
	t.Helper()
	pn, pfinal := CountMessages(b[:cut])
	if pn > MaxMessages && n <= MaxMessages {
		t.Fatalf("cut at %d counts %d, the whole %d", cut, pn, n)
	}
	if pfinal && n != pn {
		t.Fatalf("cut at %d final at %d, the whole %d", cut, pn, n)
	}
}

// checkCuts checks every cut of b when it is short (64 bytes), else 16
// cuts spread over it, and the cut at.
func checkCuts(t *testing.T, b []byte, at int) {
	t.Helper()
	n, _ := CountMessages(b)
	step := 1
	if len(b) > 64 {
		step = len(b) / 16
	}
	for cut := 0; cut <= len(b); cut += step {
		checkCut(t, b, cut, n)
	}
	checkCut(t, b, min(at, len(b)), n)
}

// TestCountMessagesCutBeforeList: a cut anywhere before the messages list
// (between two members, inside a key, before the list's '[') is not final:
// only the list's end is.
func TestCountMessagesCutBeforeList(t *testing.T) {
	for _, doc := range []string{`{"a":{},"messages":[{},{}]}`, `{"version":1,"x":"{{",  "messages":[{},{}]}`, `{ "a" : [ {} ] , "b" : "" , "messages" : [ {} , {} ] }`} {
		b := []byte(doc)
		for cut := range len(b) {
			if n, final := CountMessages(b[:cut]); final && n != 2 {
				t.Errorf("%q: final at %d, the whole holds 2", b[:cut], n)
			}
		}
		if n, final := CountMessages(b); n != 2 || !final {
			t.Errorf("%q: %d %v, want 2 final", doc, n, final)
		}
	}
	if n, final := CountMessages([]byte(`{"a":{},"b":1}`)); n != 0 || !final {
		t.Errorf("no list: %d %v, want 0 final", n, final)
	}
}

// FuzzCountMessages: a count over the cap on any prefix of a document is
// the count on the whole document, and Parse refuses it for its length;
// a final count on a prefix is the whole document's. Each input is cut at
// every position (16 spread over it when long) and at the fuzzed one.
func FuzzCountMessages(f *testing.F) {
	over := `{"version":1,"messages":[` + strings.Repeat(`{},`, MaxMessages) + `{}]}`
	for _, s := range []string{over, strings.Replace(over, `{},`, `{"role":"user","content":"{"},`, 5),
		`{"version":1,"x":"` + strings.Repeat("{", MaxMessages+1) + `",  "messages":[` + strings.Repeat(`{},`, MaxMessages) + `{}]}`,
		`{"a":{},"messages":[{},{}]}`, `{"messages":[{},1]}`, `{"messages":[]}`, `{"version":1}`, `[]`} {
		for _, cut := range []int{0, 9, len(s) / 2, len(s) - 1} {
			f.Add([]byte(s), uint16(cut))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		checkCuts(t, b, int(cut))
		if n, _ := CountMessages(b); n > MaxMessages {
			if _, err := Parse(b); err != ErrOverCap {
				t.Fatalf("counted %d, Parse: %v", n, err)
			}
		}
	})
}

// TestParseMessagesTwice: an envelope naming messages twice (in any case,
// escaped or not) is refused as malformed, not read as encoding/json would
// read it (the last list); one over the cap in its first list is refused
// for its length first.
func TestParseMessagesTwice(t *testing.T) {
	one := `[{"role":"user","content":"hi"}]`
	for _, doc := range []string{
		`{"version":1,"messages":` + one + `,"messages":` + one + `}`,
		`{"version":1,"messages":` + one + `,"Messages":[]}`,
		`{"version":1,"messages":` + one + `,"me\u0073sages":` + one + `}`,
		`{"version":1,"MESSAGES":null,"messages":` + one + `}`,
	} {
		if _, err := Parse([]byte(doc)); err != ErrMessagesTwice {
			t.Errorf("%s: %v", doc, err)
		}
	}
	over := `{"version":1,"messages":[` + strings.Repeat(`{"role":"user","content":"m"},`, MaxMessages) + `{"role":"user","content":"m"}],"messages":` + one + `}`
	if _, err := Parse([]byte(over)); err != ErrOverCap {
		t.Errorf("first list over the cap: %v", err)
	}
	if _, err := Parse([]byte(`{"version":1,"messages":` + one + `,"x":{"messages":[]}}`)); err == ErrMessagesTwice {
		t.Error("a nested messages key counted")
	}
}
