// Package jsonscan reads JSON documents member by member without building
// them: callers look at the few members they need and skip the rest. It
// accepts only valid JSON, and leaves anything unusual (escaped keys, deep
// nesting) to the caller's fallback, normally encoding/json.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting Skip reads.
const MaxDepth = 64

// Scanner reads one document held in B from position I.
type Scanner struct {
	B []byte
	I int
}

// Reset starts reading b.
func (s *Scanner) Reset(b []byte) { s.B, s.I = b, 0 }

// End reports whether only white space is left.
func (s *Scanner) End() bool {
	s.ws()
	return s.I == len(s.B)
}

func (s *Scanner) ws() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Peek returns the next non-space byte, 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.I < len(s.B) {
		return s.B[s.I]
	}
	return 0
}

// Null reads a null if one comes next.
func (s *Scanner) Null() bool {
	if s.Peek() == 'n' && bytes.HasPrefix(s.B[s.I:], []byte("null")) {
		s.I += 4
		return true
	}
	return false
}

// Object reads an object, calling member with each key (unescaped keys
// only) positioned at its value.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	if s.Peek() != '{' {
		return false
	}
	s.I++
	if s.Peek() == '}' {
		s.I++
		return true
	}
	for {
		if s.Peek() != '"' {
			return false
		}
		key, ok := s.rawString()
		if !ok || bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		if s.Peek() != ':' {
			return false
		}
		s.I++
		if !member(key) {
			return false
		}
		switch s.Peek() {
		case ',':
			s.I++
		case '}':
			s.I++
			return true
		default:
			return false
		}
	}
}

// Array reads an array, calling elem positioned at each element.
func (s *Scanner) Array(elem func() bool) bool {
	if s.Peek() != '[' {
		return false
	}
	s.I++
	if s.Peek() == ']' {
		s.I++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.Peek() {
		case ',':
			s.I++
		case ']':
			s.I++
			return true
		default:
			return false
		}
	}
}

// rawString reads a string token and returns its contents still escaped.
func (s *Scanner) rawString() ([]byte, bool) {
	start := s.I + 1
	for j := start; j < len(s.B); j++ {
		// Eight bytes at a time while none of them ends the string, starts
		// an escape or is a control character (a history's strings are
		// long and mostly plain).
		for j+8 <= len(s.B) && plain8(binary.LittleEndian.Uint64(s.B[j:])) {
			j += 8
		}
		if j >= len(s.B) {
			break
		}
		c := s.B[j]
		switch {
		case c == '"':
			s.I = j + 1
			return s.B[start:j], true
		case c == '\\':
			j++
			if j >= len(s.B) {
				return nil, false
			}
			switch s.B[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.B) {
					return nil, false
				}
				for _, h := range s.B[j+1 : j+5] {
					if !isHex(h) {
						return nil, false
					}
				}
				j += 4
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain8 reports whether none of w's eight bytes is '"', '\\' or below
// 0x20: the classic zero-byte and less-than tests on a whole word.
func plain8(w uint64) bool {
	return ZeroBytes(w^('"'*Ones))|ZeroBytes(w^('\\'*Ones))|((w-0x20*ones)&^w&highs) == 0
}

// Ones is 0x01 in each of a word's eight bytes: c*Ones repeats byte c.
const Ones = ones

// ZeroBytes is nonzero when one of x's eight bytes is zero (the classic
// test, exact for the word as a whole): ZeroBytes(w ^ c*Ones) finds byte c
// in w, eight bytes at a time.
func ZeroBytes(x uint64) uint64 { return (x - ones) &^ x & highs }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Str reads a string into *v; a null leaves *v as it is, as encoding/json
// does.
func (s *Scanner) Str(v *string) bool {
	if s.Null() {
		return true
	}
	if s.Peek() != '"' {
		return false
	}
	start := s.I
	raw, ok := s.rawString()
	if !ok {
		return false
	}
	plain, ascii := true, true
	for _, c := range raw {
		if c == '\\' {
			plain = false
			break
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if plain && (ascii || utf8.Valid(raw)) {
		*v = string(raw)
		return true
	}
	// Escapes or invalid UTF-8 (which becomes U+FFFD): exactly as encoding/json.
	return json.Unmarshal(s.B[start:s.I], v) == nil
}

// StrEquals reads a string and reports whether it is exactly lit; an
// escaped string never equals (the caller falls back).
func (s *Scanner) StrEquals(lit string) (equal, ok bool) {
	if s.Peek() != '"' {
		return false, false
	}
	raw, ok := s.rawString()
	return ok && string(raw) == lit, ok
}

// Int reads an integer that fits an int; a null leaves *v as it is.
func (s *Scanner) Int(v *int) bool {
	if s.Null() {
		return true
	}
	s.ws()
	j := s.I
	if j < len(s.B) && s.B[j] == '-' {
		j++
	}
	digits := j
	for j < len(s.B) && '0' <= s.B[j] && s.B[j] <= '9' {
		j++
	}
	if j == digits || (s.B[digits] == '0' && j-digits > 1) {
		return false
	}
	if j < len(s.B) {
		switch s.B[j] {
		case '.', 'e', 'E':
			return false
		}
	}
	n, err := strconv.Atoi(string(s.B[s.I:j]))
	if err != nil {
		return false
	}
	*v = n
	s.I = j
	return true
}

// Raw skips a value and returns its bytes.
func (s *Scanner) Raw() ([]byte, bool) {
	s.ws()
	start := s.I
	if !s.Skip() {
		return nil, false
	}
	return s.B[start:s.I], true
}

// Valid reports whether b is one valid JSON value with only white space
// around it: json.Valid's answer. A document Skip reads whole (plain keys,
// at most MaxDepth deep; FuzzSkip checks it accepts nothing json.Valid
// refuses) is answered without encoding/json's byte-by-byte state machine,
// the long strings eight bytes at a time; anything else goes to json.Valid.
func Valid(b []byte) bool {
	s := Scanner{B: b}
	if s.Skip() && s.End() {
		return true
	}
	return json.Valid(b)
}

// Skip reads any value without keeping it, checking it is valid JSON.
func (s *Scanner) Skip() bool { return s.skip(0) }

func (s *Scanner) skip(depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch c := s.Peek(); {
	case c == '{':
		return s.Object(func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		return s.Array(func() bool { return s.skip(depth + 1) })
	case c == '"':
		_, ok := s.rawString()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

func (s *Scanner) lit(l string) bool {
	if bytes.HasPrefix(s.B[s.I:], []byte(l)) {
		s.I += len(l)
		return true
	}
	return false
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) number() bool {
	j := s.I
	if s.B[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(s.B) && '0' <= s.B[j] && s.B[j] <= '9' {
			j++
		}
		return j - k
	}
	first := j
	n := digits()
	if n == 0 || (n > 1 && s.B[first] == '0') {
		return false
	}
	if j < len(s.B) && s.B[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(s.B) && (s.B[j] == 'e' || s.B[j] == 'E') {
		j++
		if j < len(s.B) && (s.B[j] == '+' || s.B[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	s.I = j
	return true
}

// FoldsTo reports whether key matches one of names case-insensitively,
// which encoding/json accepts; callers use it to leave such keys to it.
func FoldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return true
		}
	}
	return false
}

// Bool reads true or false; a null leaves *v as it is.
func (s *Scanner) Bool(v *bool) bool {
	switch s.Peek() {
	case 't':
		if s.lit("true") {
			*v = true
			return true
		}
	case 'f':
		if s.lit("false") {
			*v = false
			return true
		}
	case 'n':
		return s.Null()
	}
	return false
}

// StrKnown is Str that reuses one of known instead of allocating when the
// string equals it (roles, types: a few values repeated many times).
func (s *Scanner) StrKnown(v *string, known ...string) bool {
	if s.Peek() == '"' {
		i := s.I
		raw, ok := s.rawString()
		if !ok {
			return false
		}
		for _, k := range known {
			if string(raw) == k {
				*v = k
				return true
			}
		}
		s.I = i
	}
	return s.Str(v)
}

// Fields remembers which of up to eight known keys an object has shown, so a
// fast path can refuse duplicates (encoding/json keeps the last one; the
// callers fall back to it instead of guessing).
type Fields uint8

// First reports whether the key with this bit is seen for the first time,
// and marks it seen.
func (f *Fields) First(bit Fields) bool {
	if *f&bit != 0 {
		return false
	}
	*f |= bit
	return true
}
