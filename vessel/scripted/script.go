// Package scripted is an OpenAI-compatible chat completions server that
// replays scripts instead of thinking. Tests, the local stack and the load
// tool use it as a model that answers the same way every time.
package scripted

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Script is a list of rules; the first rule that matches a request decides
// the reply. See docs/scripted-model.md for the file format.
type Script struct {
	Rules []Rule `json:"rules"`
	// Default answers requests no rule matches; nil means an echo answer.
	Default *Rule `json:"default,omitempty"`
}

// Rule matches requests and holds one reply per step.
type Rule struct {
	Name  string `json:"name"`
	Match Match  `json:"match"`
	// Steps are indexed by the step number: the count of assistant messages
	// after the last user message. Steps past the end repeat the last one.
	Steps []Step `json:"steps"`
}

// Match says which requests a rule answers. Every set field must hold; a
// rule with an empty Match is chosen only by its marker. A
// "#script:<name>" marker in the last user message selects the rule with
// that name whatever its Match says.
type Match struct {
	// Contains is a substring of the last user message.
	Contains string `json:"contains,omitempty"`
	// Tool is the name of a tool the request offers.
	Tool string `json:"tool,omitempty"`
	// Step limits the rule to one step number.
	Step *int `json:"step,omitempty"`
}

// Step is one reply.
type Step struct {
	// Text is the answer; {{last_user}}, {{tool_result}} and
	// {{tool_result_list}} are replaced (see the docs).
	Text string `json:"text,omitempty"`
	// Pieces splits Text into this many stream chunks (default 1).
	Pieces int `json:"pieces,omitempty"`
	// Repeat sends Text this many times in a row (a token flood).
	Repeat int `json:"repeat,omitempty"`
	// Reasoning is streamed as reasoning_content before the text.
	Reasoning       string `json:"reasoning,omitempty"`
	ReasoningPieces int    `json:"reasoning_pieces,omitempty"`
	// ToolCalls are asked for in parallel in this step.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage overrides the computed token counts.
	Usage *Usage `json:"usage,omitempty"`
	// Error answers with an HTTP error instead, Count times (0 = always)
	// per conversation, then falls through to the rest of the step.
	Error *HTTPError `json:"error,omitempty"`
	// DelayMS waits before the response starts; PieceDelayMS between chunks.
	DelayMS      int `json:"delay_ms,omitempty"`
	PieceDelayMS int `json:"piece_delay_ms,omitempty"`
	// FailAfterPieces cuts the stream after this many chunks (a broken
	// connection mid-answer); 0 means never.
	FailAfterPieces int `json:"fail_after_pieces,omitempty"`
}

// ToolCall is one tool call the model asks for.
type ToolCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is token accounting.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// HTTPError is a scripted failure.
type HTTPError struct {
	Status  int    `json:"status"`
	Count   int    `json:"count,omitempty"`
	Message string `json:"message,omitempty"`
}

// Bounds that keep a script from exhausting memory.
const (
	maxCount = 1_000_000
	maxBytes = 64 << 20
)

// Load reads a script file.
func Load(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	return Parse(b)
}

// Parse decodes and checks a script.
func Parse(b []byte) (*Script, error) {
	var s Script
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	rules := s.Rules
	if s.Default != nil {
		rules = append(append([]Rule(nil), rules...), *s.Default)
	}
	for i, r := range rules {
		if len(r.Steps) == 0 {
			return nil, fmt.Errorf("parse script: rule %d (%q) has no steps", i, r.Name)
		}
		for j, st := range r.Steps {
			if st.Repeat < 0 || st.Repeat > maxCount || st.Pieces < 0 || st.Pieces > maxCount || st.ReasoningPieces < 0 || st.ReasoningPieces > maxCount {
				return nil, fmt.Errorf("parse script: rule %q step %d: repeat and pieces must be 0 to %d", r.Name, j, maxCount)
			}
			if st.Repeat > 0 && len(st.Text)*st.Repeat > maxBytes {
				return nil, fmt.Errorf("parse script: rule %q step %d: text × repeat is over %d bytes", r.Name, j, maxBytes)
			}
			for k, tc := range st.ToolCalls {
				if tc.Name == "" {
					return nil, fmt.Errorf("parse script: rule %q step %d tool call %d has no name", r.Name, j, k)
				}
				if len(tc.Arguments) > 0 && !json.Valid(tc.Arguments) {
					return nil, fmt.Errorf("parse script: rule %q step %d tool call %d: arguments are not JSON", r.Name, j, k)
				}
			}
		}
	}
	return &s, nil
}

// Default is the built-in script: agents offering a "species" tool (the
// field-guide example) call it with the question's key word as "mentions",
// then list the species it returned;
// "#script:slow" streams 600 pieces 50 ms apart (about 30 s, for cancel
// checks); everything else gets an echo answer.
func Default() *Script {
	s, err := Parse([]byte(defaultScript))
	if err != nil {
		panic(err) // the built-in script is a constant; a test covers it
	}
	return s
}

const defaultScript = `{
  "rules": [
    {"name": "field-guide", "match": {"tool": "species"}, "steps": [
      {"reasoning": "I am the bundled scripted model, not a language model: I search the species accounts for the question's key word, {{keyword}}, with the species tool.",
       "tool_calls": [{"name": "species", "arguments": {"mentions": "{{keyword}}"}}]},
      {"text": "## From the field guide\n\nYou asked: *{{last_user}}*\n\nThe species whose account mentions \u201c{{keyword}}\u201d:\n\n{{tool_result_list}}\n\n` + scriptedNote + `", "pieces": 8}
    ]}
,
    {"name": "slow", "steps": [
      {"text": "This answer streams slowly so that a caller has time to cancel it. ", "repeat": 40, "pieces": 15, "piece_delay_ms": 50}
    ]}
  ],
  "default": {"name": "echo", "steps": [
    {"text": "You said: {{last_user}}\n\n` + scriptedNote + `", "pieces": 4}
  ]}
}`

// scriptedNote ends every answer of the built-in script, so nobody takes it
// for a model's.
const scriptedNote = "*The bundled scripted model answered: it follows a fixed script " +
	"(docs/scripted-model.md) and does not understand the question. " +
	"To use a real model, set VESSEL_UPSTREAM_MODEL_URL and VESSEL_MODEL_KEY (see README.md).*"
