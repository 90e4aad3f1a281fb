package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// adversarialCases are adversarial documents for Valid: numbers, escapes,
// surrogates, invalid UTF-8, white space kinds, BOM, NUL, trailing bytes,
// nesting at and past MaxDepth, strings crossing the 8-byte words.
var adversarialCases = []string{
	`-0`, `-0.0`, `-0e0`, `0e-0`, `1E+9`, `1e`, `1e+`, `1.`, `.1`, `+1`, `01`, `-01`, `00`, `0x1`, `1e999999999999`, `-`, `--1`,
	`1.5.5`, `[1.5.5]`, `1e5e5`, `[01]`, `{"a":01}`, `[-]`, `[1e]`, `9007199254740993`, `-1e-400`,
	`"\ud800"`, `"\udc00\ud800"`, `"\uD83D\uDE00"`, `"\u12"`, `"\u12g4"`, `"\u"`, `"\U0041"`, `"\'"`, `"\/"`, `"\a"`, `"\`, `"\\`, `"\\\"`,
	"\"\xff\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "{\"\xff\":1}", "\"\x7f\"", "\"\x00\"", "\"abcdefg\x00\"", "\"abcdefgh\x1f\"", "\"abcdefghijklmno\x01p\"",
	"\ufeff{}", "{}\ufeff", "\x00", "{}\x00", "\x00{}", " \t\r\n{} \t\r\n", "\f{}", "{}\f", "\v1", "1\u00a0", "{\"a\"\f:1}",
	`{}}`, `{}]`, `[]]`, `[][]`, `"a""b"`, `1 2`, `true false`, `nul`, `nulll`, `tru`, `True`, `NaN`, `Infinity`, `[,1]`, `[1,,2]`, `{,}`, `{"a":1,,"b":2}`,
	`{"a"}`, `{"a":}`, `{:1}`, `{1:1}`, `{"a":1 "b":2}`, `{"a\u0022b":1}`, `{"a\"":1}`, `{"\\":1}`, `["\\"]`, `["\\\\\"",1]`, `["abcdefgh\"ijklmnop"]`,
	`"` + strings.Repeat("x", 7) + `\"` + `"`, `"` + strings.Repeat("x", 8) + `\"` + `"`, `"` + strings.Repeat(`\\`, 9) + `"`, `"` + strings.Repeat(`\\`, 9) + `\"`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2),
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth-1),
	strings.Repeat(`{"a":`, MaxDepth) + "1" + strings.Repeat("}", MaxDepth),
	strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1),
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

func TestAdversarialValidTable(t *testing.T) {
	for _, c := range adversarialCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid %v", c, got, want)
		}
	}
}

// TestAdversarialValidExhaustive: every document up to 5 bytes over an
// alphabet of JSON's structural bytes, escapes and odd bytes.
func TestAdversarialValidExhaustive(t *testing.T) {
	alpha := []byte("{}[]\":,\\u0-1e.tn \x01\xff")
	buf := make([]byte, 0, 5)
	var rec func(n int)
	rec = func(n int) {
		if got, want := Valid(buf), json.Valid(buf); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", buf, got, want)
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
	rec(5)
}

// TestAdversarialValidStringWords: every string body up to 8 bytes of plain,
// quote, backslash, control, high and 'u' bytes, so each kind lands in
// each position of the 8-byte words rawString reads.
func TestAdversarialValidStringWords(t *testing.T) {
	alpha := []byte("a\"\\\x01\xe2u")
	buf := append(make([]byte, 0, 16), '"')
	var rec func(n int)
	rec = func(n int) {
		doc := append(buf, '"')
		if got, want := Valid(doc), json.Valid(doc); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", doc, got, want)
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

// FuzzAdversarialValid is FuzzValid seeded with the adversarial cases.
func FuzzAdversarialValid(f *testing.F) {
	for _, c := range adversarialCases {
		if len(c) < 200 {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}
