package primitives

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// MediaMarkdown is the media type of the answer's text part.
const MediaMarkdown = "text/markdown"

// AnswerParts builds the parts of a turn's answer artifact: the answer as
// a text part, then, when components were attached, a data part holding
// {"_ui_components": [...], "_data": null} with the primitives media type
// and metadata {"type": "ui_components"}, the marker AstralDeep looks for.
// Every field used (text, data, mediaType, metadata) exists in the A2A 1.0
// Part message, so a strict protobuf-JSON reader accepts the reply. It fits
// the a2a server's Config.AnswerParts.
func AnswerParts(answer string, components []any) []*a2a.Part {
	parts := []*a2a.Part{{Content: a2a.Text(answer), MediaType: MediaMarkdown}}
	if len(components) == 0 {
		return parts
	}
	parts = append(parts, &a2a.Part{
		Content:   a2a.Data{Value: jsonShaped(Envelope(components))},
		MediaType: MediaType,
		Metadata:  map[string]any{"type": "ui_components"},
	})
	return parts
}

// jsonShaped round-trips v through JSON so only map[string]any, []any,
// string, float64, bool and nil remain: the SDK deep-copies parts with gob,
// which refuses other types inside interfaces.
func jsonShaped(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"_ui_components": []any{}, "_data": nil}
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return map[string]any{"_ui_components": []any{}, "_data": nil}
	}
	return out
}
