package client

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Media types of the AstralVessel A2A contract.
const (
	TranscriptMediaType = "application/vnd.astralvessel.transcript+json"
	PrimitivesMediaType = "application/vnd.astral.primitives+json"
	MarkdownMediaType   = "text/markdown"
)

// Message is one OpenAI chat message (user, assistant with tool_calls, tool
// with tool_call_id). It is kept as a map so fields the client does not know
// survive a round trip back to the vessel unchanged.
type Message map[string]any

// UserMessage returns a user message with text content.
func UserMessage(text string) Message { return Message{"role": "user", "content": text} }

// AssistantMessage returns an assistant message with text content.
func AssistantMessage(text string) Message { return Message{"role": "assistant", "content": text} }

// Role is the message's role ("user", "assistant", "tool").
func (m Message) Role() string { s, _ := m["role"].(string); return s }

// Text is the message's text content: the string content, or the text parts
// of an array content joined.
func (m Message) Text() string {
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				if t, ok := pm["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}

// Envelope is the transcript's wire form.
type Envelope struct {
	Version  int       `json:"version"`
	Messages []Message `json:"messages"`
}

// EncodeEnvelope returns the JSON of a version-1 envelope holding msgs.
func EncodeEnvelope(msgs []Message) ([]byte, error) {
	if msgs == nil {
		msgs = []Message{}
	}
	b, err := json.Marshal(Envelope{Version: 1, Messages: msgs})
	if err != nil {
		return nil, fmt.Errorf("encode transcript envelope: %w", err)
	}
	return b, nil
}

// DecodeEnvelope parses an envelope's JSON. A bare JSON array of messages is
// accepted too. Whole floats in the messages become ints.
func DecodeEnvelope(b []byte) ([]Message, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("decode transcript envelope: %w", err)
	}
	return envelopeMessages(v)
}

// envelopeMessages extracts the messages of an envelope given as a decoded
// JSON value (a data part or parsed raw bytes).
func envelopeMessages(v any) ([]Message, error) {
	var list []any
	switch t := v.(type) {
	case map[string]any:
		if ver, ok := t["version"]; ok {
			if f, ok := ver.(float64); !ok || f != 1 {
				if i, ok := ver.(int); !ok || i != 1 {
					return nil, fmt.Errorf("transcript envelope: unsupported version %v", ver)
				}
			}
		}
		raw, ok := t["messages"]
		if !ok {
			return nil, fmt.Errorf("transcript envelope: no messages field")
		}
		if raw == nil {
			return nil, nil
		}
		l, ok := raw.([]any)
		if !ok {
			return nil, fmt.Errorf("transcript envelope: messages is %T, not a list", raw)
		}
		list = l
	case []any:
		list = t
	default:
		return nil, fmt.Errorf("transcript envelope: unexpected %T", v)
	}
	out := make([]Message, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("transcript envelope: message %d is %T, not an object", i, e)
		}
		out = append(out, Message(Normalize(m).(map[string]any)))
	}
	return out, nil
}

// Normalize returns v with every whole float64 (as JSON decoding into any
// produces) turned back into an int, recursively through maps and lists.
// Data parts travel through a protobuf Struct on some servers, so an integer
// sent as 3 may come back as 3.0.
func Normalize(v any) any {
	switch t := v.(type) {
	case float64:
		if t == math.Trunc(t) && math.Abs(t) <= 1<<53 {
			return int(t)
		}
		return t
	case map[string]any:
		for k, e := range t {
			t[k] = Normalize(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = Normalize(e)
		}
		return t
	}
	return v
}
