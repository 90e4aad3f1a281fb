package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Settings are an agent's request settings (vessel.toml [model]), encoded
// once: every request of the agent carries the same fields, written
// between the vessel's own fields and the messages.
type Settings struct {
	fields []byte // `,"name":value` pairs, sorted by name
}

// NewSettings encodes s; tokenParam is the name the route takes the token
// limit under (routes.TokenParamMaxTokens or TokenParamMaxCompletionTokens).
// Keys the vessel writes itself are refused (spec refuses them first, with
// their line).
func NewSettings(s settings.RequestSettings, tokenParam string) (*Settings, error) {
	m := map[string]any{}
	for k, v := range s.ExtraBody {
		m[k] = v
	}
	if s.MaxOutputTokens > 0 {
		if tokenParam == "" {
			tokenParam = routes.TokenParamMaxTokens
		}
		m[tokenParam] = s.MaxOutputTokens
	}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("temperature", s.Temperature, s.Temperature != nil)
	set("top_p", s.TopP, s.TopP != nil)
	set("stop", s.Stop, len(s.Stop) > 0)
	set("seed", s.Seed, s.Seed != nil)
	set("reasoning_effort", s.ReasoningEffort, s.ReasoningEffort != "")
	if rf := s.ResponseFormat; rf != nil {
		f := map[string]any{"type": rf.Type}
		if rf.Type == "json_schema" {
			f["json_schema"] = map[string]any{"name": rf.Name, "strict": rf.Strict, "schema": rf.Schema}
		}
		m["response_format"] = f
	}
	var b bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "model", "messages", "tools", "stream", "stream_options":
			return nil, fmt.Errorf("model settings: %q is written by the vessel itself", k)
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(m[k])
		if err != nil {
			return nil, fmt.Errorf("model settings: %s: %w", k, err)
		}
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	return &Settings{fields: b.Bytes()}, nil
}

// appendSettings appends s's fields to an object being written (after a
// member, before the closing brace).
func appendSettings(b []byte, s *Settings) []byte {
	if s == nil {
		return b
	}
	return append(b, s.fields...)
}
