package model

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// chunk is one streamed chat-completion chunk, reduced to what a step uses.
type chunk struct {
	// Object is "error" in older vLLM's error chunks (no error wrapper).
	Object  string          `json:"object"`
	Choices []choice        `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Error   json.RawMessage `json:"error"` // an object or a string, by provider
	XGroq   *struct {
		Usage *Usage `json:"usage"`
	} `json:"x_groq"` // Groq puts the usage here
}

// failed reports whether the chunk is an error, in any shape providers use.
func (c *chunk) failed() bool {
	return c.Object == "error" || len(c.Error) > 0 && string(c.Error) != "null"
}

// usage is the chunk's token count, wherever the provider put it.
func (c *chunk) usage() *Usage {
	if c.Usage != nil {
		return c.Usage
	}
	if c.XGroq != nil {
		return c.XGroq.Usage
	}
	return nil
}

type choice struct {
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// member is one member of an object the reader does not know, kept as
// sent: its key (plain, no escapes) and its value. Both point into the
// stream line and are only valid until the next is read.
type member struct {
	key, raw []byte
}

type delta struct {
	Content          string
	ReasoningContent string
	Reasoning        string
	Refusal          string
	// Thinking is the text of Mistral's thinking parts (content sent as a
	// list of parts): shown as reasoning, not sent back.
	Thinking  string
	ToolCalls []toolCallDelta
	// Extra are the members of no field above (nor role, function_call,
	// annotations, audio, nor the profile's Drop): provider fields carried
	// back opaquely.
	Extra []member
}

// UnmarshalJSON reads a delta as the chunk scanner does, but dropping no
// member: encoding/json gives it no profile, so whoever unmarshals a
// delta applies the profile's Drop after (dropMembers); a delta the
// scanner cannot read (escaped or case-folded keys) is read by
// encoding/json into the named fields, without Extra.
func (d *delta) UnmarshalJSON(b []byte) error {
	var s jsonscan.Scanner
	s.Reset(b)
	if scanDelta(&s, d, s.Str, nil) && s.End() {
		return nil
	}
	var v struct {
		Content          json.RawMessage `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		Reasoning        string          `json:"reasoning"`
		Refusal          string          `json:"refusal"`
		ToolCalls        []toolCallDelta `json:"tool_calls"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*d = delta{ReasoningContent: v.ReasoningContent, Reasoning: v.Reasoning,
		Refusal: v.Refusal, ToolCalls: v.ToolCalls}
	if len(v.Content) > 0 {
		s.Reset(v.Content)
		if !scanContent(&s, d, s.Str) || !s.End() {
			return &json.UnmarshalTypeError{Value: "content", Type: reflect.TypeFor[string](), Field: "content"}
		}
	}
	return nil
}

// dropMembers removes the Extra members a profile's Drop names, what
// scanDelta skips when given the list. Keys are compared regardless of
// case: scanDelta leaves a delta with a case-folded Drop key to
// encoding/json, which matches keys that way.
func (d *delta) dropMembers(drop []string) {
	d.Extra = slices.DeleteFunc(d.Extra, func(m member) bool {
		return slices.ContainsFunc(drop, func(x string) bool { return strings.EqualFold(string(m.key), x) })
	})
}

// scanContent reads content: a string (through str), or a list of parts.
func scanContent(s *jsonscan.Scanner, d *delta, str func(*string) bool) bool {
	if s.Peek() != '[' {
		return str(&d.Content)
	}
	return scanParts(s, d)
}

// scanParts reads content sent as a list of parts (Mistral's thinking
// models): text parts are the answer, thinking parts reasoning; a part of
// another type is skipped.
func scanParts(s *jsonscan.Scanner, d *delta) bool {
	return s.Array(func() bool {
		var typ, text, thinking string
		ok := s.Object(func(k []byte) bool {
			switch string(k) {
			case "type":
				return s.Str(&typ)
			case "text":
				return s.Str(&text)
			case "thinking":
				return scanThinking(s, &thinking)
			}
			return !jsonscan.FoldsTo(k, "type", "text", "thinking") && s.Skip()
		})
		switch typ {
		case "text":
			d.Content += text
		case "thinking":
			d.Thinking += thinking
		}
		return ok
	})
}

// scanThinking reads a thinking part's value: a string, or a list of
// text parts.
func scanThinking(s *jsonscan.Scanner, v *string) bool {
	if s.Peek() != '[' {
		return s.Str(v)
	}
	return s.Array(func() bool {
		var t string
		ok := s.Object(func(k []byte) bool {
			if string(k) == "text" {
				return s.Str(&t)
			}
			return !jsonscan.FoldsTo(k, "text") && s.Skip()
		})
		*v += t
		return ok
	})
}

// scanArguments reads a call's arguments: a string, or (as some servers
// send them) a JSON value, kept as its compact encoding.
func scanArguments(s *jsonscan.Scanner, v *string) bool {
	if c := s.Peek(); c != '{' && c != '[' {
		return s.Str(v)
	}
	raw, ok := s.Raw()
	if !ok {
		return false
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return false
	}
	*v = b.String()
	return true
}

// scanDelta reads a delta object; content reads the content string; the
// members named in drop are skipped.
func scanDelta(s *jsonscan.Scanner, d *delta, content func(*string) bool, drop []string) bool {
	if s.Null() {
		return true
	}
	return s.Object(func(k []byte) bool {
		switch string(k) {
		case "content":
			return scanContent(s, d, content)
		case "reasoning_content":
			return s.Str(&d.ReasoningContent)
		case "reasoning":
			return s.Str(&d.Reasoning)
		case "refusal":
			return s.Str(&d.Refusal)
		case "role", "function_call", "annotations", "audio":
			// OpenAI's own, not accepted back as sent.
			return s.Skip()
		case "tool_calls":
			d.ToolCalls = d.ToolCalls[:0]
			if s.Null() {
				d.ToolCalls = nil
				return true
			}
			return s.Array(func() bool {
				d.ToolCalls = append(d.ToolCalls, toolCallDelta{})
				return scanToolCall(s, &d.ToolCalls[len(d.ToolCalls)-1])
			})
		}
		if jsonscan.FoldsTo(k, "content", "reasoning_content", "reasoning", "refusal", "role", "function_call", "annotations", "audio", "tool_calls") {
			return false
		}
		// The profile's members that are no provider field (a server's own
		// numbering: Mistral's repeated index, Together's token_id).
		for _, x := range drop {
			if string(k) == x {
				return s.Skip()
			}
		}
		if jsonscan.FoldsTo(k, drop...) {
			return false
		}
		raw, ok := s.Raw()
		if ok && !emptyValue(raw) {
			d.Extra = append(d.Extra, member{key: k, raw: raw})
		}
		return ok
	})
}

// emptyValue: null and "" say nothing to send back.
func emptyValue(raw []byte) bool { return string(raw) == "null" || string(raw) == `""` }

type toolCallDelta struct {
	// Index orders a call's pieces; nil when the provider sends none
	// (Gemini): the pieces are then keyed by id.
	Index    *int
	ID       string
	Type     string
	Function struct {
		Name      string
		Arguments string
	}
	Extra []member // Gemini's extra_content, and any other per-call field
}

// UnmarshalJSON reads a tool call delta as the scanner does, or by
// encoding/json without Extra.
func (tc *toolCallDelta) UnmarshalJSON(b []byte) error {
	var s jsonscan.Scanner
	s.Reset(b)
	if scanToolCall(&s, tc) && s.End() {
		return nil
	}
	var v struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*tc = toolCallDelta{Index: v.Index, ID: v.ID, Type: v.Type}
	tc.Function.Name = v.Function.Name
	if len(v.Function.Arguments) > 0 {
		s.Reset(v.Function.Arguments)
		if !scanArguments(&s, &tc.Function.Arguments) || !s.End() {
			return &json.UnmarshalTypeError{Value: "arguments", Type: reflect.TypeFor[string](), Field: "function.arguments"}
		}
	}
	return nil
}

func scanToolCall(s *jsonscan.Scanner, tc *toolCallDelta) bool {
	return s.Object(func(k []byte) bool {
		switch string(k) {
		case "index":
			if s.Null() {
				tc.Index = nil
				return true
			}
			var i int
			if !s.Int(&i) {
				return false
			}
			tc.Index = &i
			return true
		case "id":
			return s.Str(&tc.ID)
		case "type":
			return s.Str(&tc.Type)
		case "function":
			if s.Null() {
				return true
			}
			return s.Object(func(fk []byte) bool {
				switch string(fk) {
				case "name":
					return s.Str(&tc.Function.Name)
				case "arguments":
					return scanArguments(s, &tc.Function.Arguments)
				}
				return !jsonscan.FoldsTo(fk, "name", "arguments") && s.Skip()
			})
		}
		if jsonscan.FoldsTo(k, "index", "id", "type", "function") {
			return false
		}
		raw, ok := s.Raw()
		if ok && !emptyValue(raw) {
			tc.Extra = append(tc.Extra, member{key: k, raw: raw})
		}
		return ok
	})
}

// chunkDecoder decodes chunks. A stream has one chunk per token, so the
// common shape is read by a small scanner that only looks at the members
// above and skips the rest (id, model, created, ...) without building
// them; anything the scanner is not sure about (escapes aside, which it
// hands to encoding/json one string at a time) goes to json.Unmarshal, so
// the result is always what json.Unmarshal gives.
type chunkDecoder struct {
	drop   []string // the profile's Drop
	ch     chunk
	usage  Usage
	finish [4]string // finish reasons, pointed to by ch.Choices
	s      jsonscan.Scanner

	// A provider sends every token in the same envelope (id, model,
	// created, index, finish_reason) around a new content string. When the
	// last chunk the scanner read set exactly one content, and from a string,
	// pre and post are its bytes before and after that string, and ch is
	// still its decoding: a chunk that is pre, one string and post differs
	// from it only in that string, so only the string is read (again).
	pre, post []byte
	tpl       bool // pre, post and ch make a template
	tplChoice int  // the choice whose content the string is

	// What the scan of the current chunk saw of contents: how many, the
	// last one's choice and the bounds of its string (start -1: a null).
	contents                 int
	contentChoice            int
	contentStart, contentEnd int
}

// decode parses data; the chunk is valid until the next call.
func (d *chunkDecoder) decode(data []byte) (*chunk, error) {
	if d.again(data) {
		return &d.ch, nil
	}
	d.tpl = false
	if d.fast(data) {
		d.keepTemplate(data)
		return &d.ch, nil
	}
	d.ch = chunk{}
	if err := json.Unmarshal(data, &d.ch); err != nil {
		return nil, err
	}
	for i := range d.ch.Choices {
		d.ch.Choices[i].Delta.dropMembers(d.drop)
	}
	return &d.ch, nil
}

// again reads data as the last chunk with another content string, if it is
// one. The bytes around the string are the template's, so they are valid
// and mean what they meant; the string must be exactly one string token.
func (d *chunkDecoder) again(data []byte) bool {
	if !d.tpl || len(data) < len(d.pre)+len(d.post)+2 ||
		!bytes.HasPrefix(data, d.pre) || !bytes.HasSuffix(data, d.post) {
		return false
	}
	mid := data[len(d.pre) : len(data)-len(d.post)]
	if mid[0] != '"' {
		return false
	}
	d.s.Reset(mid)
	defer d.s.Reset(nil)
	// On a miss fast reads data afresh, so the content may be set here.
	return d.s.Str(&d.ch.Choices[d.tplChoice].Delta.Content) && d.s.I == len(mid)
}

// keepTemplate records data as the template when the scan that just read
// it set one content, from a string.
func (d *chunkDecoder) keepTemplate(data []byte) {
	if d.contents != 1 || d.contentStart < 0 {
		return
	}
	for _, c := range d.ch.Choices {
		if len(c.Delta.Extra) > 0 || len(c.Delta.ToolCalls) > 0 {
			return // they point into data, which the next line overwrites
		}
	}
	d.pre = append(d.pre[:0], data[:d.contentStart]...)
	d.post = append(d.post[:0], data[d.contentEnd:]...)
	d.tpl, d.tplChoice = true, d.contentChoice
}

// content reads choice i's content into v, noting where its string lies.
func (d *chunkDecoder) content(i int, v *string) bool {
	d.contents++
	d.contentChoice = i
	d.contentStart = -1
	if d.s.Peek() != '"' {
		return d.s.Str(v) // a null, or not a string
	}
	start := d.s.I
	if !d.s.Str(v) {
		return false
	}
	d.contentStart, d.contentEnd = start, d.s.I
	return true
}

// fast reports whether the scanner read data completely.
func (d *chunkDecoder) fast(data []byte) (ok bool) {
	d.s.Reset(data)
	d.ch.Choices = d.ch.Choices[:0]
	d.ch.Usage, d.ch.Error, d.ch.XGroq, d.ch.Object = nil, nil, nil, ""
	d.contents = 0
	defer d.s.Reset(nil)
	seenChoices := false
	if !d.s.Object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			if seenChoices {
				return false // duplicate: leave the merging rules to encoding/json
			}
			seenChoices = true
			return d.choices()
		case "usage":
			if d.s.Null() {
				d.ch.Usage = nil
				return true
			}
			if d.ch.Usage == nil {
				d.usage = Usage{}
				d.ch.Usage = &d.usage
			}
			return d.s.Object(func(k []byte) bool {
				switch string(k) {
				case "prompt_tokens":
					return d.s.Int(&d.usage.PromptTokens)
				case "completion_tokens":
					return d.s.Int(&d.usage.CompletionTokens)
				}
				return !jsonscan.FoldsTo(k, "prompt_tokens", "completion_tokens") && d.s.Skip()
			})
		case "object":
			return d.s.StrKnown(&d.ch.Object, "chat.completion.chunk", "error")
		case "error", "x_groq":
			return false // rare: encoding/json reads them
		}
		return !jsonscan.FoldsTo(key, "choices", "usage", "error", "object", "x_groq") && d.s.Skip()
	}) {
		return false
	}
	return d.s.End()
}

func (d *chunkDecoder) choices() bool {
	if d.s.Null() {
		d.ch.Choices = nil
		return true
	}
	n := 0
	return d.s.Array(func() bool {
		if n >= len(d.finish) {
			return false
		}
		d.ch.Choices = append(d.ch.Choices, choice{})
		c := &d.ch.Choices[len(d.ch.Choices)-1]
		n++
		return d.s.Object(func(key []byte) bool {
			switch string(key) {
			case "finish_reason":
				if d.s.Null() {
					c.FinishReason = nil
					return true
				}
				s := &d.finish[n-1]
				if !d.s.Str(s) {
					return false
				}
				c.FinishReason = s
				return true
			case "delta":
				return scanDelta(&d.s, &c.Delta, func(v *string) bool { return d.content(n-1, v) }, d.drop)
			}
			return !jsonscan.FoldsTo(key, "finish_reason", "delta") && d.s.Skip()
		})
	})
}
