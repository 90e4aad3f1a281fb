// Package loop runs one turn of an agent: ask the model, run the tools it
// asks for, hand back the results, repeat until it answers without tools,
// hits its step limit, its deadline, or is cancelled.
package loop

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
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
	// ReasonBudget is turn.finished's reason for a model_error the
	// egress's token budget caused ([budgets]).
	ReasonBudget = "budget"
	// StatusOutputLimit: the model's output went over a limit (the turn's
	// answer text, one tool call's arguments, one stream line, or the tool
	// calls of one step); its stream was closed at once.
	StatusOutputLimit = "output_limit"
	// StatusShutdown: the vessel was stopping and the turn did not finish
	// within the shutdown grace period.
	StatusShutdown = "shutdown"
	// StatusPaused is not an end: the turn waits for approval of some of
	// its calls (Result.Pause); it never appears in turn.finished.
	StatusPaused = "paused"
	// StatusApprovalTimeout: no decision came in time and the policy says
	// a timeout fails the turn.
	StatusApprovalTimeout = "approval_timeout"
	// StatusIncomplete: a step's answer ended normally but is not a
	// complete answer; Reason says why (model.IncompleteLength,
	// IncompleteContentFilter, IncompleteRefusal, IncompleteBadArguments)
	// and the answer is what was streamed (the refusal's text for a
	// refusal). No tool call of that step runs.
	StatusIncomplete = "incomplete"
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
	// EventModelRetry: a model call failed before anything streamed and is
	// tried again after wait_ms.
	EventModelRetry = "model.retry"
)

// ErrCancelled is the cancel cause of a turn stopped by CancelTask.
var ErrCancelled = errors.New("turn cancelled")

// ErrDeadline is the cancel cause of a turn past its deadline.
var ErrDeadline = errors.New("turn deadline passed")

// ErrShutdown is the cancel cause of a turn stopped because the vessel is
// stopping.
var ErrShutdown = errors.New("the vessel is shutting down")

// EndTurnTimeout bounds ending a turn's workspace, retries included.
const EndTurnTimeout = 15 * time.Second

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
	MaxSteps  int // default vesseldefaults.DefaultMaxSteps
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
	// defaults (1 MiB each, the deployer's defaults too).
	MaxAnswerBytes    int
	MaxArgumentsBytes int
	// Observer hears of each model call and tool call (the metrics); nil
	// hears nothing.
	Observer Observer
	// Approval says which calls wait for a decision; nil means none. A
	// step with such a call pauses before any of its calls runs.
	Approval *approval.Policy
	// NewApprovalID names a pause; default a random id.
	NewApprovalID func() string

	// ModelSettings are the agent's request settings (vessel.toml
	// [model]); nil sends none.
	ModelSettings *model.Settings
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
	OutcomeDenied      = "denied"       // the approver refused the call (or no decision came)
)

// Input is one turn.
type Input struct {
	Turn    *tools.Turn
	Text    string
	History []transcript.Message // Run takes it over (and may reuse its list) and sets it to nil
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
	Error            string // a short reason for model_error, output_limit, shutdown and approval_timeout
	// Reason classifies a model_error: ReasonBudget when the egress
	// refused or cut the call for a token budget; and an incomplete turn:
	// the model.Incomplete reason; else "".
	Reason  string
	Started time.Time
	Total   time.Duration
	// PausedTime is the time spent waiting for decisions (within Total).
	PausedTime time.Duration
	// Pause is set with StatusPaused: the calls waiting and the way to go on.
	Pause      *Pause
	ModelTime  time.Duration
	ToolTime   time.Duration
	FirstToken time.Duration // from the start to the first streamed token; 0 if none
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
			"paused_ms": r.PausedTime.Milliseconds(),
		},
	}
	if r.Error != "" {
		ev["error"] = r.Error
	}
	if r.Reason != "" {
		ev["reason"] = r.Reason
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
//
// A turn whose step holds a call that needs approval (Config.Approval)
// returns with StatusPaused and Result.Pause; its workspace is kept until
// the turn goes on (Pause.Resume) and ends, or is abandoned (Pause.End).
func Run(ctx context.Context, cfg *Config, in *Input, emit func(Event) bool) *Result {
	r := &runner{cfg: cfg, in: in, emit: emit, res: &Result{Started: time.Now()}}
	r.run(ctx)
	r.finish(ctx)
	return r.res
}

// finish ends the turn's workspace unless the turn paused.
func (r *runner) finish(ctx context.Context) {
	r.res.Total = time.Since(r.res.Started)
	if r.res.Status == StatusPaused {
		return
	}
	r.res.Pause = nil
	r.endWorkspace(ctx)
}

func (r *runner) endWorkspace(ctx context.Context) {
	if r.cfg.Ender != nil && r.in.Turn != nil {
		// The turn's ctx may be done; ending the workspace must still happen.
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), EndTurnTimeout)
		// The Ender retries and reports a failure itself (the vessel's
		// counts and logs it); what it cannot end, the vessel's turn sweep
		// and sandboxd's idle expiry remove later.
		_ = r.cfg.Ender.EndTurn(ectx, r.in.Turn.ID)
		cancel()
	}
}

// Pause is a turn waiting for decisions on some calls of one step. It is
// used by one goroutine at a time: Resume or End, once.
type Pause struct {
	r       *runner
	calls   []transcript.ToolCall // the step's calls, all of them
	Request *approval.Request
	since   time.Time
}

// Resume goes on with the paused step: each waiting call is run as
// decided (approved, with edited arguments, or refused with the reason),
// the step's other calls run as they are, and the turn continues. cfg and
// emit replace the turn's (the caller asking now may accept other files);
// decisions must hold one entry per waiting call (approval.Check).
func (p *Pause) Resume(ctx context.Context, cfg *Config, decisions map[string]approval.Decision, emit func(Event) bool) *Result {
	r := p.r
	r.cfg, r.emit = cfg, emit
	r.res.PausedTime += time.Since(p.since)
	r.res.Status, r.res.Pause = "", nil
	r.decided = decisions
	r.afterPause(ctx, p.calls)
	r.finish(ctx)
	return r.res
}

// End abandons the paused turn with status (StatusCancelled,
// StatusApprovalTimeout, StatusShutdown) and a short reason, ending its
// workspace.
func (p *Pause) End(ctx context.Context, status, reason string) *Result {
	r := p.r
	r.res.PausedTime += time.Since(p.since)
	r.res.Status, r.res.Error, r.res.Pause = status, reason, nil
	r.finish(ctx)
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

	// The state of the step loop, kept across a pause.
	prompt             string
	msgs               []transcript.Message
	defs               []model.ToolDef
	byName             map[string]tools.Tool
	step, maxSteps     int
	maxText, maxArgs   int
	textUsed, argsUsed int
	maxAllArgs         int
	cache              *model.MessageCache
	decided            map[string]approval.Decision // decisions for the step being resumed
}

func (r *runner) send(ev Event) {
	r.flushText()
	r.emit(ev)
}

func (r *runner) run(ctx context.Context) {
	cfg, in, res := r.cfg, r.in, r.res
	prompt, err := cfg.Prompt()
	if err != nil {
		res.Status, res.Error = StatusModelError, "the agent's prompt could not be read"
		return
	}
	r.prompt = prompt
	userMsg := transcript.Message{Role: "user", Content: transcript.Text(in.Text)}
	res.Messages = append(res.Messages, userMsg)
	// msgs is the system message, the history and the user message. The
	// history's own list becomes it when it has the room (a parsed one has,
	// see transcript.SpareMessages): one list of the history per turn.
	hist := in.History
	in.History = nil // Run takes it over
	system := transcript.Message{Role: "system", Content: transcript.Text(prompt)}
	var msgs []transcript.Message
	if n := len(hist); cap(hist)-n >= transcript.SpareMessages {
		msgs = hist[:n+1]
		copy(msgs[1:], hist[:n])
		msgs[0] = system
	} else {
		msgs = make([]transcript.Message, 0, n+transcript.SpareMessages)
		msgs = append(msgs, system)
		msgs = append(msgs, hist...)
	}
	msgs = append(msgs, userContent(in.Text, in.Images))
	r.msgs = msgs

	for _, t := range in.Tools {
		if p, ok := t.(tools.Preparer); ok {
			p.Prepare(ctx, in.Turn)
		}
	}
	r.defs = make([]model.ToolDef, 0, len(in.Tools))
	r.byName = map[string]tools.Tool{}
	names := make([]any, 0, len(in.Tools))
	for _, t := range in.Tools {
		d := t.Def()
		r.defs = append(r.defs, d)
		r.byName[d.Function.Name] = t
		names = append(names, d.Function.Name)
	}
	started := Event{"type": EventTurnStarted, "tools": names}
	if in.Turn != nil {
		started["task_id"], started["context_id"], started["agent"] = in.Turn.ID, in.Turn.ContextID, in.Turn.Agent
	}
	r.send(started)

	r.maxSteps = cfg.MaxSteps
	if r.maxSteps <= 0 {
		r.maxSteps = vesseldefaults.DefaultMaxSteps
	}
	r.maxText, r.maxArgs = cfg.MaxAnswerBytes, cfg.MaxArgumentsBytes
	if r.maxText <= 0 {
		r.maxText = model.DefaultMaxText
	}
	if r.maxArgs <= 0 {
		r.maxArgs = model.DefaultMaxArguments
	}
	r.maxAllArgs = model.TurnArgumentsFactor * r.maxArgs
	r.cache = &model.MessageCache{} // msgs only grow during a turn
	r.steps(ctx)
}

// steps runs model steps from r.step until the turn ends or pauses.
func (r *runner) steps(ctx context.Context) {
	cfg, res := r.cfg, r.res
	for ; ; r.step++ {
		final := r.step >= r.maxSteps
		req := &model.Request{Model: cfg.ModelName, Messages: r.msgs, Tools: r.defs, Cache: r.cache, Settings: cfg.ModelSettings,
			Limits: model.Limits{Text: max(r.maxText-r.textUsed, 1), Reasoning: max(r.maxText-r.reasoning, 1),
				Arguments: r.maxArgs, AllArguments: max(r.maxAllArgs-r.argsUsed, 1)}}
		if final {
			req.Tools = nil
			req.Messages = withStepLimitNote(r.msgs, r.prompt)
			req.Cache = nil // its first message is no longer the cached one
		}
		t0 := time.Now()
		mctx, span := startModelSpan(ctx, cfg.ModelName, r.step)
		resp, err := cfg.Model.Complete(mctx, req, r)
		endModelSpan(span, resp, err)
		md := time.Since(t0)
		res.ModelTime += md
		if cfg.Observer != nil {
			cfg.Observer.ModelCall(md, err)
		}
		r.flushText()
		res.Steps++
		if err == nil && r.reasoning > r.maxText {
			err = &model.LimitError{What: model.LimitReasoning, Limit: r.maxText}
		}
		if err == nil {
			err = checkLimits(resp, r.maxText-r.textUsed, r.maxArgs, r.maxAllArgs-r.argsUsed) // for a Modeler that does not apply them
		}
		if errors.Is(err, model.ErrOutputLimit) {
			r.overLimit(resp, err, r.maxText-r.textUsed, r.maxText, r.maxArgs)
			return
		}
		if errors.Is(err, model.ErrIncomplete) && resp != nil && ctx.Err() == nil {
			r.incomplete(resp, err)
			return
		}
		if err != nil {
			r.fail(ctx, err)
			return
		}
		r.textUsed += len(resp.Content)
		for _, c := range resp.ToolCalls {
			r.argsUsed += len(c.Function.Name) + len(c.Function.Arguments)
		}
		res.PromptTokens += resp.Usage.PromptTokens
		res.CompletionTokens += resp.Usage.CompletionTokens
		calls := resp.ToolCalls
		if final {
			calls = nil // tools were not offered; ignore any the model invents
		}
		uniqueIDs(calls)
		am := transcript.Message{Role: "assistant", ToolCalls: calls, Extra: resp.Extra}
		if resp.Content != "" || len(calls) == 0 {
			am.Content = transcript.Text(resp.Content)
		}
		r.msgs = append(r.msgs, am)
		res.Messages = append(res.Messages, am)
		if len(calls) == 0 {
			res.Answer = resp.Content
			res.Status = StatusOK
			if final {
				res.Status = StatusStepLimit
			}
			return
		}
		if r.pause(calls) {
			return
		}
		if !r.runStep(ctx, calls) {
			return
		}
	}
}

// runStep runs one step's calls and appends their results; false means
// the turn was stopped meanwhile (its status is set).
func (r *runner) runStep(ctx context.Context, calls []transcript.ToolCall) bool {
	t1 := time.Now()
	toolMsgs := r.runTools(ctx, r.byName, calls)
	r.res.ToolTime += time.Since(t1)
	r.decided = nil
	r.msgs = append(r.msgs, toolMsgs...)
	r.res.Messages = append(r.res.Messages, toolMsgs...)
	if ctx.Err() != nil {
		r.fail(ctx, context.Cause(ctx))
		return false
	}
	return true
}

// afterPause runs the resumed step and goes on with the next.
func (r *runner) afterPause(ctx context.Context, calls []transcript.ToolCall) {
	if ctx.Err() != nil {
		r.fail(ctx, context.Cause(ctx))
		return
	}
	if !r.runStep(ctx, calls) {
		return
	}
	r.step++
	r.steps(ctx)
}

// pause stops the turn before a step that holds a call needing approval;
// it reports whether it did.
func (r *runner) pause(calls []transcript.ToolCall) bool {
	pol := r.cfg.Approval
	if pol.Empty() {
		return false
	}
	var waiting []approval.Call
	for _, c := range calls {
		t, ok := r.byName[c.Function.Name]
		if !ok {
			continue // refused as an unknown tool when the step runs
		}
		service := ""
		if s, ok := t.(approval.Servicer); ok {
			service = s.Service()
		}
		need, why := pol.Needs(c.Function.Name, t.Scope(), service)
		if !need {
			continue
		}
		waiting = append(waiting, approval.Call{CallID: c.ID, Tool: c.Function.Name, Arguments: c.Function.Arguments,
			Scope: t.Scope(), Service: service, Reason: why, Editable: pol.AllowEdit})
	}
	if len(waiting) == 0 {
		return false
	}
	id := ""
	if r.cfg.NewApprovalID != nil {
		id = r.cfg.NewApprovalID()
	} else {
		id = randomID()
	}
	now := time.Now()
	req := &approval.Request{Type: approval.EventRequired, ApprovalID: id, Calls: waiting, Step: r.step + 1,
		ExpiresAt: now.Add(pol.Timeout).UTC().Format(time.RFC3339Nano), TimeoutSeconds: int(pol.Timeout / time.Second),
		OnTimeout: pol.OnTimeout}
	r.res.Status = StatusPaused
	r.res.Pause = &Pause{r: r, calls: calls, Request: req, since: now}
	return true
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
	denied  bool // the approver refused the call
}

// refusedOutput is what the model reads for a refused call.
func refusedOutput(reason string) string {
	out := "error: the call was refused by the approver and did not run"
	if reason != "" {
		out += "; their reason: " + strconv.Quote(truncate(reason, approval.MaxReasonChars))
	}
	return out
}

// approvalWord is the approval field of tool events for a verdict.
func approvalWord(verdict string) string {
	switch verdict {
	case approval.Deny:
		return "denied"
	case approval.Edit:
		return "edited"
	}
	return "approved"
}

// editedNote tells the model that the approver changed a call's arguments.
func editedNote(args string) string {
	return "note: the approver edited this call's arguments before it ran; it ran with " + truncate(args, PreviewChars) + "\n"
}

// runTools runs one step's calls concurrently and returns the tool
// messages in call order.
func (r *runner) runTools(ctx context.Context, byName map[string]tools.Tool, calls []transcript.ToolCall) []transcript.Message {
	for _, c := range calls {
		ev := Event{"type": EventToolStarted, "call_id": c.ID, "name": c.Function.Name, "arguments": c.Function.Arguments}
		if d, ok := r.decided[c.ID]; ok {
			ev["approval"] = approvalWord(d.Verdict)
			if d.Verdict == approval.Edit {
				ev["arguments"] = d.Arguments
			}
		}
		r.send(ev)
	}
	ch := make(chan done, len(calls))
	sem := make(chan struct{}, MaxParallelCalls)
	for i, c := range calls {
		t, ok := byName[c.Function.Name]
		if !ok {
			ch <- done{i: i, res: &tools.Result{Output: fmt.Sprintf("error: there is no tool named %q", c.Function.Name), IsError: true}, unknown: true}
			continue
		}
		args := c.Function.Arguments
		if d, ok := r.decided[c.ID]; ok {
			switch d.Verdict {
			case approval.Deny:
				ch <- done{i: i, res: &tools.Result{Output: refusedOutput(d.Reason), IsError: true}, denied: true}
				continue
			case approval.Edit:
				args = d.Arguments
			}
		}
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			t0 := time.Now()
			tctx, span := startToolSpan(ctx, c.Function.Name, c.ID)
			res, err := t.Run(tctx, r.in.Turn, tools.Call{ID: c.ID, Name: c.Function.Name, Arguments: args})
			endToolSpan(span, res, err)
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
		if d.denied {
			outcome = OutcomeDenied
		}
		if dec, ok := r.decided[c.ID]; ok && dec.Verdict == approval.Edit && !d.unknown {
			res.Output = editedNote(dec.Arguments) + res.Output
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
		if dec, ok := r.decided[c.ID]; ok {
			ev["approval"] = approvalWord(dec.Verdict)
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

// randomID is a pause's id: 16 random bytes in hex.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return hex.EncodeToString(b[:])
}
