package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzSkip checks that Skip accepts only what json.Valid accepts.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"]}`, `01`, `"\x"`, `[1,]`, `{"a" 1}`, `-`, `1.`, `1e`, "\"\x01\"", ` {} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Scanner
		s.Reset(b)
		if s.Skip() && s.End() && !json.Valid(b) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
	})
}

func TestFieldsFirst(t *testing.T) {
	var f Fields
	if !f.First(1) || !f.First(4) {
		t.Fatal("a key seen for the first time was refused")
	}
	if f.First(1) || f.First(4) {
		t.Fatal("a duplicate key was accepted")
	}
	if !f.First(2) {
		t.Fatal("an unseen key was refused after others")
	}
}

// TestPlain8 checks the word test against the byte test: every byte value
// in every position of otherwise plain words, and random words.
func TestPlain8(t *testing.T) {
	ref := func(w uint64) bool {
		for i := 0; i < 8; i++ {
			c := byte(w >> (8 * i))
			if c == '"' || c == '\\' || c < 0x20 {
				return false
			}
		}
		return true
	}
	for _, fill := range []byte{'a', 0x7f, 0x80, 0xff, 0x21, 0x5d, 0x5b} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				var w uint64
				for i := 0; i < 8; i++ {
					b := fill
					if i == pos {
						b = byte(c)
					}
					w |= uint64(b) << (8 * i)
				}
				if plain8(w) != ref(w) {
					t.Fatalf("word %#016x: plain8 %v", w, plain8(w))
				}
			}
		}
	}
	x := uint64(0x9E3779B97F4A7C15)
	for range 1_000_000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if plain8(x) != ref(x) {
			t.Fatalf("word %#016x: plain8 %v", x, plain8(x))
		}
	}
}

// validCases are documents Valid answers on each of its two ways: read
// whole by Skip, or left to json.Valid (escaped keys, deep nesting,
// trailing bytes, invalid JSON).
var validCases = []string{
	`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"]}`, ` {} `, `"plain string with <html> & more than eight bytes"`,
	"\"\xff\xfe invalid UTF-8 is valid JSON\"", `{"k\u0041":1}`, `{"a\"b":[]}`, `01`, `"\x"`, `[1,]`, `{"a" 1}`,
	`-`, `1.`, `1e`, "\"\x01\"", `{} {}`, `{}x`, `truex`, `[truex]`, ``, ` `, `nul`, `{"a":1,}`, `[1 2]`,
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat("}", 70),
	strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat("}", 69),
}

// TestValidEqualsJSONValid: Valid gives json.Valid's answer, on both of
// its ways.
func TestValidEqualsJSONValid(t *testing.T) {
	fast, slow := 0, 0
	for _, c := range validCases {
		b := []byte(c)
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid %v", c, got, want)
		}
		s := Scanner{B: b}
		if s.Skip() && s.End() {
			fast++
		} else {
			slow++
		}
	}
	if fast < 3 || slow < 10 {
		t.Fatalf("cases read whole %d, left to json.Valid %d: both ways must be tried", fast, slow)
	}
}

// FuzzValid checks Valid against json.Valid.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

// FuzzFoldsTo checks FoldsTo against bytes.EqualFold with each name, keys
// of other lengths included (the Kelvin sign folds to k, the long s to s).
func FuzzFoldsTo(f *testing.F) {
	for _, s := range []string{"role", "ROLE", "Content", "\u212aey", "\u017ftream", "rolex", "", "tool_call_id", "TOOL_CALL_\u0130D"} {
		f.Add([]byte(s))
	}
	names := []string{"role", "content", "key", "stream", "tool_call_id", "id"}
	f.Fuzz(func(t *testing.T, key []byte) {
		want := false
		for _, n := range names {
			want = want || bytes.EqualFold(key, []byte(n))
		}
		if got := FoldsTo(key, names...); got != want {
			t.Fatalf("FoldsTo(%q) = %v, bytes.EqualFold %v", key, got, want)
		}
	})
}

func TestFoldsToNonASCII(t *testing.T) {
	if !FoldsTo([]byte("\u212aey"), "key") || !FoldsTo([]byte("\u017ftream"), "stream") || FoldsTo([]byte("keys"), "key") || !FoldsTo([]byte("KEY"), "key") {
		t.Fatal("FoldsTo does not fold as bytes.EqualFold")
	}
}
