package suite

import (
	"context"
	"fmt"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// Task states and event names as the contract spells them.
const (
	stateSubmitted = "TASK_STATE_SUBMITTED"
	stateWorking   = "TASK_STATE_WORKING"
	stateCompleted = "TASK_STATE_COMPLETED"
	stateCanceled  = "TASK_STATE_CANCELED"
	stateRejected  = "TASK_STATE_REJECTED"
	stateFailed    = "TASK_STATE_FAILED"
	eventKey       = "vessel.event"
	eventFinished  = "turn.finished"
)

func terminal(s string) bool {
	switch s {
	case stateCompleted, stateCanceled, stateRejected, stateFailed:
		return true
	}
	return false
}

// turn is a streamed turn as seen on the wire.
type turn struct {
	http       *httpResult
	frames     []frame
	taskID     string
	contextID  string
	finalState string
	finalMsg   obj      // the final status message
	finished   obj      // the turn.finished payload
	events     []string // vessel.event of each working status
	answer     obj      // the answer artifact, parts merged
	transcript []client.Message
	orderErr   error // the first violation of the frame order
	errFrame   obj
}

// Phases of a streamed turn, in the order the contract allows them.
const (
	phaseWantTask  = iota // no frame yet: the task frame comes first
	phaseStatuses         // working statuses
	phaseArtifacts        // the turn's artifacts began (transcript, others)
	phaseAnswer           // the answer artifact seen
	phaseFinal            // the final status seen
)

// turnReader follows the frames of one streamed turn, fills its turn and
// records the first violation of the frame order.
type turnReader struct {
	t              *turn
	phase          int
	artifacts      map[string]obj // artifactId -> the artifact, chunks merged
	names          map[string]string
	transcriptLast bool
	onWorking      func(taskID string)
	calledWorking  bool
	// n counts the frames read so far, the one being read included (its
	// index is n-1): the turn's frames are only known once the stream ended.
	n int
}

// streamTurn runs a streamed turn; onWorking, when set, is called (once) at
// the first working status, and the stream goes on afterwards.
func (e *env) streamTurn(ctx context.Context, params obj, a auth, onWorking func(taskID string)) (*turn, error) {
	r := &turnReader{t: &turn{}, artifacts: map[string]obj{}, names: map[string]string{}, onWorking: onWorking}
	hr, frames, err := e.stream(ctx, e.cfg.Agent, "SendStreamingMessage", params, a, r.frame)
	t := r.t
	t.http, t.frames = hr, frames
	if err != nil {
		return t, err
	}
	return t, r.finish(hr, len(frames))
}

// finish checks how the stream ended: HTTP status, error frame, a final
// status, and the transcript's last chunk.
func (r *turnReader) finish(hr *httpResult, nFrames int) error {
	t := r.t
	if hr.status != 200 {
		return fmt.Errorf("HTTP %d: %s", hr.status, snippet(hr.body))
	}
	if t.errFrame != nil {
		code, _ := t.errFrame["code"].(float64)
		return fmt.Errorf("error frame %d: %s", int(code), getStr(t.errFrame, "message"))
	}
	if t.finalState == "" {
		return fmt.Errorf("the stream ended after %d frames without a final status", nFrames)
	}
	if len(t.transcript) > 0 && !r.transcriptLast {
		r.violateAt(fmt.Sprintf("the stream's end (%d frames)", nFrames), "no transcript chunk had lastChunk: true")
	}
	return nil
}

// violate records the first violation of the frame order, at the frame
// being read.
func (r *turnReader) violate(format string, args ...any) {
	r.violateAt(fmt.Sprintf("frame %d", r.n-1), format, args...)
}

// violateAt records the first violation of the frame order, where it was
// found.
func (r *turnReader) violateAt(where, format string, args ...any) {
	if r.t.orderErr == nil {
		r.t.orderErr = fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
}

// frame takes one SSE frame; false ends the stream.
func (r *turnReader) frame(f frame) bool {
	r.n++
	if r.phase == phaseFinal {
		r.violate("a %s frame after the final status", f.kind)
	}
	switch f.kind {
	case "error":
		r.t.errFrame = f.body
		return false
	case "task":
		r.taskFrame(f.body)
	case "statusUpdate":
		return r.statusUpdate(f.body)
	case "artifactUpdate":
		r.artifactUpdate(f.body)
	case "message":
		r.violate("a bare message frame")
		return false
	default:
		r.violate("an SSE frame that is neither a result nor an error: %s", snippet([]byte(fmt.Sprint(f.raw))))
	}
	return true
}

// taskFrame takes the task frame, which opens the stream in SUBMITTED.
func (r *turnReader) taskFrame(body obj) {
	t := r.t
	if r.phase != phaseWantTask {
		r.violate("a second task frame")
	}
	t.taskID, t.contextID = getStr(body, "id"), getStr(body, "contextId")
	if s := getStr(getObj(body, "status"), "state"); s != stateSubmitted {
		r.violate("the task frame is in state %s, want %s", s, stateSubmitted)
	}
	r.phase = phaseStatuses
}

// statusUpdate takes a status update: a final one ends the stream, a
// working one carries one data part and comes before the artifacts.
func (r *turnReader) statusUpdate(body obj) bool {
	t := r.t
	if r.phase == phaseWantTask {
		r.violate("a status update before the task frame")
		t.taskID, t.contextID = getStr(body, "taskId"), getStr(body, "contextId")
	}
	st := getObj(body, "status")
	state := getStr(st, "state")
	ev, _ := getObj(body, "metadata")[eventKey].(string)
	msg := getObj(st, "message")
	if terminal(state) {
		r.finalStatus(state, ev, msg)
		return false
	}
	r.workingStatus(state, ev, msg)
	return true
}

// finalStatus takes the terminal status and its turn.finished payload.
func (r *turnReader) finalStatus(state, ev string, msg obj) {
	t := r.t
	t.finalState, t.finalMsg = state, msg
	for _, p := range partsOf(msg) {
		if d, ok := p["data"].(map[string]any); ok {
			t.finished = d
		}
	}
	if state != stateRejected && ev != eventFinished {
		r.violate("the final status carries metadata %s=%q, want %q", eventKey, ev, eventFinished)
	}
	r.phase = phaseFinal
}

// workingStatus takes a non-final status and calls onWorking at the first.
func (r *turnReader) workingStatus(state, ev string, msg obj) {
	t := r.t
	if r.phase >= phaseArtifacts {
		r.violate("a working status (%s) after the turn's artifacts began", ev)
	}
	if state != stateWorking {
		r.violate("a non-final status in state %s, want %s", state, stateWorking)
	}
	if ev == "" {
		r.violate("a working status without metadata[%q]", eventKey)
	}
	parts := partsOf(msg)
	if len(parts) != 1 || parts[0]["data"] == nil {
		r.violate("a working status (%s) whose message has %d parts, want one data part", ev, len(parts))
	}
	t.events = append(t.events, ev)
	if r.onWorking != nil && !r.calledWorking {
		r.calledWorking = true
		r.onWorking(t.taskID)
	}
}

// artifactUpdate merges an artifact chunk and checks where it comes: the
// transcript and other artifacts before the answer, one answer.
func (r *turnReader) artifactUpdate(body obj) {
	art := getObj(body, "artifact")
	id := getStr(art, "artifactId")
	appendChunk, _ := body["append"].(bool)
	last, _ := body["lastChunk"].(bool)
	name := r.mergeChunk(id, art, appendChunk)
	switch {
	case name == "answer":
		if r.phase == phaseAnswer && !appendChunk {
			r.violate("a second answer artifact")
		}
		r.phase = phaseAnswer
		r.t.answer = r.artifacts[id]
	case isTranscript(art) || name == "transcript":
		if r.phase >= phaseAnswer {
			r.violate("a transcript chunk after the answer")
		}
		r.artifactsBegin()
		msgs, err := transcriptMessages(art)
		if err != nil {
			r.violate("transcript chunk: %v", err)
		}
		r.t.transcript = append(r.t.transcript, msgs...)
		r.transcriptLast = r.transcriptLast || last
	default:
		if r.phase >= phaseAnswer {
			r.violate("artifact %q after the answer", name)
		}
		r.artifactsBegin()
	}
}

// mergeChunk adds an artifact chunk to the artifact it belongs to and
// returns the artifact's name (named by its first chunk).
func (r *turnReader) mergeChunk(id string, art obj, appendChunk bool) string {
	if name := getStr(art, "name"); name != "" && !appendChunk {
		r.names[id] = name
	}
	if appendChunk && r.artifacts[id] != nil {
		merged := append(getList(r.artifacts[id], "parts"), getList(art, "parts")...)
		r.artifacts[id]["parts"] = merged
	} else {
		cp := obj{}
		for k, v := range art {
			cp[k] = v
		}
		r.artifacts[id] = cp
	}
	return r.names[id]
}

// artifactsBegin moves a turn still in its statuses to its artifacts.
func (r *turnReader) artifactsBegin() {
	if r.phase < phaseArtifacts {
		r.phase = phaseArtifacts
	}
}

func isTranscript(art obj) bool {
	for _, p := range partsOf(art) {
		if getStr(p, "mediaType") == client.TranscriptMediaType {
			return true
		}
	}
	return false
}

// markdown returns the text/markdown text of an answer artifact.
func markdown(art obj) (string, bool) {
	var b strings.Builder
	found := false
	for _, p := range partsOf(art) {
		if s, ok := p["text"].(string); ok && (getStr(p, "mediaType") == client.MarkdownMediaType || getStr(p, "mediaType") == "") {
			b.WriteString(s)
			found = found || getStr(p, "mediaType") == client.MarkdownMediaType
		}
	}
	return b.String(), found
}

// answerOf finds the answer artifact of a task object.
func answerOf(task obj) obj {
	for _, a := range getList(task, "artifacts") {
		if ao, ok := a.(map[string]any); ok && getStr(ao, "name") == "answer" {
			return ao
		}
	}
	return nil
}

// statusText joins the text parts of a status message.
func statusText(msg obj) string {
	var b strings.Builder
	for _, p := range partsOf(msg) {
		if s, ok := p["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}
