package client

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Artifact names and the metadata key of the A2A contract.
const (
	metaEventKey         = "vessel.event"
	artifactAnswer       = "answer"
	artifactTranscript   = "transcript"
	artifactFile         = "file"
	kindAnswer           = "answer"
	kindTranscript       = "transcript"
	kindFile             = "file"
	kindOther            = "other"
	maxTranscriptPending = 64 << 20 // bounds a transcript artifact sent in byte pieces
)

// artifactState accumulates an artifact sent in appended chunks.
type artifactState struct {
	kind      string
	name      string
	meta      map[string]any
	parts     []*a2a.Part
	pending   bytes.Buffer // transcript bytes not yet parsed
	done      bool
	lastChunk bool
}

// decoder turns a2a stream events into typed events. It is not safe for
// concurrent use.
type decoder struct {
	taskID    string
	contextID string
	state     a2a.TaskState
	started   bool
	finished  bool
	artifacts map[a2a.ArtifactID]*artifactState
	order     []a2a.ArtifactID
}

func newDecoder() *decoder {
	return &decoder{artifacts: map[a2a.ArtifactID]*artifactState{}}
}

// handle decodes one a2a event into zero or more typed events.
func (d *decoder) handle(ev a2a.Event) []Event {
	switch e := ev.(type) {
	case *a2a.Task:
		return d.task(e)
	case *a2a.TaskStatusUpdateEvent:
		if e == nil {
			return nil
		}
		return d.status(e.TaskID, e.ContextID, e.Status, e.Metadata)
	case *a2a.TaskArtifactUpdateEvent:
		if e == nil || e.Artifact == nil {
			return nil
		}
		return d.artifact(e)
	case *a2a.Message:
		if e == nil {
			return nil
		}
		// A bare message ends the call without a task: treat its text as the answer.
		out := []Event{Answer{Markdown: partsText(e.Parts)}}
		d.finished = true
		return append(out, TurnFinished{Status: "ok"})
	}
	return nil
}

func (d *decoder) task(t *a2a.Task) []Event {
	if t == nil {
		return nil
	}
	var out []Event
	if !d.started {
		d.started = true
		d.taskID, d.contextID = string(t.ID), t.ContextID
		out = append(out, TurnStarted{TaskID: d.taskID, ContextID: d.contextID})
	}
	// A task snapshot (non-streaming result, GetTask, or a subscription's
	// first frame) carries merged artifacts.
	for _, a := range t.Artifacts {
		if a == nil {
			continue
		}
		out = append(out, d.artifact(&a2a.TaskArtifactUpdateEvent{Artifact: a, LastChunk: true})...)
	}
	if t.Status.State.Terminal() || t.Status.State == a2a.TaskStateInputRequired {
		out = append(out, d.status(t.ID, t.ContextID, t.Status, t.Metadata)...)
	} else {
		d.state = t.Status.State
	}
	return out
}

func (d *decoder) status(taskID a2a.TaskID, contextID string, st a2a.TaskStatus, meta map[string]any) []Event {
	var out []Event
	if !d.started {
		d.started = true
		d.taskID, d.contextID = string(taskID), contextID
		out = append(out, TurnStarted{TaskID: d.taskID, ContextID: d.contextID})
	}
	d.state = st.State
	typ, data, text := statusPayload(st, meta)
	terminal := st.State.Terminal() || st.State == a2a.TaskStateInputRequired || st.State == a2a.TaskStateAuthRequired
	if !terminal {
		return append(out, d.progress(typ, data)...)
	}
	if d.finished {
		return out
	}
	out = append(out, d.flush()...)
	d.finished = true
	return append(out, d.final(st, typ, data, text))
}

// statusPayload reads a status update's event type (from the update's or
// the message's metadata, else the data part's "type"), its first data
// part and its text.
func statusPayload(st a2a.TaskStatus, meta map[string]any) (typ string, data map[string]any, text string) {
	typ, _ = meta[metaEventKey].(string)
	if st.Message != nil {
		for _, p := range st.Message.Parts {
			if p == nil {
				continue
			}
			switch c := p.Content.(type) {
			case a2a.Data:
				if m, ok := Normalize(c.Value).(map[string]any); ok && data == nil {
					data = m
				}
			case a2a.Text:
				text += string(c)
			}
		}
		if typ == "" {
			typ, _ = st.Message.Metadata[metaEventKey].(string)
		}
	}
	if typ == "" && data != nil {
		typ = str(data, "type", "event")
	}
	return typ, data, text
}

// progress is the event of a status update before the turn ends.
func (d *decoder) progress(typ string, data map[string]any) []Event {
	if typ == EventTurnStarted {
		ts := decodeEvent(typ, data).(TurnStarted)
		ts.TaskID, ts.ContextID = d.taskID, d.contextID
		// The task frame already produced a TurnStarted; carry the payload
		// only when it adds something.
		if len(ts.Data) > 0 {
			return []Event{ts}
		}
		return nil
	}
	if typ != "" {
		return []Event{decodeEvent(typ, data)}
	}
	return nil
}

// final is the event of the update that ends the turn, or pauses it for an
// approval.
func (d *decoder) final(st a2a.TaskStatus, typ string, data map[string]any, text string) Event {
	if st.State == a2a.TaskStateInputRequired && typ == EventApprovalRequired && data != nil {
		// Not the end of the turn: it waits for the owner's decision.
		a := decodeApproval(data)
		a.TaskID, a.ContextID = d.taskID, d.contextID
		return a
	}
	tf := TurnFinished{}
	if typ == EventTurnFinished || (typ == "" && data != nil) {
		tf = decodeTurnFinished(data)
	}
	tf.State = string(st.State)
	if tf.Status == "" {
		tf.Status = statusForState(st.State)
	}
	if text != "" {
		if st.State == a2a.TaskStateRejected && tf.Reason == "" {
			tf.Reason = text
		} else if tf.Error == "" && st.State != a2a.TaskStateCompleted {
			tf.Error = text
		}
	}
	return tf
}

// statusForState names a turn status for a final state that came without a
// turn.finished payload.
func statusForState(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateCompleted:
		return "ok"
	case a2a.TaskStateCanceled:
		return "cancelled"
	case a2a.TaskStateRejected:
		return "rejected"
	case a2a.TaskStateFailed:
		return "failed"
	}
	return strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_"))
}

func classify(a *a2a.Artifact) string {
	switch a.Name {
	case artifactAnswer:
		return kindAnswer
	case artifactTranscript:
		return kindTranscript
	case artifactFile:
		return kindFile
	}
	for _, p := range a.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.MediaType == TranscriptMediaType:
			return kindTranscript
		case p.MediaType == MarkdownMediaType:
			return kindAnswer
		case p.Filename != "":
			return kindFile
		}
	}
	return kindOther
}

func (d *decoder) artifact(e *a2a.TaskArtifactUpdateEvent) []Event {
	id := e.Artifact.ID
	st, ok := d.artifacts[id]
	if !ok || !e.Append {
		st = &artifactState{kind: classify(e.Artifact), name: e.Artifact.Name, meta: e.Artifact.Metadata}
		if !ok {
			d.order = append(d.order, id)
		}
		d.artifacts[id] = st
	}
	if st.done {
		return nil
	}
	if e.LastChunk {
		st.lastChunk = true
	}
	switch st.kind {
	case kindTranscript:
		return d.transcript(st, e.Artifact.Parts, e.LastChunk)
	case kindAnswer, kindFile, kindOther:
		st.parts = append(st.parts, e.Artifact.Parts...)
		if e.LastChunk {
			return d.finishArtifact(st)
		}
	}
	return nil
}

// transcript decodes transcript parts. Each part may hold a whole envelope
// (data, or raw/text JSON) or a byte piece of one envelope split across
// chunks; pieces are joined and parsed at the last chunk.
func (d *decoder) transcript(st *artifactState, parts []*a2a.Part, last bool) []Event {
	var msgs []Message
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Data:
			if m, err := envelopeMessages(c.Value); err == nil {
				msgs = append(msgs, m...)
			}
		case a2a.Raw:
			msgs = append(msgs, d.transcriptBytes(st, c)...)
		case a2a.Text:
			msgs = append(msgs, d.transcriptBytes(st, []byte(c))...)
		}
	}
	if last {
		st.done = true
		if st.pending.Len() > 0 {
			if m, err := DecodeEnvelope(st.pending.Bytes()); err == nil {
				msgs = append(msgs, m...)
			}
			st.pending.Reset()
		}
	}
	if len(msgs) == 0 && !last {
		return nil
	}
	return []Event{TranscriptChunk{Messages: msgs, Last: last}}
}

func (d *decoder) transcriptBytes(st *artifactState, b []byte) []Message {
	if st.pending.Len() == 0 {
		if m, err := DecodeEnvelope(b); err == nil {
			return m
		}
	}
	if st.pending.Len()+len(b) <= maxTranscriptPending {
		st.pending.Write(b)
	}
	if m, err := DecodeEnvelope(st.pending.Bytes()); err == nil {
		st.pending.Reset()
		return m
	}
	return nil
}

func (d *decoder) finishArtifact(st *artifactState) []Event {
	st.done = true
	switch st.kind {
	case kindAnswer:
		return []Event{answerFromParts(st.parts)}
	case kindFile:
		return []Event{fileFromParts(st.parts, st.meta)}
	}
	return nil
}

// flush emits artifacts that never got a lastChunk, before the final status.
func (d *decoder) flush() []Event {
	var out []Event
	for _, id := range d.order {
		st := d.artifacts[id]
		if st.done {
			continue
		}
		if st.kind == kindTranscript {
			out = append(out, d.transcript(st, nil, true)...)
			continue
		}
		out = append(out, d.finishArtifact(st)...)
	}
	return out
}

func partsText(parts []*a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p == nil {
			continue
		}
		if t, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

func answerFromParts(parts []*a2a.Part) Answer {
	var a Answer
	var md strings.Builder
	for _, p := range parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2a.Text:
			md.WriteString(string(c))
		case a2a.Data:
			a.Components = append(a.Components, components(Normalize(c.Value))...)
		case a2a.Raw:
			if p.MediaType == PrimitivesMediaType {
				var v any
				if json.Unmarshal(c, &v) == nil {
					a.Components = append(a.Components, components(Normalize(v))...)
				}
			}
		}
	}
	a.Markdown = md.String()
	return a
}

// components extracts the component list of a primitives payload: a list,
// or an object holding it under components or _ui_components.
func components(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case map[string]any:
		for _, k := range []string{"components", "_ui_components"} {
			if l, ok := t[k].([]any); ok {
				return l
			}
		}
		return []any{t}
	}
	return nil
}

func fileFromParts(parts []*a2a.Part, artMeta map[string]any) File {
	var f File
	var data bytes.Buffer
	for _, p := range parts {
		if p == nil {
			continue
		}
		if f.Name == "" {
			f.Name = p.Filename
		}
		if f.MediaType == "" {
			f.MediaType = p.MediaType
		}
		if f.CallID == "" {
			f.CallID = str(p.Metadata, "call_id", "callId")
		}
		switch c := p.Content.(type) {
		case a2a.Raw:
			data.Write(c)
		case a2a.Text:
			data.WriteString(string(c))
		}
	}
	if f.CallID == "" {
		f.CallID = str(artMeta, "call_id", "callId")
	}
	f.Data = data.Bytes()
	return f
}
