package a2aserver

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// MediaJSON is the media type of a structured answer's data part.
const MediaJSON = "application/json"

// answerShape is an agent's structured answer (response_format json_object
// or json_schema): the final answer must be such JSON, and is then also
// sent as a data part.
type answerShape struct {
	schema *jsonschema.Resolved // nil for json_object
}

// newAnswerShape compiles rf's schema; nil when the agent's answers are
// plain text. A schema's remote references are refused (no loader): the
// vessel fetches nothing to check an answer.
func newAnswerShape(rf *settings.ResponseFormat) (*answerShape, error) {
	if rf == nil || (rf.Type != "json_object" && rf.Type != "json_schema") {
		return nil, nil
	}
	if rf.Type == "json_object" {
		return &answerShape{}, nil
	}
	b, err := json.Marshal(rf.Schema)
	if err != nil {
		return nil, fmt.Errorf("response_format schema: %w", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("response_format schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("response_format schema: %w", err)
	}
	return &answerShape{schema: rs}, nil
}

// check parses answer and validates it.
func (a *answerShape) check(answer string) (any, error) {
	var v any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		return nil, errors.New("the answer is not JSON")
	}
	if a.schema == nil {
		if _, ok := v.(map[string]any); !ok {
			return nil, errors.New("the answer is not a JSON object")
		}
		return v, nil
	}
	if err := a.schema.Validate(v); err != nil {
		return nil, fmt.Errorf("the answer does not match the response_format schema: %s", truncateReason(err.Error()))
	}
	return v, nil
}

func truncateReason(s string) string {
	const n = 300
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// checkStructured ends a finished turn whose answer is not of the shape
// asked for with StatusSchemaMismatch.
func (e *executor) checkStructured(res *loop.Result) {
	if e.shape == nil || res.Status != loop.StatusOK {
		return
	}
	if _, err := e.shape.check(res.Answer); err != nil {
		res.Status, res.Error = loop.StatusSchemaMismatch, err.Error()
	}
}

// structuredPart is the answer's data part, when the agent asks for a
// structured answer and it has that shape.
func (e *executor) structuredPart(res *loop.Result) *a2a.Part {
	if e.shape == nil || res.Status != loop.StatusOK {
		return nil
	}
	v, err := e.shape.check(res.Answer)
	if err != nil {
		return nil
	}
	return &a2a.Part{Content: a2a.Data{Value: jsonShaped(v)}, MediaType: MediaJSON}
}
