package client

import (
	"encoding/json"
	"time"
)

// Event is one typed event of a turn. The concrete types are TurnStarted,
// TextDelta, ReasoningDelta, ToolStarted, ToolFinished, FileAttached, File,
// TranscriptChunk, Answer, TurnFinished and Unknown.
type Event interface{ isEvent() }

// Vessel event type names (metadata["vessel.event"] of a working status).
const (
	EventTurnStarted    = "turn.started"
	EventTextDelta      = "text.delta"
	EventReasoningDelta = "reasoning.delta"
	EventToolStarted    = "tool.started"
	EventToolFinished   = "tool.finished"
	EventFileAttached   = "file.attached"
	EventTurnFinished   = "turn.finished"
	EventModelRetry     = "model.retry"
)

// ModelRetry says a model call failed before anything streamed and is
// tried again after Wait.
type ModelRetry struct {
	Attempt int // the attempt about to be made (2 for the first retry)
	Wait    time.Duration
	Error   string
	Data    map[string]any
}

// TurnStarted is the first event of a turn: the task exists.
type TurnStarted struct {
	TaskID    string
	ContextID string
	Data      map[string]any // the turn.started payload, when one was sent
}

// TextDelta is a piece of the answer's text as the model streams it.
type TextDelta struct{ Text string }

// ReasoningDelta is a piece of the model's reasoning, shown apart from the answer.
type ReasoningDelta struct{ Text string }

// ToolStarted says the agent called a tool.
type ToolStarted struct {
	CallID    string
	Name      string
	Arguments any // usually a JSON object or its string form
	Data      map[string]any
}

// ToolFinished says a tool call ended, with a bounded preview of its output.
type ToolFinished struct {
	CallID   string
	Name     string
	OK       bool
	Error    string
	Preview  string
	ExitCode *int
	Data     map[string]any
}

// FileAttached says a tool call returned a file; its bytes follow as a File.
type FileAttached struct {
	CallID    string
	Name      string
	MediaType string
	Size      int64
	Data      map[string]any
}

// File is a file returned by the turn (an artifact named "file").
type File struct {
	Name      string
	MediaType string
	Data      []byte
	CallID    string
}

// TranscriptChunk carries messages of the turn's transcript (OpenAI chat
// format) for the application to store. Last is set on the final chunk.
type TranscriptChunk struct {
	Messages []Message
	Last     bool
}

// Answer is the turn's answer artifact: Markdown plus optional
// AstralPrimitives components.
type Answer struct {
	Markdown   string
	Components []any
}

// TurnFinished is the last event of a turn.
type TurnFinished struct {
	// Status is ok, step_limit, cancelled, deadline, model_error,
	// output_limit or shutdown; for a turn the vessel refused before it
	// ran, "rejected".
	Status string
	// State is the task's final A2A state, such as TASK_STATE_COMPLETED.
	State            string
	PromptTokens     int
	CompletionTokens int
	Steps            int
	Elapsed          time.Duration
	// Error or Reason say why a turn failed or was rejected.
	Error  string
	Reason string
	Data   map[string]any
}

// Unknown is a vessel event this client does not know; Data is its payload.
type Unknown struct {
	Type string
	Data any
}

func (TurnStarted) isEvent()     {}
func (TextDelta) isEvent()       {}
func (ReasoningDelta) isEvent()  {}
func (ToolStarted) isEvent()     {}
func (ToolFinished) isEvent()    {}
func (FileAttached) isEvent()    {}
func (File) isEvent()            {}
func (TranscriptChunk) isEvent() {}
func (Answer) isEvent()          {}
func (TurnFinished) isEvent()    {}
func (Unknown) isEvent()         {}
func (ModelRetry) isEvent()      {}

// field helpers: the first present key wins, so a few spellings are accepted.

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

func num(m map[string]any, keys ...string) (float64, bool) {
	for _, k := range keys {
		switch v := m[k].(type) {
		case float64:
			return v, true
		case int:
			return float64(v), true
		case int64:
			return float64(v), true
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}

func integer(m map[string]any, keys ...string) int {
	f, _ := num(m, keys...)
	return int(f)
}

func sub(m map[string]any, key string) map[string]any {
	s, _ := m[key].(map[string]any)
	return s
}

// decodeEvent maps a vessel event payload to a typed Event.
func decodeEvent(typ string, data map[string]any) Event {
	if data == nil {
		data = map[string]any{}
	}
	switch typ {
	case EventTurnStarted:
		return TurnStarted{TaskID: str(data, "task_id", "taskId"), ContextID: str(data, "context_id", "contextId"), Data: data}
	case EventTextDelta:
		return TextDelta{Text: str(data, "text", "delta", "content")}
	case EventReasoningDelta:
		return ReasoningDelta{Text: str(data, "text", "delta", "content")}
	case EventToolStarted:
		args, ok := data["arguments"]
		if !ok {
			args = data["args"]
		}
		return ToolStarted{CallID: str(data, "call_id", "callId", "id"), Name: str(data, "name", "tool"), Arguments: args, Data: data}
	case EventToolFinished:
		tf := ToolFinished{
			CallID:  str(data, "call_id", "callId", "id"),
			Name:    str(data, "name", "tool"),
			Error:   str(data, "error"),
			Preview: str(data, "preview", "output_preview", "output"),
			Data:    data,
		}
		if ok, present := data["ok"].(bool); present {
			tf.OK = ok
		} else {
			tf.OK = tf.Error == ""
		}
		if f, ok := num(data, "exit_code", "exitCode"); ok {
			c := int(f)
			tf.ExitCode = &c
		}
		return tf
	case EventFileAttached:
		f, _ := num(data, "size", "bytes")
		return FileAttached{
			CallID:    str(data, "call_id", "callId"),
			Name:      str(data, "name", "filename"),
			MediaType: str(data, "media_type", "mediaType", "mime_type"),
			Size:      int64(f),
			Data:      data,
		}
	case EventTurnFinished:
		return decodeTurnFinished(data)
	case EventModelRetry:
		return ModelRetry{Attempt: integer(data, "attempt"), Wait: time.Duration(integer(data, "wait_ms")) * time.Millisecond,
			Error: str(data, "error"), Data: data}
	}
	return Unknown{Type: typ, Data: data}
}

func decodeTurnFinished(data map[string]any) TurnFinished {
	tf := TurnFinished{
		Status:           str(data, "status"),
		PromptTokens:     integer(data, "prompt_tokens", "promptTokens"),
		CompletionTokens: integer(data, "completion_tokens", "completionTokens"),
		Steps:            integer(data, "steps"),
		Error:            str(data, "error", "message"),
		Reason:           str(data, "reason"),
		Data:             data,
	}
	if u := sub(data, "usage"); u != nil {
		if tf.PromptTokens == 0 {
			tf.PromptTokens = integer(u, "prompt_tokens", "promptTokens")
		}
		if tf.CompletionTokens == 0 {
			tf.CompletionTokens = integer(u, "completion_tokens", "completionTokens")
		}
	}
	if ms, ok := num(data, "elapsed_ms", "duration_ms", "elapsedMs"); ok {
		tf.Elapsed = time.Duration(ms * float64(time.Millisecond))
	} else if s, ok := num(data, "elapsed_s", "elapsed", "seconds", "duration_s"); ok {
		tf.Elapsed = time.Duration(s * float64(time.Second))
	} else if t := sub(data, "timing"); t != nil {
		if ms, ok := num(t, "total_ms", "elapsed_ms"); ok {
			tf.Elapsed = time.Duration(ms * float64(time.Millisecond))
		}
	}
	return tf
}
