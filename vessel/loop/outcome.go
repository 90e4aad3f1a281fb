package loop

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// checkLimits reports a *model.LimitError when resp holds more than the
// call's limits allow.
func checkLimits(resp *model.Response, text, args, allArgs int) error {
	if len(resp.Content) > text {
		return &model.LimitError{What: model.LimitText, Limit: text}
	}
	if len(resp.ToolCalls) > model.MaxToolCalls {
		return &model.LimitError{What: model.LimitToolCalls, Limit: model.MaxToolCalls}
	}
	all := 0
	for _, c := range resp.ToolCalls {
		n := len(c.Function.Name) + len(c.Function.Arguments)
		if n > args {
			return &model.LimitError{What: model.LimitArguments, Limit: args}
		}
		if all += n; all > allArgs {
			return &model.LimitError{What: model.LimitAllArguments, Limit: allArgs}
		}
	}
	return nil
}

// overLimit ends a turn whose model output went over a limit. The text the
// caller has seen (at most the limit) is the answer; no tool call runs.
func (r *runner) overLimit(resp *model.Response, err error, remaining, maxText, maxArgs int) {
	r.res.Status = StatusOutputLimit
	var le *model.LimitError
	errors.As(err, &le)
	switch le.What {
	case model.LimitText:
		r.res.Error = fmt.Sprintf("the model's text went over the turn's limit of %d bytes (max_answer_bytes)", maxText)
	case model.LimitReasoning:
		r.res.Error = fmt.Sprintf("the model's reasoning went over the turn's limit of %d bytes (max_answer_bytes)", maxText)
	case model.LimitArguments:
		r.res.Error = fmt.Sprintf("a tool call's arguments went over the limit of %d bytes (max_tool_arguments_bytes)", maxArgs)
	case model.LimitAllArguments:
		r.res.Error = fmt.Sprintf("the turn's tool-call arguments went over %d bytes together (%d × max_tool_arguments_bytes)",
			model.TurnArgumentsFactor*maxArgs, model.TurnArgumentsFactor)
	default:
		r.res.Error = le.Error()
	}
	answer := ""
	if resp != nil && len(resp.Content) <= remaining {
		answer = resp.Content
	}
	r.res.Answer = answer
	if answer == "" {
		return // as in incomplete: an empty assistant message is a history the next turn refuses
	}
	am := transcript.Message{Role: "assistant", Content: transcript.Text(answer)}
	r.res.Messages = append(r.res.Messages, am)
}

// incomplete ends a turn whose step's answer is not a complete one (see
// StatusIncomplete). The text streamed is the answer and is kept in the
// transcript without the step's tool calls, so the next turn's history is
// valid and shows what the caller saw.
func (r *runner) incomplete(resp *model.Response, err error) {
	var ie *model.IncompleteError
	errors.As(err, &ie)
	r.res.Status, r.res.Reason, r.res.Error = StatusIncomplete, ie.Reason, ie.Error()
	r.res.PromptTokens += resp.Usage.PromptTokens
	r.res.CompletionTokens += resp.Usage.CompletionTokens
	answer := resp.Content
	if resp.Refusal != "" {
		answer += resp.Refusal
	}
	if len(answer) > r.maxText-r.textUsed {
		answer = ""
	}
	r.res.Answer = answer
	if answer == "" {
		return // an empty assistant message would make the transcript a history the next turn refuses
	}
	am := transcript.Message{Role: "assistant", Content: transcript.Text(answer), Extra: resp.Extra}
	r.res.Messages = append(r.res.Messages, am)
}

// fail sets the status for a turn stopped by err.
func (r *runner) fail(ctx context.Context, err error) {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrCancelled):
		r.res.Status = StatusCancelled
	case errors.Is(cause, ErrShutdown):
		r.res.Status = StatusShutdown
		r.res.Error = "the vessel was stopping and the turn did not finish within its shutdown grace period"
	case errors.Is(cause, ErrDeadline), errors.Is(cause, context.DeadlineExceeded):
		r.res.Status = StatusDeadline
	case ctx.Err() != nil:
		r.res.Status = StatusCancelled
	default:
		r.res.Status = StatusModelError
		var me *model.Error
		if errors.As(err, &me) {
			r.res.Error = me.Error()
			// A failed call's tokens are still spent.
			r.res.PromptTokens += me.Usage.PromptTokens
			r.res.CompletionTokens += me.Usage.CompletionTokens
			if me.Budget() {
				r.res.Reason = ReasonBudget
			}
		} else {
			r.res.Error = "the model call failed"
		}
	}
}

// uniqueIDs renames, in place, calls whose id an earlier call of the step
// already has ("c1" again becomes "c1~2"). A model that repeats an id (or
// leaves ids out and collides with the generated call_<n>) would otherwise
// make one approval decision cover two calls, and leave a transcript that
// the next turn's history check refuses (an id used twice). A name that
// would outgrow the transcript's id limit falls back to call_<i>~<n>. The
// step's assistant message shares calls, so each tool result still answers
// its own call.
func uniqueIDs(calls []transcript.ToolCall) {
	if len(calls) < 2 {
		return
	}
	seen := make(map[string]bool, len(calls))
	for i := range calls {
		id := calls[i].ID
		for n := 2; seen[id]; n++ {
			suffix := "~" + strconv.Itoa(n)
			if id = calls[i].ID + suffix; len(id) > transcript.MaxToolCallID {
				id = "call_" + strconv.Itoa(i) + suffix
			}
		}
		seen[id] = true
		calls[i].ID = id
	}
}
