package model

import (
	"encoding/json"
	"testing"
)

// TestAdversarialCompactContentWords: compactContent against the byte loop on
// `"` + every body up to 10 bytes of the bytes it stops at (quote,
// backslash, HTML characters, U+2028's bytes) and plain/high bytes, + `"`,
// so each lands in each position of the 8-byte words, escapes straddling
// word ends included.
func TestAdversarialCompactContentWords(t *testing.T) {
	alpha := []byte("a\"\\<\xe2\x80\xa8\x01")
	buf := append(make([]byte, 0, 16), '"')
	var rec func(n int)
	rec = func(n int) {
		doc := append(buf, '"')
		if got, want := compactContent(doc), compactContentBytewise(doc); got != want {
			t.Fatalf("compactContent(%q) = %v, byte by byte %v", doc, got, want)
		}
		if n == 0 {
			return
		}
		for _, c := range alpha {
			buf = append(buf, c)
			rec(n - 1)
			buf = buf[:len(buf)-1]
		}
	}
	rec(8)
}

// TestAdversarialCompactContentMeansUnchanged: where compactContent says yes,
// json.Marshal of the content as a RawMessage gives the same bytes.
func TestAdversarialCompactContentMeansUnchanged(t *testing.T) {
	for _, c := range []string{`"abcdefgh<"`, `"abcdefg\u003c"`, "\"abcdefgh\xe2\x80\xa8\"", "\"abcdefg\xe2\x80\xa9x\"", "\"abcdefghijklmno\xe2\x80\"",
		"\"abcdefgh\xff\xfe\"", `"abcdefgh\\"`, `["abcdefgh","ijklmnop&"]`, `{"abcdefgh":"x"}`, `{"abcdefgh>":"x"}`, "\"abcdefgh\x7f\"", `"\"abcdefghij\""`} {
		raw := []byte(c)
		out, err := json.Marshal(json.RawMessage(raw))
		same := err == nil && string(out) == c
		if got := compactContent(raw); got && !same {
			t.Errorf("compactContent(%q) = true, json.Marshal gives %q (%v)", c, out, err)
		}
	}
}
