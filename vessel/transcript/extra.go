package transcript

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// MaxExtraBytes bounds a message's Extra together with its tool calls'
// (the vessel keeps at most max_answer_bytes of a model's reasoning, 1 MiB
// by default and 4 MiB at most, under all the names it came under
// together, which may double in size as a JSON string, beside 1 MiB of
// other provider fields).
const MaxExtraBytes = 8 << 20

// knownMessageKeys and knownCallKeys are the members the types read
// themselves; every other member goes to Extra.
var (
	knownMessageKeys = []string{"role", "content", "name", "tool_calls", "tool_call_id"}
	knownCallKeys    = []string{"id", "type", "function"}
)

// AppendExtra appends the members of extra, a JSON object, to b as more
// members of the object b is writing: ,"k":v... Nothing is appended for an
// empty or malformed extra.
func AppendExtra(b []byte, extra json.RawMessage) []byte {
	inner := extraMembers(extra)
	if len(inner) == 0 {
		return b
	}
	b = append(b, ',')
	return append(b, inner...)
}

// extraMembers is the text between an object's braces, or nil.
func extraMembers(extra json.RawMessage) []byte {
	e := bytes.TrimSpace(extra)
	if len(e) < 2 || e[0] != '{' || e[len(e)-1] != '}' {
		return nil
	}
	return bytes.TrimSpace(e[1 : len(e)-1])
}

// splice writes extra's members into b, one encoded object.
func splice(b []byte, extra json.RawMessage) []byte {
	if len(extraMembers(extra)) == 0 || len(b) < 2 {
		return b
	}
	out := make([]byte, 0, len(b)+len(extra))
	out = append(out, b[:len(b)-1]...)
	out = AppendExtra(out, extra)
	return append(out, '}')
}

type messageFields Message // without the methods

// MarshalJSON writes the message with its Extra members after the others.
func (m Message) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(messageFields(m))
	if err != nil {
		return nil, err
	}
	return splice(b, m.Extra), nil
}

// UnmarshalJSON reads the message, keeping unknown members in Extra.
func (m *Message) UnmarshalJSON(b []byte) error {
	var f messageFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	extra, err := unknownMembers(b, knownMessageKeys)
	if err != nil {
		return err
	}
	f.Extra = extra
	*m = Message(f)
	return nil
}

type callFields ToolCall

// MarshalJSON writes the call with its Extra members after the others.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(callFields(c))
	if err != nil {
		return nil, err
	}
	return splice(b, c.Extra), nil
}

// UnmarshalJSON reads the call, keeping unknown members in Extra.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var f callFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	extra, err := unknownMembers(b, knownCallKeys)
	if err != nil {
		return err
	}
	f.Extra = extra
	*c = ToolCall(f)
	return nil
}

// unknownMembers is b's members whose keys are none of known (compared as
// encoding/json matches them: case-insensitively), as an object in key
// order, or nil.
func unknownMembers(b []byte, known []string) (json.RawMessage, error) {
	// In document order when the scanner reads the object (plain keys).
	var s jsonscan.Scanner
	s.Reset(b)
	var extra json.RawMessage
	if s.Object(func(key []byte) bool {
		if jsonscan.FoldsTo(key, known...) {
			return s.Skip()
		}
		raw, ok := s.Raw()
		extra = addMember(extra, key, raw)
		return ok
	}) && s.End() {
		return extra, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil || len(all) == 0 {
		return nil, nil // not an object: the typed decoding said why, if anything
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		if !slices.ContainsFunc(known, func(n string) bool { return bytes.EqualFold([]byte(k), []byte(n)) }) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	slices.Sort(keys)
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, all[k]...)
	}
	return append(out, '}'), nil
}

// addMember appends "key":raw to an Extra object being built.
func addMember(extra json.RawMessage, key, raw []byte) json.RawMessage {
	if len(extra) == 0 {
		extra = append(extra, '{')
	} else {
		extra[len(extra)-1] = ','
	}
	extra = append(extra, '"')
	extra = append(extra, key...)
	extra = append(extra, '"', ':')
	extra = append(extra, raw...)
	return append(extra, '}')
}

// checkExtra bounds an assistant message's opaque members.
func checkExtra(i int, m *Message) error {
	n := len(m.Extra)
	for _, tc := range m.ToolCalls {
		n += len(tc.Extra)
	}
	if n > MaxExtraBytes {
		return invalid("message %d: its provider fields hold %d bytes; at most %d are allowed", i, n, MaxExtraBytes)
	}
	return nil
}
