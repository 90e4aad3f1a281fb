package a2acompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// JSON-RPC 2.0 error codes the envelope check answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeInvalidParams  = -32602
)

// Envelope is a JSON-RPC 2.0 request that passed ParseEnvelope.
type Envelope struct {
	Method string
	// ID is the id exactly as sent (a JSON string, number or null); nil when
	// the request has no id member, which makes it a notification.
	ID json.RawMessage
	// Params is the params object as sent, or {} when params was omitted.
	Params json.RawMessage
}

// Notification reports whether the request has no id.
func (e *Envelope) Notification() bool { return e.ID == nil }

// EnvelopeError is the JSON-RPC error a request is answered with. ID is the
// request's id when it could be read, else nil (answered as null).
type EnvelopeError struct {
	Code    int
	Message string
	ID      json.RawMessage
}

func (e *EnvelopeError) Error() string { return fmt.Sprintf("jsonrpc %d: %s", e.Code, e.Message) }

// ParseEnvelope checks body strictly against JSON-RPC 2.0 before anything
// decodes it:
//
//   - it must be exactly one JSON value with nothing after it (-32700),
//   - every string in it must be valid UTF-8 with no unpaired surrogate
//     escape, checked on the raw bytes, because Go's decoder silently
//     replaces both with U+FFFD (-32602 inside params, -32600 elsewhere),
//   - that value must be one request object, not a batch (-32600),
//   - with "jsonrpc": "2.0", a string "method", an "id" that is a string, a
//     number or null when present, and "params", when present, an object
//     (-32600, or -32602 for an array: A2A's methods take named params);
//     none of these members may appear twice.
//
// A notification (no "id") passes; the caller decides what to do with it.
// Members other than these four are ignored.
func ParseEnvelope(body []byte) (*Envelope, *EnvelopeError) {
	if !jsonscan.Valid(body) {
		return nil, &EnvelopeError{Code: CodeParseError, Message: "parse error: the body is not a single valid JSON value"}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch trimmed[0] {
	case '{':
	case '[':
		return nil, &EnvelopeError{Code: CodeInvalidRequest, Message: "invalid request: batch requests are not supported; send one request object per HTTP request"}
	default:
		return nil, &EnvelopeError{Code: CodeInvalidRequest, Message: "invalid request: the body must be a JSON-RPC request object"}
	}
	members, dup, err := splitObject(trimmed)
	if err != nil {
		// json.Valid accepted it, so this cannot happen; answer as a parse
		// error rather than trust a half-read request.
		return nil, &EnvelopeError{Code: CodeParseError, Message: "parse error: the request object could not be read"}
	}
	env := &Envelope{}
	var idErr *EnvelopeError
	if raw, ok := members["id"]; ok {
		switch raw[0] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if textErr := checkText(raw); textErr != "" {
				idErr = &EnvelopeError{Code: CodeInvalidRequest, Message: "invalid request: id " + textErr}
			} else {
				env.ID = raw
			}
		default:
			idErr = &EnvelopeError{Code: CodeInvalidRequest, Message: "invalid request: id must be a string, a number or null"}
		}
	}
	fail := func(code int, msg string) (*Envelope, *EnvelopeError) {
		return nil, &EnvelopeError{Code: code, Message: msg, ID: env.ID}
	}
	if idErr != nil {
		return nil, idErr
	}
	if dup != "" {
		return fail(CodeInvalidRequest, fmt.Sprintf("invalid request: member %q appears more than once", dup))
	}
	if raw, ok := members["jsonrpc"]; !ok || string(raw) != `"2.0"` {
		return fail(CodeInvalidRequest, `invalid request: "jsonrpc" must be the string "2.0"`)
	}
	raw, ok := members["method"]
	if !ok || raw[0] != '"' {
		return fail(CodeInvalidRequest, `invalid request: "method" must be a string`)
	}
	if textErr := checkText(raw); textErr != "" {
		return fail(CodeInvalidRequest, "invalid request: method "+textErr)
	}
	if err := json.Unmarshal(raw, &env.Method); err != nil || env.Method == "" {
		return fail(CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	params, hasParams := members["params"]
	if hasParams && params[0] != '{' && params[0] != '[' {
		return fail(CodeInvalidRequest, `invalid request: "params" must be an object when present`)
	}
	// The raw bytes must be valid text: params is the caller's content
	// (-32602); anything else (member names, other members) is the envelope.
	paramsText := ""
	if textErr := checkText(trimmed); textErr != "" {
		if paramsText = checkText(params); paramsText == "" {
			return fail(CodeInvalidRequest, "invalid request: the request "+textErr)
		}
	}
	if env.Notification() {
		env.Params = params
		return env, nil
	}
	if hasParams && params[0] == '[' {
		return fail(CodeInvalidParams, `invalid params: "params" must be an object of named parameters`)
	}
	if paramsText != "" {
		return fail(CodeInvalidParams, "invalid params: params "+paramsText)
	}
	if !hasParams {
		params = json.RawMessage(`{}`)
	}
	env.Params = params
	return env, nil
}

// splitObject returns the raw values of a JSON object's top-level members
// (sub-slices of obj, not copies) and the first member name seen twice. obj
// must be valid JSON (json.Valid) starting with '{': the scan then only
// needs to find where each value ends, in one pass.
func splitObject(obj []byte) (map[string]json.RawMessage, string, error) {
	members := map[string]json.RawMessage{}
	dup := ""
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] != '}' {
		end := skipString(obj, i)
		if end < 0 {
			return nil, "", fmt.Errorf("member name at byte %d: unterminated", i)
		}
		var key string
		if err := json.Unmarshal(obj[i:end], &key); err != nil {
			return nil, "", fmt.Errorf("member name at byte %d: %w", i, err)
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, "", fmt.Errorf("member %q: no colon", key)
		}
		i = skipSpace(obj, i+1)
		vend := skipValue(obj, i)
		if vend < 0 {
			return nil, "", fmt.Errorf("member %q: unterminated value", key)
		}
		if _, seen := members[key]; seen && dup == "" {
			dup = key
		}
		members[key] = json.RawMessage(obj[i:vend])
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	if i >= len(obj) {
		return nil, "", fmt.Errorf("object: unterminated")
	}
	return members, dup, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i], or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	// The next quote ends the string unless an odd run of backslashes comes
	// just before it (the last of them escapes it): what reading the
	// escapes pair by pair from the start gives, found with IndexByte.
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return -1
}

// skipValue returns the index just past the JSON value starting at b[i],
// or -1. b must be valid JSON.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[j])) {
			j++
		}
		return j
	}
}

// checkText reports why a fragment of valid JSON does not hold valid text:
// invalid UTF-8 bytes, or a \u escape that is an unpaired UTF-16 surrogate.
// It returns "" when the text is valid. In valid JSON a backslash occurs
// only inside a string, as an escape, so the escapes are found by a byte
// search rather than by tracking strings.
func checkText(b []byte) string {
	if !utf8.Valid(b) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return ""
		}
		i += j
		if i+1 >= len(b) || b[i+1] != 'u' {
			i += 2 // a one-character escape
			continue
		}
		r, ok := hex4(b, i+2)
		if !ok {
			return "holds a malformed \\u escape"
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := -1, false
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				lo, ok = hex4(b, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return "holds an unpaired UTF-16 surrogate escape"
			}
			i += 12
		case r >= 0xDC00 && r <= 0xDFFF:
			return "holds an unpaired UTF-16 surrogate escape"
		default:
			i += 6
		}
	}
	return ""
}

func hex4(b []byte, at int) (int, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
