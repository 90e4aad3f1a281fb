// Package transcript reads and checks the conversation history an
// application sends with a turn: an envelope {"version":1,"messages":[...]}
// of OpenAI chat messages. The same types carry the turn's new messages back.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MediaType is the media type of a transcript part and artifact.
const MediaType = "application/vnd.astralvessel.transcript+json"

// MaxMessages is the most messages a history may hold.
const MaxMessages = 2000

// SpareMessages is the room a parsed history's list usually has after its
// messages: a turn puts its own there without another copy of the list.
const SpareMessages = 8

// MaxToolCallID is the longest tool call id, in bytes, a history may hold;
// the model client cuts longer ids to it and the loop keeps renamed ids
// within it, so a turn's transcript is always a history the next accepts.
const MaxToolCallID = 256

// Envelope is the transcript's wire form.
type Envelope struct {
	Version  int       `json:"version"`
	Messages []Message `json:"messages"`
}

// Message is one OpenAI chat message.
type Message struct {
	Role string `json:"role"`
	// Content is a JSON string, null, or a list of content parts; it is kept
	// as sent so images and parts reach the model unchanged.
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	// Extra holds the message's other members as a JSON object, kept
	// opaque and written back after the ones above: a provider's
	// reasoning_content, reasoning or reasoning_details, which some
	// providers need sent back (see Extra's methods).
	Extra json.RawMessage `json:"-"`
}

// ToolCall is an assistant's request to run a tool.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
	// Extra holds the call's other members as a JSON object, sent back
	// unchanged (Gemini's extra_content with its thought_signature).
	Extra json.RawMessage `json:"-"`
}

// FunctionCall names the tool and carries its arguments as a JSON string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Text makes a string content value.
func Text(s string) json.RawMessage {
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return b
}

// TextOf returns the text of a content value: the string itself, or the
// text parts of a part list joined together.
func TextOf(c json.RawMessage) string {
	if len(c) == 0 || string(c) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []contentPart
	if json.Unmarshal(c, &parts) == nil {
		var b bytes.Buffer
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

type contentPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url,omitempty"`
}

// Error is a validation failure; its message is safe to show the caller.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func invalid(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// Parse decodes and validates an envelope from JSON. The messages' Content
// may be slices of b (a long history is then held once): b must not change
// while they are in use.
//
// A history over MaxMessages is refused for its length before anything
// else is checked, once its first MaxMessages+1 messages are read
// (CountMessages): what follows them is not read, so the refusal does not
// depend on it, and the front of the vessel, which counts the same way
// while the request is still undecoded, refuses the same histories.
func Parse(b []byte) (*Envelope, error) {
	if overCap(b) {
		return nil, ErrOverCap
	}
	if !utf8.Valid(b) {
		return nil, invalid("the history is not valid UTF-8")
	}
	env, err := decodeEnvelope(b)
	if err != nil {
		return nil, err
	}
	if err := env.Validate(); err != nil {
		return nil, err
	}
	for i := range env.Messages {
		if env.Messages[i].Role != "assistant" {
			// Only a model's own messages carry provider fields back; an
			// application's extra keys on its own messages would be refused
			// by strict providers.
			env.Messages[i].Extra = nil
		}
	}
	return env, nil
}

func decodeEnvelope(b []byte) (*Envelope, error) {
	var env Envelope
	if n, ok := scanEnvelope(b, &env); ok {
		if n > MaxMessages {
			// Refused as Validate would refuse the whole list (its version
			// first), without the list.
			return nil, checkHead(env.Version, n)
		}
		return &env, nil
	}
	env = Envelope{}
	if messagesNamed(b) > 1 {
		// encoding/json would keep the last list: which one is the
		// history is not the caller's to leave ambiguous.
		return nil, ErrMessagesTwice
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&env); err != nil {
		return nil, invalid("the history is not a valid transcript envelope: %s", jsonReason(err))
	}
	if dec.More() {
		return nil, invalid("the history has data after the envelope")
	}
	return &env, nil
}

// checkHead checks an envelope's number of messages, n, and its version:
// the length first, as Parse does.
func checkHead(version, n int) error {
	if n > MaxMessages {
		return ErrOverCap
	}
	if version != 1 {
		return invalid("the history's version must be 1, got %d", version)
	}
	return nil
}

// ErrMessagesTwice is the reason an envelope naming messages more than
// once is refused.
var ErrMessagesTwice error = invalid("the history names messages more than once")

// messagesNamed counts the members of the JSON object b whose key
// encoding/json would decode into Envelope.Messages: "messages" in any
// case, escaped or not. It stops at the first syntax error.
func messagesNamed(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return n
		}
		if k, _ := t.(string); strings.EqualFold(k, "messages") {
			n++
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return n
		}
	}
	return n
}

func jsonReason(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("field %q has the wrong type", te.Field)
		}
		return "a value has the wrong type"
	default:
		return "malformed JSON"
	}
}

// Validate checks the envelope's size, version and every message.
func (e *Envelope) Validate() error {
	if err := checkHead(e.Version, len(e.Messages)); err != nil {
		return err
	}
	pending := map[string]bool{} // tool call ids asked for and not yet answered
	for i := range e.Messages {
		if err := e.Messages[i].validate(i, pending); err != nil {
			return err
		}
	}
	return nil
}

func (m *Message) validate(i int, pending map[string]bool) error {
	if err := checkExtra(i, m); err != nil {
		return err
	}
	switch m.Role {
	case "system", "developer":
		return invalid("message %d: the history may not hold a %s message", i, m.Role)
	case "user":
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return invalid("message %d: a user message cannot carry tool calls", i)
		}
		if err := checkContent(i, m.Content, true); err != nil {
			return err
		}
	case "assistant":
		if m.ToolCallID != "" {
			return invalid("message %d: an assistant message cannot carry tool_call_id", i)
		}
		if err := checkContent(i, m.Content, false); err != nil {
			return err
		}
		if len(m.ToolCalls) == 0 && isEmpty(m.Content) {
			return invalid("message %d: an assistant message needs content or tool_calls", i)
		}
		clear(pending)
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || len(tc.ID) > MaxToolCallID {
				return invalid("message %d: tool call %d needs an id of 1 to %d characters", i, j, MaxToolCallID)
			}
			if tc.Type != "" && tc.Type != "function" {
				return invalid("message %d: tool call %d has type %q; only function is allowed", i, j, tc.Type)
			}
			if tc.Function.Name == "" {
				return invalid("message %d: tool call %d has no function name", i, j)
			}
			if pending[tc.ID] {
				return invalid("message %d: tool call id %q is used twice", i, tc.ID)
			}
			pending[tc.ID] = true
		}
	case "tool":
		if m.ToolCallID == "" {
			return invalid("message %d: a tool message needs tool_call_id", i)
		}
		if len(m.ToolCalls) > 0 {
			return invalid("message %d: a tool message cannot carry tool calls", i)
		}
		if !pending[m.ToolCallID] {
			return invalid("message %d: tool_call_id %q does not answer a tool call of the preceding assistant message", i, m.ToolCallID)
		}
		delete(pending, m.ToolCallID)
		if err := checkContent(i, m.Content, false); err != nil {
			return err
		}
	case "":
		return invalid("message %d has no role", i)
	default:
		return invalid("message %d has role %q; only user, assistant and tool are allowed", i, m.Role)
	}
	return nil
}

func isEmpty(c json.RawMessage) bool {
	// The comparisons of a converted []byte allocate nothing; a string
	// variable holding it would be a copy per message.
	c = bytes.TrimSpace(c)
	return len(c) == 0 || string(c) == "null" || string(c) == `""` || string(c) == "[]"
}

// checkContent accepts a string, null (unless required) or a list of text
// and image_url parts.
func checkContent(i int, c json.RawMessage, required bool) error {
	c = bytes.TrimSpace(c)
	if len(c) == 0 || string(c) == "null" {
		if required {
			return invalid("message %d has no content", i)
		}
		return nil
	}
	switch c[0] {
	case '"':
		return nil // the decoder already checked it is a valid string
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(c, &parts); err != nil {
			return invalid("message %d: content parts are malformed", i)
		}
		for j, p := range parts {
			switch p.Type {
			case "text":
			case "image_url":
				if len(p.ImageURL) == 0 {
					return invalid("message %d: content part %d has no image_url", i, j)
				}
			default:
				return invalid("message %d: content part %d has type %q; only text and image_url are allowed", i, j, p.Type)
			}
		}
		return nil
	default:
		return invalid("message %d: content must be a string or a list of parts", i)
	}
}

// Marshal encodes an envelope of messages.
func Marshal(msgs []Message) ([]byte, error) {
	b, err := json.Marshal(Envelope{Version: 1, Messages: msgs})
	if err != nil {
		return nil, fmt.Errorf("encode transcript: %w", err)
	}
	return b, nil
}
