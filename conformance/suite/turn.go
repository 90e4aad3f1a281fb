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

// streamTurn runs a streamed turn; onWorking, when set, is called (once) at
// the first working status, and the stream goes on afterwards.
func (e *env) streamTurn(ctx context.Context, params obj, a auth, onWorking func(taskID string)) (*turn, error) {
	t := &turn{}
	phase := 0 // 0 want task, 1 statuses, 2 artifacts, 3 answer seen, 4 final seen
	artifacts := map[string]obj{}
	names := map[string]string{}
	transcriptLast := false
	calledWorking := false
	violate := func(format string, args ...any) {
		if t.orderErr == nil {
			t.orderErr = fmt.Errorf("frame %d: %s", len(t.frames), fmt.Sprintf(format, args...))
		}
	}
	hr, frames, err := e.stream(ctx, e.cfg.Agent, "SendStreamingMessage", params, a, func(f frame) bool {
		if phase == 4 {
			violate("a %s frame after the final status", f.kind)
		}
		switch f.kind {
		case "error":
			t.errFrame = f.body
			return false
		case "task":
			if phase != 0 {
				violate("a second task frame")
			}
			t.taskID, t.contextID = getStr(f.body, "id"), getStr(f.body, "contextId")
			if s := getStr(getObj(f.body, "status"), "state"); s != stateSubmitted {
				violate("the task frame is in state %s, want %s", s, stateSubmitted)
			}
			phase = 1
		case "statusUpdate":
			if phase == 0 {
				violate("a status update before the task frame")
				t.taskID, t.contextID = getStr(f.body, "taskId"), getStr(f.body, "contextId")
			}
			st := getObj(f.body, "status")
			state := getStr(st, "state")
			ev, _ := getObj(f.body, "metadata")[eventKey].(string)
			msg := getObj(st, "message")
			if terminal(state) {
				t.finalState, t.finalMsg = state, msg
				for _, p := range partsOf(msg) {
					if d, ok := p["data"].(map[string]any); ok {
						t.finished = d
					}
				}
				if state != stateRejected && ev != eventFinished {
					violate("the final status carries metadata %s=%q, want %q", eventKey, ev, eventFinished)
				}
				phase = 4
				return false
			}
			if phase >= 2 {
				violate("a working status (%s) after the turn's artifacts began", ev)
			}
			if state != stateWorking {
				violate("a non-final status in state %s, want %s", state, stateWorking)
			}
			if ev == "" {
				violate("a working status without metadata[%q]", eventKey)
			}
			parts := partsOf(msg)
			if len(parts) != 1 || parts[0]["data"] == nil {
				violate("a working status (%s) whose message has %d parts, want one data part", ev, len(parts))
			}
			t.events = append(t.events, ev)
			if onWorking != nil && !calledWorking {
				calledWorking = true
				onWorking(t.taskID)
			}
		case "artifactUpdate":
			art := getObj(f.body, "artifact")
			id := getStr(art, "artifactId")
			appendChunk, _ := f.body["append"].(bool)
			last, _ := f.body["lastChunk"].(bool)
			if name := getStr(art, "name"); name != "" && !appendChunk {
				names[id] = name
			}
			name := names[id]
			if appendChunk && artifacts[id] != nil {
				merged := append(getList(artifacts[id], "parts"), getList(art, "parts")...)
				artifacts[id]["parts"] = merged
			} else {
				cp := obj{}
				for k, v := range art {
					cp[k] = v
				}
				artifacts[id] = cp
			}
			switch {
			case name == "answer":
				if phase == 3 && !appendChunk {
					violate("a second answer artifact")
				}
				phase = 3
				t.answer = artifacts[id]
			case isTranscript(art) || name == "transcript":
				if phase >= 3 {
					violate("a transcript chunk after the answer")
				}
				if phase < 2 {
					phase = 2
				}
				msgs, err := transcriptMessages(art)
				if err != nil {
					violate("transcript chunk: %v", err)
				}
				t.transcript = append(t.transcript, msgs...)
				transcriptLast = transcriptLast || last
			default:
				if phase >= 3 {
					violate("artifact %q after the answer", name)
				}
				if phase < 2 {
					phase = 2
				}
			}
		case "message":
			violate("a bare message frame")
			return false
		default:
			violate("an SSE frame that is neither a result nor an error: %s", snippet([]byte(fmt.Sprint(f.raw))))
		}
		return true
	})
	t.http, t.frames = hr, frames
	if err != nil {
		return t, err
	}
	if hr.status != 200 {
		return t, fmt.Errorf("HTTP %d: %s", hr.status, snippet(hr.body))
	}
	if t.errFrame != nil {
		code, _ := t.errFrame["code"].(float64)
		return t, fmt.Errorf("error frame %d: %s", int(code), getStr(t.errFrame, "message"))
	}
	if t.finalState == "" {
		return t, fmt.Errorf("the stream ended after %d frames without a final status", len(frames))
	}
	if len(t.transcript) > 0 && !transcriptLast {
		violate("no transcript chunk had lastChunk: true")
	}
	return t, nil
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
