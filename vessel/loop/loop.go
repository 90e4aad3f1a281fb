// Package loop runs one turn of an agent: ask the model, run the tools it
// asks for, hand back the results, repeat until it answers without tools,
// hits its step limit, its deadline, or is cancelled.
package loop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/deployer/outputfiles"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// Turn statuses (turn.finished's status).
const (
	StatusOK         = "ok"
	StatusStepLimit  = "step_limit"
	StatusCancelled  = "cancelled"
	StatusDeadline   = "deadline"
	StatusModelError = "model_error"
	// StatusOutputLimit: the model's output went over a limit (the turn's
	// answer text, one tool call's arguments, one stream line, or the tool
	// calls of one step); its stream was closed at once.
	StatusOutputLimit = "output_limit"
	// StatusShutdown: the vessel was stopping and the turn did not finish
	// within the shutdown grace period.
	StatusShutdown = "shutdown"
)

// Event types.
const (
	EventTurnStarted    = "turn.started"
	EventTextDelta      = "text.delta"
	EventReasoningDelta = "reasoning.delta"
	EventToolStarted    = "tool.started"
	EventToolFinished   = "tool.finished"
	EventFileAttached   = "file.attached"
	EventTurnFinished   = "turn.finished"
)

// ErrCancelled is the cancel cause of a turn stopped by CancelTask.
var ErrCancelled = errors.New("turn cancelled")

// ErrDeadline is the cancel cause of a turn past its deadline.
var ErrDeadline = errors.New("turn deadline passed")

// ErrShutdown is the cancel cause of a turn stopped because the vessel is
// stopping.
var ErrShutdown = errors.New("the vessel is shutting down")

// MaxParallelCalls bounds how many calls of one step run at once.
const MaxParallelCalls = 16

// PreviewChars bounds tool.finished's output preview.
const PreviewChars = 2000

// Event is one event: Data holds its fields, including "type". Values are
// JSON-shaped (string, bool, int, float64, []any, map[string]any) because
// the SDK deep-copies them with gob.
type Event map[string]any

// Type is the event's type.
func (e Event) Type() string { s, _ := e["type"].(string); return s }

// Modeler is the model client (model.Client in production).
type Modeler interface {
	Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error)
}

// Config is everything an agent's turns share.
type Config struct {
	Model     Modeler
	ModelName string
	MaxSteps  int // default spec.DefaultMaxSteps
	// Prompt returns the system prompt, read fresh each turn.
	Prompt func() (string, error)
	// Ender ends the turn's sandbox workspace; nil when the agent has none.
	Ender tools.TurnEnder
	// CoalesceBytes and CoalesceDelay bound how text deltas are merged into
	// one event: a merged event is sent once it holds CoalesceBytes or its
	// first piece is CoalesceDelay old (checked when the next piece comes).
	CoalesceBytes int
	CoalesceDelay time.Duration
	// AcceptFile decides whether a returned file goes to the caller
	// (acceptedOutputModes); nil accepts all.
	AcceptFile func(mediaType string) bool
	// OutputFiles are the file types the agent's manifest lists in
	// [output] files; a tool's file of any other type is refused.
	OutputFiles []string
	// FileRefused, when set, hears of each file the vessel's own check
	// refused (for the log); the model is told in the call's output.
	FileRefused func(callID, name, reason string)
	// MaxAnswerBytes bounds the text of all the turn's model calls together
	// (the answer and any text written before tool calls), and separately
	// their reasoning; MaxArgumentsBytes
	// bounds each tool call's name and arguments. Zero takes model's
	// defaults (1 MiB each, as in deployer/spec).
	MaxAnswerBytes    int
	MaxArgumentsBytes int
	// Observer hears of each model call and tool call (the metrics); nil
	// hears nothing.
	Observer Observer
}

// Observer hears of a turn's model and tool calls. It is called from the
// turn's goroutine and must be quick.
type Observer interface {
	// ModelCall is one model call's time and error (nil on success).
	ModelCall(d time.Duration, err error)
	// ToolCall is one tool call's name, outcome (OutcomeOK and the
	// others) and time. A call of a tool the turn does not have comes with
	// the name "unknown", so names stay the deployment's.
	ToolCall(tool, outcome string, d time.Duration)
}

// Tool call outcomes, as an Observer hears them.
const (
	OutcomeOK          = "ok"           // the tool ran and succeeded
	OutcomeError       = "error"        // the tool ran and reported an error (exit code, stopped call)
	OutcomeFailed      = "failed"       // the call could not be made (sandbox unreachable, stream broken)
	OutcomeStopped     = "stopped"      // the turn was stopped before the call finished
	OutcomeUnknownTool = "unknown_tool" // the model named a tool the turn does not have
)

// Input is one turn.
type Input struct {
	Turn    *tools.Turn
	Text    string
	History []transcript.Message
	Images  []Image
	Tools   []tools.Tool // already narrowed to what the caller may use
}

// Image is an attached image.
type Image struct {
	MediaType string
	Data      []byte
}

// File is a file returned by a tool call.
type File struct {
	CallID string
	tools.File
}

// Result is a finished turn.
type Result struct {
	Status string
	Answer string
	// Messages are the turn's new messages: the user's, then the
	// assistant's and the tools', in OpenAI chat format.
	Messages         []transcript.Message
	Files            []File
	Components       []any
	PromptTokens     int
	CompletionTokens int
	Steps            int
	Error            string // a short reason for model_error, output_limit and shutdown
	Started          time.Time
	Total            time.Duration
	ModelTime        time.Duration
	ToolTime         time.Duration
	FirstToken       time.Duration // from the start to the first streamed token; 0 if none
}

// FinishedEvent builds turn.finished for r.
func (r *Result) FinishedEvent() Event {
	ev := Event{
		"type": EventTurnFinished, "status": r.Status,
		"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens,
		"steps": r.Steps, "elapsed_ms": r.Total.Milliseconds(),
		"timing": map[string]any{
			"total_ms": r.Total.Milliseconds(), "model_ms": r.ModelTime.Milliseconds(),
			"tools_ms": r.ToolTime.Milliseconds(), "first_token_ms": r.FirstToken.Milliseconds(),
		},
	}
	if r.Error != "" {
		ev["error"] = r.Error
	}
	return ev
}

// StepLimitNote asks the model for a final answer once max_steps is spent.
const StepLimitNote = "You have used every step this turn allows. Do not call tools; answer now with what you have."

// withStepLimitNote is msgs with StepLimitNote added to the system prompt
// (msgs[0]), so the final request still has one system message, the first:
// several OpenAI-compatible servers refuse a second one, or one after the
// conversation began.
func withStepLimitNote(msgs []transcript.Message, prompt string) []transcript.Message {
	out := append([]transcript.Message(nil), msgs...)
	out[0] = transcript.Message{Role: "system", Content: transcript.Text(prompt + "\n\n" + StepLimitNote)}
	return out
}

// Run runs a turn. emit receives every event in order from this goroutine
// only; emit returning false means nobody is listening any more, which does
// not stop the turn. The turn's workspace is ended whatever happens.
func Run(ctx context.Context, cfg *Config, in *Input, emit func(Event) bool) *Result {
	r := &runner{cfg: cfg, in: in, emit: emit, res: &Result{Started: time.Now()}}
	defer func() {
		r.res.Total = time.Since(r.res.Started)
		if cfg.Ender != nil && in.Turn != nil {
			// The turn's ctx may be done; ending the workspace must still happen.
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			_ = cfg.Ender.EndTurn(ectx, in.Turn.ID) // best effort: sandboxd also expires idle turns
			cancel()
		}
	}()
	r.run(ctx)
	return r.res
}

type runner struct {
	cfg  *Config
	in   *Input
	emit func(Event) bool
	res  *Result

	text      strings.Builder // pending coalesced text
	textAt    time.Time
	sawText   bool
	reasoning int // bytes of reasoning the turn has streamed

	files outputfiles.Tally // files kept so far this turn; runTools alone counts
}

func (r *runner) send(ev Event) {
	r.flushText()
	r.emit(ev)
}

// Text implements model.Handler, merging small pieces.
func (r *runner) Text(d string) {
	r.noteFirstToken()
	if r.text.Len() == 0 {
		r.textAt = time.Now()
	}
	r.text.WriteString(d)
	max := r.cfg.CoalesceBytes
	if max <= 0 {
		max = 1024
	}
	delay := r.cfg.CoalesceDelay
	if delay <= 0 {
		delay = 25 * time.Millisecond
	}
	if r.text.Len() >= max || time.Since(r.textAt) >= delay {
		r.flushText()
	}
}

// Reasoning implements model.Handler.
func (r *runner) Reasoning(d string) {
	r.noteFirstToken()
	r.reasoning += len(d)
	r.send(Event{"type": EventReasoningDelta, "text": d})
}

func (r *runner) noteFirstToken() {
	if !r.sawText {
		r.sawText = true
		r.res.FirstToken = time.Since(r.res.Started)
	}
}

func (r *runner) flushText() {
	if r.text.Len() == 0 {
		return
	}
	s := r.text.String()
	r.text.Reset()
	r.emit(Event{"type": EventTextDelta, "text": s})
}

func (r *runner) run(ctx context.Context) {
	cfg, in, res := r.cfg, r.in, r.res
	prompt, err := cfg.Prompt()
	if err != nil {
		res.Status, res.Error = StatusModelError, "the agent's prompt could not be read"
		return
	}
	userMsg := transcript.Message{Role: "user", Content: transcript.Text(in.Text)}
	res.Messages = append(res.Messages, userMsg)
	msgs := make([]transcript.Message, 0, len(in.History)+8)
	msgs = append(msgs, transcript.Message{Role: "system", Content: transcript.Text(prompt)})
	msgs = append(msgs, in.History...)
	msgs = append(msgs, userContent(in.Text, in.Images))

	defs := make([]model.ToolDef, 0, len(in.Tools))
	byName := map[string]tools.Tool{}
	names := make([]any, 0, len(in.Tools))
	for _, t := range in.Tools {
		d := t.Def()
		defs = append(defs, d)
		byName[d.Function.Name] = t
		names = append(names, d.Function.Name)
	}
	started := Event{"type": EventTurnStarted, "tools": names}
	if in.Turn != nil {
		started["task_id"], started["context_id"], started["agent"] = in.Turn.ID, in.Turn.ContextID, in.Turn.Agent
	}
	r.send(started)

	maxSteps := cfg.MaxSteps
	if maxSteps <= 0 {
		maxSteps = spec.DefaultMaxSteps
	}
	maxText, maxArgs := cfg.MaxAnswerBytes, cfg.MaxArgumentsBytes
	if maxText <= 0 {
		maxText = model.DefaultMaxText
	}
	if maxArgs <= 0 {
		maxArgs = model.DefaultMaxArguments
	}
	textUsed, argsUsed := 0, 0 // text and tool-call arguments of the turn's earlier model calls
	maxAllArgs := model.TurnArgumentsFactor * maxArgs
	cache := &model.MessageCache{} // msgs only grow during a turn
	for step := 0; ; step++ {
		final := step >= maxSteps
		req := &model.Request{Model: cfg.ModelName, Messages: msgs, Tools: defs, Cache: cache,
			Limits: model.Limits{Text: max(maxText-textUsed, 1), Reasoning: max(maxText-r.reasoning, 1),
				Arguments: maxArgs, AllArguments: max(maxAllArgs-argsUsed, 1)}}
		if final {
			req.Tools = nil
			req.Messages = withStepLimitNote(msgs, prompt)
			req.Cache = nil // its first message is no longer the cached one
		}
		t0 := time.Now()
		resp, err := cfg.Model.Complete(ctx, req, r)
		md := time.Since(t0)
		res.ModelTime += md
		if cfg.Observer != nil {
			cfg.Observer.ModelCall(md, err)
		}
		r.flushText()
		res.Steps++
		if err == nil && r.reasoning > maxText {
			err = &model.LimitError{What: model.LimitReasoning, Limit: maxText}
		}
		if err == nil {
			err = checkLimits(resp, maxText-textUsed, maxArgs, maxAllArgs-argsUsed) // for a Modeler that does not apply them
		}
		if errors.Is(err, model.ErrOutputLimit) {
			r.overLimit(resp, err, maxText-textUsed, maxText, maxArgs)
			return
		}
		if err != nil {
			r.fail(ctx, err)
			return
		}
		textUsed += len(resp.Content)
		for _, c := range resp.ToolCalls {
			argsUsed += len(c.Function.Name) + len(c.Function.Arguments)
		}
		res.PromptTokens += resp.Usage.PromptTokens
		res.CompletionTokens += resp.Usage.CompletionTokens
		calls := resp.ToolCalls
		if final {
			calls = nil // tools were not offered; ignore any the model invents
		}
		am := transcript.Message{Role: "assistant", ToolCalls: calls}
		if resp.Content != "" || len(calls) == 0 {
			am.Content = transcript.Text(resp.Content)
		}
		msgs = append(msgs, am)
		res.Messages = append(res.Messages, am)
		if len(calls) == 0 {
			res.Answer = resp.Content
			res.Status = StatusOK
			if final {
				res.Status = StatusStepLimit
			}
			return
		}
		t1 := time.Now()
		toolMsgs := r.runTools(ctx, byName, calls)
		res.ToolTime += time.Since(t1)
		msgs = append(msgs, toolMsgs...)
		res.Messages = append(res.Messages, toolMsgs...)
		if ctx.Err() != nil {
			r.fail(ctx, context.Cause(ctx))
			return
		}
	}
}

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
	am := transcript.Message{Role: "assistant", Content: transcript.Text(answer)}
	r.res.Messages = append(r.res.Messages, am)
	r.res.Answer = answer
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
		} else {
			r.res.Error = "the model call failed"
		}
	}
}

func userContent(text string, images []Image) transcript.Message {
	if len(images) == 0 {
		return transcript.Message{Role: "user", Content: transcript.Text(text)}
	}
	parts := []any{map[string]any{"type": "text", "text": text}}
	for _, im := range images {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{
			"url": "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}})
	}
	b, _ := json.Marshal(parts) // maps of strings always marshal
	return transcript.Message{Role: "user", Content: b}
}

type done struct {
	i       int
	res     *tools.Result
	err     error
	dur     time.Duration
	unknown bool // the model named a tool the turn does not have
}

// runTools runs one step's calls concurrently and returns the tool
// messages in call order.
func (r *runner) runTools(ctx context.Context, byName map[string]tools.Tool, calls []transcript.ToolCall) []transcript.Message {
	for _, c := range calls {
		r.send(Event{"type": EventToolStarted, "call_id": c.ID, "name": c.Function.Name, "arguments": c.Function.Arguments})
	}
	ch := make(chan done, len(calls))
	sem := make(chan struct{}, MaxParallelCalls)
	for i, c := range calls {
		t, ok := byName[c.Function.Name]
		if !ok {
			ch <- done{i: i, res: &tools.Result{Output: fmt.Sprintf("error: there is no tool named %q", c.Function.Name), IsError: true}, unknown: true}
			continue
		}
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t0 := time.Now()
			res, err := t.Run(ctx, r.in.Turn, tools.Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			ch <- done{i: i, res: res, err: err, dur: time.Since(t0)}
		}()
	}
	results := make([]*tools.Result, len(calls))
	for range calls {
		d := <-ch
		c := calls[d.i]
		res := d.res
		outcome := OutcomeOK
		if d.err != nil || res == nil {
			msg := "error: the tool call failed"
			outcome = OutcomeFailed
			switch {
			case ctx.Err() != nil:
				msg = "error: the turn was stopped before the tool finished"
				outcome = OutcomeStopped
			case d.err != nil:
				msg = "error: the tool call failed: " + shortErr(d.err)
			}
			res = &tools.Result{Output: msg, IsError: true}
		} else if res.IsError {
			outcome = OutcomeError
		}
		if r.cfg.Observer != nil {
			name := c.Function.Name
			if d.unknown {
				name, outcome = "unknown", OutcomeUnknownTool
			}
			r.cfg.Observer.ToolCall(name, outcome, d.dur)
		}
		r.checkFiles(c.ID, res)
		results[d.i] = res
		ev := Event{"type": EventToolFinished, "call_id": c.ID, "name": c.Function.Name, "ok": !res.IsError,
			"preview": preview(res.Output), "elapsed_ms": d.dur.Milliseconds(), "truncated": res.Truncated}
		if res.ExitCode != nil {
			ev["exit_code"] = *res.ExitCode
		}
		if res.IsError {
			ev["error"] = firstLine(res.Output)
		}
		r.send(ev)
		for _, f := range res.Files {
			if r.cfg.AcceptFile != nil && !r.cfg.AcceptFile(f.MediaType) {
				continue
			}
			r.res.Files = append(r.res.Files, File{CallID: c.ID, File: f})
			r.send(Event{"type": EventFileAttached, "call_id": c.ID, "name": f.Name, "media_type": f.MediaType, "size": len(f.Content)})
		}
		r.res.Components = append(r.res.Components, res.Components...)
	}
	out := make([]transcript.Message, len(calls))
	for i, c := range calls {
		out[i] = transcript.Message{Role: "tool", ToolCallID: c.ID, Content: transcript.Text(results[i].Output)}
	}
	return out
}

// checkFiles is the vessel's check of the files a call returned, the second
// of the spec's two (sandboxd's is the first, and a sandbox is not trusted
// to have made it): a file breaking any rule of outputfiles is dropped, a
// kept file's media type comes from its checked content, and the call's
// output tells the model which files were attached and why any others
// were refused, sandboxd's refusals included.
func (r *runner) checkFiles(callID string, res *tools.Result) {
	if len(res.Files) == 0 && len(res.Refused) == 0 {
		return
	}
	allowed := outputfiles.AllowedTypes(r.cfg.OutputFiles)
	var kept []tools.File
	for _, f := range res.Files {
		mediaType, why := outputfiles.Check(f.Name, f.Content, allowed)
		if why == "" && len(kept) >= outputfiles.MaxPerCall {
			why = outputfiles.PerCallReason
		}
		if why == "" && !r.files.Reserve(int64(len(f.Content))) {
			why = outputfiles.PerTurnReason
		}
		if why != "" {
			res.Refused = append(res.Refused, tools.Refused{Name: f.Name, Reason: why})
			if r.cfg.FileRefused != nil {
				r.cfg.FileRefused(callID, f.Name, why)
			}
			continue
		}
		f.MediaType = mediaType
		kept = append(kept, f)
	}
	res.Files = kept
	var notes []string
	for _, f := range res.Files {
		notes = append(notes, fmt.Sprintf("file attached: %s (%s, %d bytes)", f.Name, f.MediaType, len(f.Content)))
	}
	for _, f := range res.Refused {
		notes = append(notes, fmt.Sprintf("file refused: %s: %s", shownName(f.Name), firstLine(f.Reason)))
	}
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		res.Output += "\n"
	}
	res.Output += "[" + strings.Join(notes, "; ") + "]"
}

// shownName is a refused file's name as the model reads it: quoted (and
// cut short) unless it is a plain name, so a hostile name cannot pose as
// the tool's own words.
func shownName(name string) string {
	if outputfiles.NamePattern.MatchString(name) {
		return name
	}
	return strconv.Quote(truncate(name, 128))
}

// shortErr keeps the first line of an infrastructure error for the model.
func shortErr(err error) string { return truncate(firstLine(err.Error()), 300) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(s, 300)
}

func preview(s string) string { return truncate(s, PreviewChars) }

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n]) + "…"
}
