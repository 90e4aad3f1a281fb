package jwt

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// The strict reading below runs before jwx sees a token. jwx (like
// encoding/json) is lenient where a token must have exactly one meaning: it
// lets the last of two equal member names win, turns invalid UTF-8 and lone
// surrogates into U+FFFD, reads "exp": "1700000000" as a date, and decodes
// padded or standard-alphabet base64. Each leniency gives one token several
// readings or spellings, so each is refused here.

// strictToken is a compact JWS whose three segments and two JSON documents
// passed the strict reading.
type strictToken struct {
	alg, kid string
	claims   map[string][]byte // top-level claim name -> its raw JSON value
}

// claimKinds are the JSON types allowed for the claims the vessel or jwx
// reads. Any other claim may hold any valid JSON value.
var claimKinds = map[string]string{
	"iss": "string", "sub": "string", "azp": "string", "jti": "string", "scope": "string",
	"aud": "string or list", "scp": "string or list", "vessel_approve": "string or list",
	"exp": "date", "nbf": "date", "iat": "date",
}

// base64URL is the only accepted segment encoding: unpadded, URL alphabet,
// zero trailing bits.
var base64URL = base64.RawURLEncoding.Strict()

// maxNumericDate bounds exp/nbf/iat (year 5138): anything larger is an
// attempt to overflow, not a date.
const maxNumericDate = 1e11

// readStrict checks size, shape, encoding and JSON of a token. It looks at
// no key; its errors are refusal reasons for the log.
func readStrict(token string, maxBytes int) (*strictToken, error) {
	if len(token) > maxBytes {
		return nil, fmt.Errorf("token is larger than %d bytes", maxBytes)
	}
	segments := strings.Split(token, ".")
	if len(segments) != 3 {
		return nil, fmt.Errorf("not a compact JWS: want 3 dot-separated segments, got %d", len(segments))
	}
	var decoded [3][]byte
	for i, name := range []string{"header", "payload", "signature"} {
		b, err := decodeSegment(segments[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		decoded[i] = b
	}
	header, err := readObject(decoded[0])
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	t := &strictToken{}
	for name, raw := range header {
		switch name {
		case "crit", "b64":
			// Neither is supported: refusing is what RFC 7515 asks for crit,
			// and b64:false would change what the signature covers.
			return nil, fmt.Errorf("header uses the %q extension, which is not supported", name)
		case "alg", "kid":
			s, ok := stringValue(raw)
			if !ok {
				return nil, fmt.Errorf("header %q is not a string", name)
			}
			if name == "alg" {
				t.alg = s
			} else {
				t.kid = s
			}
		}
	}
	if _, ok := header["alg"]; !ok {
		return nil, fmt.Errorf("header has no alg")
	}
	if t.claims, err = readObject(decoded[1]); err != nil {
		return nil, fmt.Errorf("claims: %w", err)
	}
	for name, kind := range claimKinds {
		raw, ok := t.claims[name]
		if !ok {
			continue
		}
		if err := checkKind(raw, kind); err != nil {
			return nil, fmt.Errorf("claim %q: %w", name, err)
		}
	}
	if raw, ok := t.claims["exp"]; ok {
		// jwx treats an exp of 0 (or below one second) as absent.
		if f, _ := strconv.ParseFloat(string(raw), 64); f < 1 {
			return nil, fmt.Errorf("claim \"exp\" is before 1970-01-01T00:00:01Z")
		}
	}
	return t, nil
}

// decodeSegment decodes unpadded base64url, refusing every other spelling:
// '=', '+', '/', line breaks (which Go's decoder skips) and non-zero
// trailing bits, so each byte string has exactly one accepted encoding.
func decodeSegment(seg string) ([]byte, error) {
	if seg == "" {
		return nil, fmt.Errorf("empty segment")
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return nil, fmt.Errorf("byte %q at %d is not in the unpadded base64url alphabet", c, i)
		}
	}
	b, err := base64URL.DecodeString(seg)
	if err != nil {
		return nil, fmt.Errorf("not canonical base64url: %w", err)
	}
	return b, nil
}

// readObject reads one JSON object strictly and returns its members' raw
// values. Refused: invalid UTF-8 anywhere, \u escapes of lone surrogates,
// a member name twice in any object (compared byte for byte), member names
// written with escapes (so a name has one spelling only), nesting deeper
// than jsonscan.MaxDepth, and anything after the object.
func readObject(doc []byte) (map[string][]byte, error) {
	if !utf8.Valid(doc) {
		return nil, fmt.Errorf("not valid UTF-8")
	}
	r := &strictReader{}
	r.s.Reset(doc)
	if r.s.Peek() != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	members := map[string][]byte{}
	ok := r.s.Object(func(name []byte) bool {
		if _, dup := members[string(name)]; dup {
			r.fail("member %q appears twice", truncate(string(name), 40))
			return false
		}
		start := r.position()
		if !r.value(1) {
			return false
		}
		members[string(name)] = doc[start:r.s.I]
		return true
	})
	if !ok {
		return nil, r.failure()
	}
	if !r.s.End() {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return members, nil
}

// strictReader walks a document with jsonscan, remembering why it stopped.
type strictReader struct {
	s   jsonscan.Scanner
	err error
}

func (r *strictReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *strictReader) failure() error {
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("not valid JSON, or a member name written with escapes, near byte %d", r.s.I)
}

// position is where the next value starts, after white space.
func (r *strictReader) position() int {
	r.s.Peek()
	return r.s.I
}

func (r *strictReader) value(depth int) bool {
	if depth > jsonscan.MaxDepth {
		r.fail("nested deeper than %d", jsonscan.MaxDepth)
		return false
	}
	switch r.s.Peek() {
	case '{':
		seen := map[string]bool{}
		return r.s.Object(func(name []byte) bool {
			if seen[string(name)] {
				r.fail("member %q appears twice", truncate(string(name), 40))
				return false
			}
			seen[string(name)] = true
			return r.value(depth + 1)
		})
	case '[':
		return r.s.Array(func() bool { return r.value(depth + 1) })
	case '"':
		raw, ok := r.s.Raw()
		if !ok {
			return false
		}
		if err := checkEscapes(raw); err != nil {
			r.fail("%v", err)
			return false
		}
		return true
	default:
		return r.s.Skip()
	}
}

// checkEscapes refuses \u escapes that encode a lone surrogate, which no
// UTF-8 string can hold (encoding/json would turn them into U+FFFD). raw is
// a syntactically valid JSON string token, quotes included.
func checkEscapes(raw []byte) error {
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		i++
		if body[i] != 'u' {
			continue
		}
		r := hex4(body[i+1 : i+5])
		i += 4
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return fmt.Errorf("string has a lone low surrogate \\u%04x", r)
		case 0xD800 <= r && r <= 0xDBFF:
			// jsonscan checked that a \u is followed by four hex digits.
			if i+2 >= len(body) || body[i+1] != '\\' || body[i+2] != 'u' {
				return fmt.Errorf("string has a lone high surrogate \\u%04x", r)
			}
			if low := hex4(body[i+3 : i+7]); low < 0xDC00 || low > 0xDFFF {
				return fmt.Errorf("string has a lone high surrogate \\u%04x", r)
			}
			i += 6
		}
	}
	return nil
}

// hex4 reads four hex digits (already checked by jsonscan).
func hex4(b []byte) rune {
	n, _ := strconv.ParseUint(string(b), 16, 32)
	return rune(n)
}

// checkKind checks a claim's raw JSON value against its allowed type.
func checkKind(raw []byte, kind string) error {
	switch kind {
	case "string":
		if raw[0] != '"' {
			return fmt.Errorf("want a string")
		}
	case "string or list":
		if raw[0] == '"' {
			return nil
		}
		var list []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
			return fmt.Errorf("want a string or a list of strings")
		}
		for _, e := range list {
			if len(e) == 0 || e[0] != '"' {
				return fmt.Errorf("want a string or a list of strings")
			}
		}
	case "date":
		// A JSON number only: jwx would also read "1700000000" or an
		// RFC 3339 string as a date.
		if c := raw[0]; c != '-' && (c < '0' || c > '9') {
			return fmt.Errorf("want a NumericDate (a JSON number)")
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f < 0 || f > maxNumericDate {
			return fmt.Errorf("NumericDate %s is out of range", truncate(string(raw), 40))
		}
	}
	return nil
}

// stringValue decodes a raw JSON string token.
func stringValue(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}
