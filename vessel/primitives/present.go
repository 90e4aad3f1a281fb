package primitives

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ToolName is the built-in tool that attaches components to the answer.
const ToolName = "present"

// Description is what the model reads about `present`.
func Description() string {
	var b strings.Builder
	b.WriteString("Attach AstralPrimitives UI components (cards, tables, charts, metrics...) to your answer; ")
	b.WriteString("the caller's app renders them beside your text. Call it with {\"components\": [...]}, ")
	b.WriteString("each component an object with a \"type\". Types and the fields you must give ")
	b.WriteString("(others are optional; numbers must be finite; value fields of progress, gauge and metric.progress are fractions 0-1):\n")
	for _, t := range typeOrder {
		var reqs []string
		for _, f := range types[t] {
			if f.pres == required {
				reqs = append(reqs, f.name)
			}
		}
		fmt.Fprintf(&b, "- %s: %s\n", t, strings.Join(reqs, ", "))
	}
	b.WriteString("container.children, card.content, grid.children, collapsible.content and tabs[].content hold nested components; ")
	b.WriteString("action_group.buttons holds button components. Still write the answer itself as text: components only add to it.")
	return b.String()
}

// Parameters is the JSON Schema of present's arguments.
func Parameters() map[string]any {
	enum := make([]any, len(typeOrder))
	for i, t := range typeOrder {
		enum[i] = t
	}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"components": map[string]any{
				"type":        "array",
				"description": "The components to attach, in display order.",
				"minItems":    1,
				"items": map[string]any{
					"type":                 "object",
					"properties":           map[string]any{"type": map[string]any{"type": "string", "enum": enum}},
					"required":             []any{"type"},
					"additionalProperties": true,
				},
			},
		},
		"required":             []any{"components"},
		"additionalProperties": false,
	}
}

// Envelope wraps components the way Astral's tools return UI:
// {"_ui_components": [...], "_data": null}.
func Envelope(components []any) map[string]any {
	if components == nil {
		components = []any{}
	}
	return map[string]any{"_ui_components": components, "_data": nil}
}

// EnvelopeJSON is Envelope encoded, for the primitives media-type part.
func EnvelopeJSON(components []any) ([]byte, error) {
	b, err := json.Marshal(Envelope(components))
	if err != nil {
		return nil, fmt.Errorf("encode primitives envelope: %w", err)
	}
	return b, nil
}

func countComponents(list []any) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		n++
		for _, k := range []string{"children", "content", "buttons"} {
			if l, ok := m[k].([]any); ok {
				for _, x := range l {
					walk(x)
				}
			}
		}
		if tabs, ok := m["tabs"].([]any); ok {
			for _, t := range tabs {
				if tm, ok := t.(map[string]any); ok {
					if l, ok := tm["content"].([]any); ok {
						for _, x := range l {
							walk(x)
						}
					}
				}
			}
		}
	}
	for _, x := range list {
		walk(x)
	}
	return n
}
