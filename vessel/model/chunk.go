package model

import (
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
}

// decode parses data; the chunk is valid until the next call.
func (d *chunkDecoder) decode(data []byte) (*chunk, error) {
	if d.fast(data) {
		return &d.ch, nil
	}
	d.ch = chunk{}
	if err := json.Unmarshal(data, &d.ch); err != nil {
		return nil, err
	}
	return &d.ch, nil
}

// fast reports whether the scanner read data completely.
func (d *chunkDecoder) fast(data []byte) (ok bool) {
	d.s.Reset(data)
	d.ch.Choices = d.ch.Choices[:0]
	d.ch.Usage, d.ch.Error = nil, nil
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
						return d.s.Str(&c.Delta.Content)
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
