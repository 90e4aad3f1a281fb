package primitives

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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

// Collector gathers one turn's components across present calls, within a
// per-turn cap. Safe for concurrent use.
type Collector struct {
	lim Limits
	// MaxTotal caps the components of a whole turn (default 4 × MaxComponents).
	maxTotal int

	mu    sync.Mutex
	comps []any
	count int
}

// NewCollector returns an empty collector; lim applies to each call.
func NewCollector(lim Limits) *Collector {
	lim = lim.orDefault()
	return &Collector{lim: lim, maxTotal: 4 * lim.MaxComponents}
}

// Present runs the present tool: it validates the model's arguments and, if
// they pass, keeps the components for the answer. The returned string is
// the tool result for the model; an error is a message to the model saying
// what to fix (nothing is attached then).
func (c *Collector) Present(args []byte) (string, error) {
	comps, err := Parse(args, c.lim)
	if err != nil {
		return "", fmt.Errorf("present: %w", err)
	}
	n := countComponents(comps)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count+n > c.maxTotal {
		return "", fmt.Errorf("present: %w: this turn already has %d components and may have at most %d", ErrTooLarge, c.count, c.maxTotal)
	}
	c.comps = append(c.comps, comps...)
	c.count += n
	kinds := make([]string, 0, len(comps))
	for _, x := range comps {
		kinds = append(kinds, x.(map[string]any)["type"].(string))
	}
	return fmt.Sprintf("Attached %d component(s) (%s); they are shown with your answer. Still write the answer as text.",
		len(comps), strings.Join(kinds, ", ")), nil
}

// Components returns the components gathered so far (nil if none).
func (c *Collector) Components() []any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.comps) == 0 {
		return nil
	}
	return append([]any(nil), c.comps...)
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
