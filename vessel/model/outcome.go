package model

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Why a step's answer is incomplete (IncompleteError.Reason).
const (
	// IncompleteLength: the model stopped at its token limit
	// (finish_reason length, or a provider's equivalent).
	IncompleteLength = "length"
	// IncompleteContentFilter: the provider's filter stopped or withheld
	// the answer (content_filter, and Gemini's safety and recitation).
	IncompleteContentFilter = "content_filter"
	// IncompleteRefusal: the model refused (delta.refusal); the refusal
	// text is the answer.
	IncompleteRefusal = "refusal"
	// IncompleteBadArguments: a tool call's arguments are not JSON (or a
	// call has arguments but no name); no call of the step runs.
	IncompleteBadArguments = "bad_tool_arguments"
)

// ErrIncomplete is matched (errors.Is) by every *IncompleteError.
var ErrIncomplete = errors.New("the model's answer is incomplete")

// IncompleteError is a step whose stream ended normally with an answer
// that is not one: cut, filtered, refused, or with a broken tool call.
// Complete returns it with the response (its text, refusal and usage).
type IncompleteError struct {
	Reason       string // one of the Incomplete constants
	FinishReason string // as the provider sent it
}

func (e *IncompleteError) Error() string {
	switch e.Reason {
	case IncompleteLength:
		return "incomplete: length: the model stopped at its token limit"
	case IncompleteContentFilter:
		return fmt.Sprintf("incomplete: content_filter: the provider's filter stopped the answer (finish_reason %q)", e.FinishReason)
	case IncompleteRefusal:
		return "incomplete: refusal: the model refused to answer"
	}
	return "incomplete: bad tool arguments: the model asked for a tool call whose arguments are not valid JSON; no call ran"
}

// Is makes errors.Is(err, ErrIncomplete) true.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// finishOutcome says whether a finished answer is complete: nil, an
// *IncompleteError, or an *Error for a provider's "error" finish.
func finishOutcome(out *Response, badArgs bool) error {
	reason := strings.ToLower(out.FinishReason)
	switch {
	case out.Refusal != "":
		return &IncompleteError{Reason: IncompleteRefusal, FinishReason: out.FinishReason}
	case reason == "length" || reason == "max_tokens" || reason == "model_length":
		return &IncompleteError{Reason: IncompleteLength, FinishReason: out.FinishReason}
	case filterReasons[reason]:
		return &IncompleteError{Reason: IncompleteContentFilter, FinishReason: out.FinishReason}
	case reason == "error" || reason == "insufficient_system_resource":
		// Mistral's finish for an answer the server broke off; DeepSeek's
		// for one its inference system cut short.
		return &Error{Message: "the model stopped with finish_reason " + reason, stream: true}
	case badArgs:
		return &IncompleteError{Reason: IncompleteBadArguments, FinishReason: out.FinishReason}
	}
	return nil
}

// filterReasons are the finish reasons of a filtered answer: OpenAI's and
// Azure's, and Gemini's own where a proxy passes them through.
var filterReasons = map[string]bool{"content_filter": true, "safety": true, "recitation": true,
	"blocklist": true, "prohibited_content": true, "spii": true, "image_safety": true}

// secretLike matches what may be a credential in a provider's message
// (OpenAI's "Incorrect API key provided: sk-...", a bearer token, a long
// random token): it is never shown.
var secretLike = regexp.MustCompile(`(?i)(bearer\s+\S+|\b(sk|pk|rk|gsk|xai|key|api[-_]?key)[-_][A-Za-z0-9*_-]{6,}|AIza[0-9A-Za-z_-]{10,}|[A-Za-z0-9_*-]{32,})`)

// sanitize is a provider's error message as it may be shown: one line of
// printable text, credentials removed, at most 300 bytes.
func sanitize(msg string) string {
	msg = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	msg = secretLike.ReplaceAllString(strings.TrimSpace(msg), "[redacted]")
	return truncate(msg, 300)
}
