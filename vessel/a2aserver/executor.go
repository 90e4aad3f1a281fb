package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/usage"
	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

// EventMetaKey is the status-update metadata key naming the event type.
const EventMetaKey = "vessel.event"

// ReasonMetaKey is the final status update's metadata key holding
// turn.finished's reason (budget, or an incomplete answer's: length,
// content_filter, refusal, bad_tool_arguments).
const ReasonMetaKey = "vessel.reason"

// Artifact names.
const (
	ArtifactTranscript = "transcript"
	ArtifactFile       = "file"
	ArtifactAnswer     = store.AnswerArtifactName
)

// transcriptChunkBytes bounds one transcript chunk's encoded size.
const transcriptChunkBytes = 256 << 10

// cancelWait bounds how long CancelTask waits for the turn to wind down.
const cancelWait = 10 * time.Second

type executor struct {
	srv      *Server
	agent    *settings.Agent
	tools    *tools.Set
	loopCfg  loop.Config
	imageOpt turn.Options
	deadline time.Duration
	log      *zap.Logger
	met      *agentMetrics
	// shape is the agent's structured answer (structured.go); nil for text.
	shape *answerShape

	// policy is the agent's approval policy; self is the agent's handler
	// behind the call interceptors, through which a timed-out pause sends
	// itself its decision.
	policy *approval.Policy
	self   a2asrv.RequestHandler

	mu      sync.Mutex
	running map[string]*run
	waiting map[string]*pausedTurn // turns paused for approval, by task id
	// cancelled are the paused turns a CancelTask took, by task id, when:
	// a decision that raced the cancel finds its turn gone and must end
	// the task CANCELED, not as a turn this vessel lost.
	cancelled map[string]time.Time
}

// run is a turn in flight, so CancelTask can stop it and report its end.
type run struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
	result *loop.Result // set before done is closed
	// For the operator's list (Server.Turns).
	owner, contextID string
	started          time.Time
}

type toolsKey struct{}

func withTools(ctx context.Context, list []tools.Tool) context.Context {
	return context.WithValue(ctx, toolsKey{}, list)
}

// narrow applies the caller's scopes to the agent's tools.
func (s *Server) narrow(r *http.Request, p *auth.Principal, a *agent) ([]tools.Tool, error) {
	all := a.exec.tools.Filter(nil)
	if s.cfg.NarrowTools != nil {
		return s.cfg.NarrowTools(r, p, all)
	}
	if p.Scopes == nil {
		return all, nil
	}
	return slices.DeleteFunc(all, func(t tools.Tool) bool { return !slices.Contains(p.Scopes, t.Scope()) }), nil
}

func statusEvent(ec *a2asrv.ExecutorContext, state a2a.TaskState, ev loop.Event) *a2a.TaskStatusUpdateEvent {
	msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewDataPart(map[string]any(ev)))
	up := a2a.NewStatusUpdateEvent(ec, state, msg)
	up.Metadata = map[string]any{EventMetaKey: ev.Type()}
	return up
}

// Execute runs one turn and emits its frames in the spec's order. A
// message on a task waiting for approval resumes it (resume).
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		// The turn holds its admitted place until it ends or pauses, also
		// after its request returned (returnImmediately): the place is freed
		// just before the event that ends it leaves (turnPlace), or here when
		// the turn ended with nobody listening.
		place := claimPlace(ctx)
		defer place.free()
		yield = place.freeing(yield)
		if ec.StoredTask != nil && ec.StoredTask.Status.State == a2a.TaskStateInputRequired {
			e.resume(ctx, ec, yield, place)
			return
		}
		id := string(ec.TaskID)
		var userText string
		opt := e.imageOpt
		opt.Aside = turn.AsideFrom(ctx) // the history, when the front handler lifted it
		in, perr := turn.Parse(ec.Message, ec.ContextID, opt)
		if perr == nil {
			userText = in.Text
		}
		if ec.Message == nil {
			yield(nil, fmt.Errorf("execution without a message"))
			return
		}
		if ec.StoredTask == nil {
			// Only the user's text goes into the task: never the history sent in.
			first := &a2a.Message{ID: ec.Message.ID, Role: a2a.MessageRoleUser, ContextID: ec.ContextID, TaskID: ec.TaskID}
			if userText != "" {
				first.Parts = a2a.ContentParts{a2a.NewTextPart(userText)}
			} else {
				first.Parts = a2a.ContentParts{}
			}
			if !yield(a2a.NewSubmittedTask(ec, first), nil) {
				return // nobody took the task: no turn started
			}
		}
		e.met.turnStarted()
		e.log.Debug("turn started", turnFields(ec)...)
		if perr != nil {
			msg := a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewTextPart(perr.Error()))
			yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateRejected, msg), nil)
			e.met.turnFinished("rejected", nil)
			e.log.Info("turn rejected", append(turnFields(ec), zap.String("reason", perr.Error()))...)
			return
		}

		list, ok := ctx.Value(toolsKey{}).([]tools.Tool)
		if !ok {
			e.tools.Refresh(ctx) // MCP servers with tools = ["*"] (docs/mcp.md)
			list = e.tools.Filter(nil)
		}
		images := make([]loop.Image, len(in.Images))
		for i, im := range in.Images {
			images[i] = loop.Image{MediaType: im.MediaType, Data: im.Data}
		}
		p, _ := auth.PrincipalFrom(ctx)
		tt := &tools.Turn{ID: id, ContextID: ec.ContextID, Agent: e.agent.ID, Owner: ownerOf(ec), Principal: p}
		pt := &pausedTurn{policy: e.policy.With(extraFrom(ctx)), owner: ownerOf(ec)}
		if p != nil {
			w := whoOf(p, e.agent.ID)
			pt.who = &w
		}
		input := &loop.Input{Turn: tt, Text: in.Text, History: in.History, Images: images, Tools: list}
		in.History = nil // the loop holds the history from here on, and drops what it no longer needs
		e.drive(ctx, ec, yield, place, pt, func(dctx context.Context, cfg *loop.Config, emit func(loop.Event) bool) *loop.Result {
			return loop.Run(dctx, cfg, input, emit)
		})
	}
}

// pausedTurn is what a turn carries across its pauses: its approval
// policy, the time it has worked (the deadline counts only that), and,
// while it waits, the pause and its timer.
type pausedTurn struct {
	policy *approval.Policy
	owner  string
	// who is whom the turn's places count for (nil: a turn started
	// without a caller, in tests): a resume the vessel sends itself
	// takes its place as them (selfPlace).
	who       *admission.Who
	contextID string
	worked    time.Duration
	pause     *loop.Pause
	timer     *time.Timer
}

// drive runs one stretch of a turn (its start, or its resumption after a
// pause) with the turn's remaining deadline, sends its events, and either
// sends the outputs and the final status or, when the turn paused again,
// the input-required status with the approval request.
func (e *executor) drive(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool, place turnPlace, pt *pausedTurn,
	step func(dctx context.Context, cfg *loop.Config, emit func(loop.Event) bool) *loop.Result) {
	id := string(ec.TaskID)
	r := &run{done: make(chan struct{}), owner: ownerOf(ec), contextID: ec.ContextID, started: time.Now()}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r.cancel = cancel
	defer cancel(nil)
	// The SDK cancels ctx when it stops consuming this execution (it failed
	// the task, or processed CANCELED): the turn has no reason to go on. A
	// client disconnect does not reach ctx.
	stopWatch := context.AfterFunc(ctx, func() { cancel(loop.ErrCancelled) })
	defer stopWatch()
	e.mu.Lock()
	e.running[id] = r
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.running, id)
		e.mu.Unlock()
	}()
	closed := false
	finish := func(res *loop.Result) {
		if !closed {
			closed = true
			r.result = res
			// A cancelled turn's outcome leaves through CancelTask, which
			// waits for done: the place is freed before, as before an
			// event that ends the turn (turnPlace).
			place.free()
			close(r.done)
		}
	}
	defer finish(nil)

	accepted := acceptedModes(ctx)
	cfg := e.loopCfg
	cfg.Approval = pt.policy
	cfg.AcceptFile = fileFilter(accepted)
	cfg.FileRefused = func(callID, name, reason string) {
		e.log.Warn("file refused", append(turnFields(ec),
			zap.String("call_id", callID), zap.String("name", name), zap.String("reason", reason))...)
	}
	// The model client and the web tools send the task id to the egress.
	// The deadline counts only the time the turn works, not its pauses.
	began := time.Now()
	tctx, span := startTurnSpan(runCtx, ec, e.agent.ID, pt.worked > 0)
	dctx, dcancel := context.WithDeadlineCause(telemetry.WithOwner(telemetry.WithTaskID(tctx, id), ownerOf(ec)), began.Add(max(e.deadline-pt.worked, 0)), loop.ErrDeadline)
	defer dcancel()
	listening := true
	emit := func(ev loop.Event) bool {
		if !listening {
			return false
		}
		if !yield(statusEvent(ec, a2a.TaskStateWorking, ev), nil) {
			listening = false
		}
		return listening
	}
	res := step(dctx, &cfg, emit)
	endTurnSpan(span, res)
	pt.worked += time.Since(began)
	if res.Status == loop.StatusPaused {
		e.paused(ec, pt, res)
		// The pause must be on record before CancelTask may look for it.
		finish(nil)
		if listening {
			yield(approvalEvent(ec, res.Pause.Request), nil)
		}
		return
	}
	e.finishTurn(ctx, ec, yield, res, listening, accepted, finish)
}

// finishTurn sends a finished turn's outputs and final status.
func (e *executor) finishTurn(ctx context.Context, ec *a2asrv.ExecutorContext, yield func(a2a.Event, error) bool, res *loop.Result,
	listening bool, accepted []string, finish func(*loop.Result)) {
	cancelled := res.Status == loop.StatusCancelled
	e.checkStructured(res)
	if listening {
		listening = e.emitOutputs(ec, res, accepted, func(ev a2a.Event, err error) bool {
			if !yield(ev, err) {
				return false
			}
			if au, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
				collectArtifact(ctx, au)
			}
			return true
		})
	}
	e.met.turnFinished(res.Status, res)
	e.logTurn(ec, res)
	if cancelled {
		// CancelTask's Cancel emits the final CANCELED status with turn.finished.
		finish(res)
		return
	}
	if !listening {
		return
	}
	state := a2a.TaskStateCompleted
	switch res.Status {
	case loop.StatusDeadline, loop.StatusModelError, loop.StatusOutputLimit, loop.StatusShutdown, loop.StatusApprovalTimeout,
		loop.StatusSchemaMismatch, loop.StatusIncomplete:
		state = a2a.TaskStateFailed
	}
	up := statusEvent(ec, state, res.FinishedEvent())
	if res.Reason != "" {
		up.Metadata[ReasonMetaKey] = res.Reason // machine-readable, beside the event's own reason
	}
	yield(up, nil)
}

// emitOutputs sends the transcript (when accepted), files and the answer.
func (e *executor) emitOutputs(ec *a2asrv.ExecutorContext, res *loop.Result, accepted []string, yield func(a2a.Event, error) bool) bool {
	if slices.Contains(accepted, transcript.MediaType) && len(res.Messages) > 0 {
		chunks := chunkTranscript(res.Messages)
		var artID a2a.ArtifactID
		for i, c := range chunks {
			part := &a2a.Part{Content: a2a.Raw(c), MediaType: transcript.MediaType}
			var ev *a2a.TaskArtifactUpdateEvent
			if i == 0 {
				ev = a2a.NewArtifactEvent(ec, part)
				ev.Artifact.Name = ArtifactTranscript
				artID = ev.Artifact.ID
			} else {
				ev = a2a.NewArtifactUpdateEvent(ec, artID, part)
			}
			ev.LastChunk = i == len(chunks)-1
			if !yield(ev, nil) {
				return false
			}
		}
	}
	for _, f := range res.Files {
		part := &a2a.Part{Content: a2a.Raw(f.Content), MediaType: f.MediaType, Filename: f.Name,
			Metadata: map[string]any{"call_id": f.CallID}}
		ev := a2a.NewArtifactEvent(ec, part)
		ev.Artifact.Name = ArtifactFile
		ev.LastChunk = true
		if !yield(ev, nil) {
			return false
		}
	}
	if res.Status == loop.StatusCancelled && res.Answer == "" {
		return true
	}
	var parts []*a2a.Part
	if e.srv.cfg.AnswerParts != nil {
		parts = e.srv.cfg.AnswerParts(res.Answer, res.Components)
	} else {
		parts = []*a2a.Part{{Content: a2a.Text(res.Answer), MediaType: MediaMarkdown}}
		if len(res.Components) > 0 {
			parts = append(parts, &a2a.Part{Content: a2a.Data{Value: map[string]any{"_ui_components": jsonShaped(res.Components)}},
				MediaType: MediaPrimitives})
		}
	}
	if p := e.structuredPart(res); p != nil {
		parts = append(parts, p)
	}
	ev := a2a.NewArtifactEvent(ec, parts...)
	ev.Artifact.Name = ArtifactAnswer
	ev.LastChunk = true
	return yield(ev, nil)
}

// jsonShaped round-trips v through JSON so the SDK's gob copies accept it.
func jsonShaped(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// chunkTranscript encodes messages as envelopes of bounded size; each
// chunk is a complete envelope.
func chunkTranscript(msgs []transcript.Message) [][]byte {
	var chunks [][]byte
	start, size := 0, 0
	for i, m := range msgs {
		b, _ := json.Marshal(m) // transcript messages always marshal
		if i > start && size+len(b) > transcriptChunkBytes {
			c, _ := transcript.Marshal(msgs[start:i])
			chunks = append(chunks, c)
			start, size = i, 0
		}
		size += len(b)
	}
	c, _ := transcript.Marshal(msgs[start:])
	return append(chunks, c)
}

// replyMediaTypes are the media types of the vessel's own reply parts.
var replyMediaTypes = map[string]bool{MediaMarkdown: true, MediaPrimitives: true, transcript.MediaType: true}

// fileFilter applies acceptedOutputModes to files. Listing file types
// limits the files sent to those types (or type/*, */*); the vessel's own
// reply types (the answer's markdown and primitives, the transcript) say
// nothing about files, so a list of only those, or an empty list, lets
// every file through.
func fileFilter(accepted []string) func(string) bool {
	var listed []string
	for _, m := range accepted {
		m = strings.ToLower(strings.TrimSpace(m))
		if !strings.Contains(m, "/") || replyMediaTypes[m] {
			continue
		}
		listed = append(listed, m)
	}
	if len(listed) == 0 {
		return nil
	}
	return func(mt string) bool {
		mt = strings.ToLower(mt)
		for _, l := range listed {
			if l == mt || l == "*/*" || (strings.HasSuffix(l, "/*") && strings.HasPrefix(mt, strings.TrimSuffix(l, "*"))) {
				return true
			}
		}
		return false
	}
}

// runningTurns counts the turns in flight.
func (e *executor) runningTurns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.running)
}

// stopAll stops every turn in flight with cause that is not in stopped
// yet, adds it there, and returns how many it stopped.
func (e *executor) stopAll(cause error, stopped map[*run]bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, r := range e.running {
		if !stopped[r] {
			stopped[r] = true
			r.cancel(cause)
			n++
		}
	}
	return n
}

// Cancel stops a running turn and emits its CANCELED status with
// turn.finished.
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if pt := e.takePausedToCancel(string(ec.TaskID)); pt != nil {
			res := pt.pause.End(ctx, loop.StatusCancelled, "")
			e.met.turnFinished(res.Status, res)
			e.logTurn(ec, res)
			yield(statusEvent(ec, a2a.TaskStateCanceled, res.FinishedEvent()), nil)
			return
		}
		e.mu.Lock()
		r := e.running[string(ec.TaskID)]
		e.mu.Unlock()
		res := &loop.Result{Status: loop.StatusCancelled}
		if r != nil {
			r.cancel(loop.ErrCancelled)
			t := time.NewTimer(cancelWait)
			select {
			case <-r.done:
				if r.result != nil {
					res = r.result
				}
			case <-t.C:
			}
			t.Stop()
		}
		res.Status = loop.StatusCancelled
		yield(statusEvent(ec, a2a.TaskStateCanceled, res.FinishedEvent()), nil)
	}
}

func ownerOf(ec *a2asrv.ExecutorContext) string {
	if ec.User != nil {
		return ec.User.Name
	}
	return ""
}

// turnFields are the fields of every log line about a turn (the agent is
// in the executor's logger already).
func turnFields(ec *a2asrv.ExecutorContext) []zap.Field {
	return []zap.Field{zap.String(telemetry.FieldTask, string(ec.TaskID)), zap.String(telemetry.FieldContext, ec.ContextID),
		zap.String(telemetry.FieldOwner, ownerOf(ec))}
}

// logTurn writes the turn's one log line; never keys or tokens.
func (e *executor) logTurn(ec *a2asrv.ExecutorContext, r *loop.Result) {
	fields := append(turnFields(ec), zap.String("status", r.Status),
		zap.Int("steps", r.Steps), zap.Int("prompt_tokens", r.PromptTokens), zap.Int("completion_tokens", r.CompletionTokens),
		zap.Int64("total_ms", r.Total.Milliseconds()), zap.Int64("model_ms", r.ModelTime.Milliseconds()),
		zap.Int64("tools_ms", r.ToolTime.Milliseconds()), zap.Int64("first_token_ms", r.FirstToken.Milliseconds()),
		zap.Int("files", len(r.Files)),
	)
	if r.Error != "" {
		fields = append(fields, zap.String("error", r.Error))
	}
	e.log.Info("turn", fields...)
	e.recordUsage(ec, r)
}

// recordUsage appends the turn's usage record; a log that cannot be
// written is logged, never fails the turn.
func (e *executor) recordUsage(ec *a2asrv.ExecutorContext, r *loop.Result) {
	if e.srv.cfg.Usage == nil {
		return
	}
	owner := ownerOf(ec)
	app, user := usage.SplitOwner(owner)
	calls := 0
	for i := range r.Messages {
		calls += len(r.Messages[i].ToolCalls)
	}
	rec := &usage.Record{Time: time.Now().UTC(), Task: string(ec.TaskID), Context: ec.ContextID, Owner: owner, App: app, User: user,
		Agent: e.agent.ID, Model: e.agent.Manifest.Model.Name, Route: e.agent.Route(), Status: r.Status,
		TokensIn: int64(r.PromptTokens), TokensOut: int64(r.CompletionTokens), Steps: int64(r.Steps), ToolCalls: int64(calls),
		Files: int64(len(r.Files)), DurationMS: r.Total.Milliseconds()}
	if err := e.srv.cfg.Usage.Record(rec); err != nil {
		e.log.Warn("usage record not written", append(turnFields(ec), zap.Error(err))...)
	}
}
