package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RequestSettings are the request fields of vessel.toml's [model] table
// (docs/models.md, "Request settings"): written by the vessel into every
// model request of the agent.
type RequestSettings struct {
	// MaxOutputTokens is the token limit of one model call, sent under
	// the route's token_param (max_tokens or max_completion_tokens); 0
	// sends none.
	MaxOutputTokens int      `toml:"max_output_tokens" json:",omitempty"`
	Temperature     *float64 `toml:"temperature" json:",omitempty"`
	TopP            *float64 `toml:"top_p" json:",omitempty"`
	Stop            []string `toml:"stop" json:",omitempty"`
	Seed            *int64   `toml:"seed" json:",omitempty"`
	// ReasoningEffort is sent as reasoning_effort.
	ReasoningEffort string          `toml:"reasoning_effort" json:",omitempty"`
	ResponseFormat  *ResponseFormat `toml:"response_format" json:",omitempty"`
	// ExtraBody are further top-level request fields (DeepSeek's
	// thinking, OpenRouter's provider); never the ones the vessel owns.
	ExtraBody map[string]any `toml:"extra_body" json:",omitempty"`
}

// ResponseFormat is [model.response_format].
type ResponseFormat struct {
	// Type is text, json_object or json_schema.
	Type string `toml:"type"`
	// Name, Strict and Schema make the json_schema object; the final
	// answer is checked against Schema and carried as a data part.
	Name   string         `toml:"name"`
	Strict bool           `toml:"strict"`
	Schema map[string]any `toml:"schema"`
}

// Bounds of the request settings.
const (
	MaxStops          = 4
	MaxExtraBodyKeys  = 16
	MaxExtraBodyBytes = 16 << 10
	MaxSchemaBytes    = 64 << 10
	maxOutputTokens   = 1 << 24
)

// ReasoningEfforts are the reasoning_effort values providers take.
var ReasoningEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// vesselOwned are the request fields the vessel writes itself; extra_body
// may not set them (nor those a named setting writes).
var vesselOwned = []string{"model", "messages", "tools", "tool_choice", "functions", "function_call", "stream", "stream_options", "n"}

var namedSettings = map[string]string{
	"max_tokens": "max_output_tokens", "max_completion_tokens": "max_output_tokens", "temperature": "temperature",
	"top_p": "top_p", "stop": "stop", "seed": "seed", "reasoning_effort": "reasoning_effort", "response_format": "response_format",
}

func validateRequestSettings(c *collector, s *RequestSettings) {
	if s.MaxOutputTokens < 0 || s.MaxOutputTokens > maxOutputTokens {
		c.add("model.max_output_tokens", "%d is out of range; allowed 1 to %d (leave it out to send none)", s.MaxOutputTokens, maxOutputTokens)
	}
	if t := s.Temperature; t != nil && (*t < 0 || *t > 2) {
		c.add("model.temperature", "%g is out of range; allowed 0 to 2", *t)
	}
	if p := s.TopP; p != nil && (*p < 0 || *p > 1) {
		c.add("model.top_p", "%g is out of range; allowed 0 to 1", *p)
	}
	if len(s.Stop) > MaxStops {
		c.add("model.stop", "%d stop sequences; at most %d", len(s.Stop), MaxStops)
	}
	for i, st := range s.Stop {
		if st == "" {
			c.add(fmt.Sprintf("model.stop[%d]", i), "must not be empty")
		}
	}
	if s.ReasoningEffort != "" && !slices.Contains(ReasoningEfforts, s.ReasoningEffort) {
		c.add("model.reasoning_effort", "unknown effort %q; allowed: %s", s.ReasoningEffort, strings.Join(ReasoningEfforts, ", "))
	}
	if rf := s.ResponseFormat; rf != nil {
		validateResponseFormat(c, rf)
	}
	if len(s.ExtraBody) > MaxExtraBodyKeys {
		c.add("model.extra_body", "%d fields; at most %d", len(s.ExtraBody), MaxExtraBodyKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(s.ExtraBody)) {
		f := "model.extra_body." + k
		if slices.Contains(vesselOwned, k) {
			c.add(f, "%q is written by the vessel itself; extra_body may not set it", k)
		} else if named, ok := namedSettings[k]; ok {
			c.add(f, "set it as model.%s", named)
		}
	}
	if b, err := json.Marshal(s.ExtraBody); err != nil {
		c.add("model.extra_body", "cannot be written as JSON: %v", err)
	} else if len(b) > MaxExtraBodyBytes {
		c.add("model.extra_body", "%d bytes as JSON; at most %d", len(b), MaxExtraBodyBytes)
	}
}

func validateResponseFormat(c *collector, rf *ResponseFormat) {
	switch rf.Type {
	case "text", "json_object":
		if rf.Schema != nil || rf.Name != "" {
			c.add("model.response_format.type", "name and schema belong to type = \"json_schema\"")
		}
	case "json_schema":
		if rf.Name == "" || !ValidToolName(rf.Name) {
			c.add("model.response_format.name", "required with json_schema: letters, digits, _ and -, at most 64")
		}
		if rf.Schema == nil {
			c.add("model.response_format.schema", "required with json_schema: the JSON Schema of the final answer")
		} else if b, err := json.Marshal(rf.Schema); err != nil || len(b) > MaxSchemaBytes {
			c.add("model.response_format.schema", "must be JSON of at most %d bytes", MaxSchemaBytes)
		}
	default:
		c.add("model.response_format.type", "unknown type %q; allowed: text, json_object, json_schema", rf.Type)
	}
}
