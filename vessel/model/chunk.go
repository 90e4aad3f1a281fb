package model

import (
	"bytes"
	"encoding/json"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
)

// chunk is one streamed chat-completion chunk, reduced to what a step uses.
type chunk struct {
	Choices []choice    `json:"choices"`
	Usage   *Usage      `json:"usage"`
	Error   *chunkError `json:"error"`
}

type chunkError struct {
	Message string `json:"message"`
	Code    any    `json:"code"` // a string or a number, by provider
}

func (e *chunkError) code() string {
	c, _ := e.Code.(string)
	return truncate(c, 64)
}

type choice struct {
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Content          string          `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chunkDecoder decodes chunks. A stream has one chunk per token, so the
// common shape is read by a small scanner that only looks at the members
// above and skips the rest (id, model, created, ...) without building
// them; anything the scanner is not sure about (escapes aside, which it
// hands to encoding/json one string at a time) goes to json.Unmarshal, so
// the result is always what json.Unmarshal gives.
type chunkDecoder struct {
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
	d.ch.Usage, d.ch.Error = nil, nil
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
		case "error":
			return false // rare: encoding/json reads it
		}
		return !jsonscan.FoldsTo(key, "choices", "usage", "error") && d.s.Skip()
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
				if d.s.Null() {
					return true
				}
				return d.s.Object(func(k []byte) bool {
					switch string(k) {
					case "content":
						return d.content(n-1, &c.Delta.Content)
					case "reasoning_content":
						return d.s.Str(&c.Delta.ReasoningContent)
					case "reasoning":
						return d.s.Str(&c.Delta.Reasoning)
					case "tool_calls":
						return false // a few per step: encoding/json reads them
					}
					return !jsonscan.FoldsTo(k, "content", "reasoning_content", "reasoning", "tool_calls") && d.s.Skip()
				})
			}
			return !jsonscan.FoldsTo(key, "finish_reason", "delta") && d.s.Skip()
		})
	})
}
