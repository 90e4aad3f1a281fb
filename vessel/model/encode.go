package model

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// estimate is the size of m's encoding when appendMessage writes it (a
// turn's history is encoded into one buffer sized by it).
func estimate(m *transcript.Message) int {
	n := len(`{"role":""}`) + len(m.Role)
	if len(m.Content) > 0 {
		n += len(`,"content":`) + len(m.Content)
	}
	if m.Name != "" {
		n += len(`,"name":""`) + len(m.Name)
	}
	if len(m.ToolCalls) > 0 {
		n += len(`,"tool_calls":[]`)
	}
	for _, tc := range m.ToolCalls {
		n += len(`{"id":"","type":"","function":{"name":"","arguments":""}},`) + len(tc.ID) + len(tc.Type) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	if m.ToolCallID != "" {
		n += len(`,"tool_call_id":""`) + len(m.ToolCallID)
	}
	n += len(m.Extra)
	for _, tc := range m.ToolCalls {
		n += len(tc.Extra)
	}
	return n
}

// appendMessage appends m's encoding, exactly as json.Marshal(m) writes
// it, to b when it can write it directly; otherwise it returns b unchanged
// and false (the caller uses json.Marshal). A turn encodes its whole
// history (1,000 messages in the load scenario) once, so the common case
// (plain strings, compact content) is written directly.
func appendMessage(b []byte, m *transcript.Message) ([]byte, bool) {
	if b == nil {
		b = make([]byte, 0, estimate(m))
	}
	ok := plainString(m.Role) && plainString(m.Name) && plainString(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		ok = ok && plainString(tc.ID) && plainString(tc.Type) && plainString(tc.Function.Name) && plainString(tc.Function.Arguments) &&
			plainExtra(tc.Extra)
	}
	ok = ok && plainExtra(m.Extra)
	if !ok || len(m.Content) > 0 && !compactContent(m.Content) {
		return b, false
	}
	b = append(b, `{"role":"`...)
	b = append(b, m.Role...)
	b = append(b, '"')
	if len(m.Content) > 0 {
		b = append(b, `,"content":`...)
		b = append(b, m.Content...)
	}
	if m.Name != "" {
		b = append(b, `,"name":"`...)
		b = append(b, m.Name...)
		b = append(b, '"')
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i, tc := range m.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":"`...)
			b = append(b, tc.ID...)
			b = append(b, `","type":"`...)
			b = append(b, tc.Type...)
			b = append(b, `","function":{"name":"`...)
			b = append(b, tc.Function.Name...)
			b = append(b, `","arguments":"`...)
			b = append(b, tc.Function.Arguments...)
			b = append(b, `"}`...)
			b = transcript.AppendExtra(b, tc.Extra)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":"`...)
		b = append(b, m.ToolCallID...)
		b = append(b, '"')
	}
	b = transcript.AppendExtra(b, m.Extra)
	return append(b, '}'), true
}

// plainExtra reports whether json.Marshal writes extra's members as they
// are: none, or a compact object.
func plainExtra(extra []byte) bool {
	return len(extra) == 0 || extra[0] == '{' && compactContent(extra)
}

// plainString reports whether encoding/json writes s as it is between
// quotes: valid UTF-8 without quotes, backslashes, control characters,
// the HTML characters it escapes, or U+2028 and U+2029.
func plainString(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	return ascii || utf8.ValidString(s) && !containsLineSep(s)
}

func containsLineSep(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == 0xE2 && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
			return true
		}
	}
	return false
}

// compactContent reports whether json.Marshal would copy raw unchanged:
// one valid JSON value with no white space between tokens and nothing its
// compaction escapes (HTML characters, U+2028, U+2029) inside strings.
func compactContent(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		if in {
			// Eight bytes at a time while none of them is one the loop
			// below stops at (a history's strings are long and mostly
			// plain).
			for i+8 <= len(raw) && contentPlain8(binary.LittleEndian.Uint64(raw[i:])) {
				i += 8
			}
			if i >= len(raw) {
				break
			}
		}
		c := raw[i]
		if in {
			switch {
			case c == '\\':
				i++
			case c == '"':
				in = false
			case c == '<', c == '>', c == '&':
				return false
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
				return false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	var s jsonscan.Scanner
	s.Reset(raw)
	return s.Skip() && s.End()
}

// contentPlain8 reports whether none of w's eight bytes is one
// compactContent looks at inside a string: '\\', '"', '<', '>', '&' or 0xE2
// (the lead byte of U+2028 and U+2029).
func contentPlain8(w uint64) bool {
	z := func(c byte) uint64 { return jsonscan.ZeroBytes(w ^ (uint64(c) * jsonscan.Ones)) }
	return z('\\')|z('"')|z('<')|z('>')|z('&')|z(0xE2) == 0
}
