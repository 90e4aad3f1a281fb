package transcript

import (
	"bytes"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// scanEnvelope reads the usual shape of an envelope without encoding/json's
// reflection: a turn's history can hold thousands of messages. It reports
// false for anything it does not read exactly as json.Decoder would
// (duplicate or case-folded keys, wrong types, trailing data), and Parse
// then decodes the document the usual way, with its error messages.
//
// The messages' contents are slices of b, not copies (see Parse).
//
// It returns the number of messages read. A list over MaxMessages is read
// to its end, so that the document is checked as before and the count is
// exact, but env keeps only its first MaxMessages+1 messages: the rest
// are read into one scratch message and dropped, since such a history is
// refused by its count (a 10,000-message history is no longer held whole
// to be refused).
func scanEnvelope(b []byte, env *Envelope) (n int, ok bool) {
	var s jsonscan.Scanner
	s.Reset(b)
	var seen jsonscan.Fields
	var scratch Message
	ok = s.Object(func(key []byte) bool {
		switch string(key) {
		case "version":
			return seen.First(1) && s.Int(&env.Version)
		case "messages":
			if !seen.First(2) {
				return false
			}
			if s.Null() {
				env.Messages, n = nil, 0
				return true
			}
			env.Messages, n = make([]Message, 0, messagesIn(b)+SpareMessages), 0
			return s.Array(func() bool {
				n++
				if n > MaxMessages+1 {
					scratch = Message{Extra: scratch.Extra[:0]}
					return scanMessage(&s, &scratch)
				}
				env.Messages = append(env.Messages, Message{})
				return scanMessage(&s, &env.Messages[len(env.Messages)-1])
			})
		}
		return !jsonscan.FoldsTo(key, "version", "messages") && s.Skip()
	})
	return n, ok && s.End()
}

// messagesIn is the size to give the list of b's messages so that it is
// allocated once: a message of the usual shape has a "role" key, and the
// count is more only where the word is also a value or another key. It is
// bounded, so that a hostile document cannot make it large: a list longer
// than MaxMessages is refused anyway, and a message with a role takes at
// least 12 bytes ({"role":""} and a comma).
//
// It stops counting at that bound: a history over the cap (10,000 messages,
// say) is not searched to its end for a size the list never reaches.
func messagesIn(b []byte) int {
	most := min(MaxMessages+1, len(b)/12+1)
	n := 0
	for n < most {
		i := bytes.Index(b, []byte(`"role"`))
		if i < 0 {
			break
		}
		n++
		b = b[i+len(`"role"`):]
	}
	return n
}

func scanMessage(s *jsonscan.Scanner, m *Message) bool {
	var seen jsonscan.Fields
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "role":
			return seen.First(1) && s.StrKnown(&m.Role, "user", "assistant", "tool")
		case "content":
			if !seen.First(2) {
				return false
			}
			raw, ok := s.Raw()
			if !ok {
				return false
			}
			m.Content = raw[:len(raw):len(raw)] // an append copies it, never writes into b
			return true
		case "name":
			return seen.First(4) && s.Str(&m.Name)
		case "tool_call_id":
			return seen.First(8) && s.Str(&m.ToolCallID)
		case "tool_calls":
			if !seen.First(16) {
				return false
			}
			if s.Null() {
				m.ToolCalls = nil
				return true
			}
			m.ToolCalls = make([]ToolCall, 0, 1)
			return s.Array(func() bool {
				m.ToolCalls = append(m.ToolCalls, ToolCall{})
				return scanToolCall(s, &m.ToolCalls[len(m.ToolCalls)-1])
			})
		}
		if jsonscan.FoldsTo(key, "role", "content", "name", "tool_call_id", "tool_calls") {
			return false
		}
		raw, ok := s.Raw()
		m.Extra = addMember(m.Extra, key, raw)
		return ok
	})
}

func scanToolCall(s *jsonscan.Scanner, tc *ToolCall) bool {
	var seen jsonscan.Fields
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return seen.First(1) && s.Str(&tc.ID)
		case "type":
			return seen.First(2) && s.StrKnown(&tc.Type, "function")
		case "function":
			if !seen.First(4) {
				return false
			}
			if s.Null() {
				return true
			}
			var fseen jsonscan.Fields
			return s.Object(func(k []byte) bool {
				switch string(k) {
				case "name":
					return fseen.First(1) && s.Str(&tc.Function.Name)
				case "arguments":
					return fseen.First(2) && s.Str(&tc.Function.Arguments)
				}
				return !jsonscan.FoldsTo(k, "name", "arguments") && s.Skip()
			})
		}
		if jsonscan.FoldsTo(key, "id", "type", "function") {
			return false
		}
		raw, ok := s.Raw()
		tc.Extra = addMember(tc.Extra, key, raw)
		return ok
	})
}
