package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/sse"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// MaxExtraBytes bounds the provider fields (other than reasoning, whose
// kept text Limits.Reasoning bounds, under every name it came under
// together) one call may carry back: the message's and its tool calls'
// together.
const MaxExtraBytes = 1 << 20

// partialCall is a tool call being streamed.
type partialCall struct {
	index    int // -1: the provider sent none
	id, name string
	args     strings.Builder
	extra    extras
}

// streamState is one stream being read: what it has said so far.
type streamState struct {
	lim      Limits
	h        Handler
	progress func()
	dec      *chunkDecoder // its own object: its scans' closures make it escape, the state need not
	out      Response

	content, refusal strings.Builder
	// The reasoning, kept to be sent back (DeepSeek needs its
	// reasoning_content on a tool-calling step's message).
	reasoningContent, reasoning strings.Builder
	reasoningN                  int
	reasoningOrder              []string // the reasoning keys in the order first seen
	// noDuplicate is set once the reasoning kept under both names would
	// pass Limits.Reasoning: the duplicate under "reasoning" is dropped.
	noDuplicate bool

	calls   []*partialCall // in the order first seen
	slots   []*partialCall // by index
	allArgs int
	extra   extras
	extraN  int

	event   string // the SSE event: of the lines being read
	started bool
	done    bool
	// prof is the provider profile the stream is read with (profile.go);
	// a stream carrying a profile's marker (Groq's x_groq) switches to it
	// while prof.Detect (auto).
	prof *routes.Provider
}

// readStream reads an SSE answer; progress is called for every data line.
// The lines come from runtime/sse (pooled buffers, the line bound); what
// each means, tolerance included, is streamState.line's. prof is the
// route's provider profile (nil: auto).
func readStream(r io.Reader, lim Limits, progress func(), h Handler, prof *routes.Provider) (*Response, bool, error) {
	sr := sse.NewReader(r, lim.Line)
	// Nothing read through sr outlives the call: lines are decoded into
	// strings (copies) before the next read, so sr can be reused after it.
	defer sr.Release()
	st := &streamState{lim: lim, h: h, progress: progress, dec: new(chunkDecoder)}
	st.profile(prof)
	st.dec.drop = st.prof.Drop
	for !st.done {
		line, err := sr.Line()
		if errors.Is(err, sse.ErrLineTooLong) {
			return st.cut(&LimitError{What: LimitLine, Limit: lim.Line})
		}
		if err != nil && len(line) == 0 {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, st.started, st.failure(&Error{Message: "stream broke", Err: err})
		}
		if ferr := st.line(line); ferr != nil {
			var le *LimitError
			if errors.As(ferr, &le) {
				return st.cut(le)
			}
			return nil, st.started, st.failure(ferr)
		}
		if err != nil {
			break
		}
	}
	return st.finish()
}

// cut is the answer so far of a stream stopped over a limit.
func (st *streamState) cut(le *LimitError) (*Response, bool, error) {
	out := st.out // a copy: the state itself stays on the reader's stack
	out.Content = st.content.String()
	return &out, st.started, le
}

// failure gives a failed stream's error the tokens it counted.
func (st *streamState) failure(err error) error {
	var me *Error
	if errors.As(err, &me) {
		me.Usage = st.out.Usage
	}
	return err
}

// line handles one line of the stream (its end removed).
func (st *streamState) line(line []byte) error {
	switch {
	case bytes.HasPrefix(line, []byte("data:")): // most lines: first
		st.progress()
		data := bytes.TrimSpace(line[5:])
		if st.event == "error" {
			return st.payloadError(data)
		}
		if string(data) == "[DONE]" {
			st.done = true
			return nil
		}
		return st.chunk(data)
	case len(line) == 0:
		st.event = "" // an event ends at a blank line
		return nil
	case line[0] == ':':
		return nil // a comment: not progress
	case bytes.HasPrefix(line, []byte("event:")):
		st.event = string(bytes.TrimSpace(line[6:]))
		return nil
	case bytes.HasPrefix(line, []byte("error:")):
		// llama.cpp before PR 16109: "error: {...}", then data: [DONE].
		st.progress()
		return st.payloadError(bytes.TrimSpace(line[6:]))
	case line[0] == '{':
		// A JSON line without "data:": Ollama's error once streaming began.
		st.progress()
		return st.chunk(bytes.TrimSpace(line))
	}
	return nil // id:, retry: and anything else
}

func (st *streamState) chunk(data []byte) error {
	ch, err := st.dec.decode(data)
	if err != nil {
		return &Error{Message: "malformed stream chunk", Err: err}
	}
	if u := ch.usage(); u != nil {
		st.out.Usage = *u
	}
	if ch.failed() {
		return st.payloadError(data)
	}
	if ch.XGroq != nil {
		st.marked("x_groq")
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if d := &c.Delta; c.FinishReason == nil && d.ReasoningContent == "" && d.Reasoning == "" && d.Thinking == "" && d.Refusal == "" &&
			len(d.ToolCalls) == 0 && len(d.Extra) == 0 {
			// Most chunks: one piece of text, or nothing.
			if err := st.text(d.Content, &st.content); err != nil {
				return err
			}
			continue
		}
		if err := st.choice(c); err != nil {
			return err
		}
	}
	return nil
}

// payloadError reads an error in any of the shapes providers stream one:
// {"error":{"message":...}}, {"error":"..."}, {"object":"error","message":...}
// or plain text. Its usage, if any, is counted.
func (st *streamState) payloadError(data []byte) error {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Code    any             `json:"code"`
		Usage   *Usage          `json:"usage"`
	}
	if json.Unmarshal(data, &v) != nil {
		return &Error{Message: sanitize(string(data)), stream: true}
	}
	if v.Usage != nil {
		st.out.Usage = *v.Usage
	}
	msg, code := v.Message, v.Code
	var s string
	var inner struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Type    string `json:"type"`
	}
	switch {
	case json.Unmarshal(v.Error, &s) == nil:
		msg = s
	case json.Unmarshal(v.Error, &inner) == nil:
		msg, code = inner.Message, inner.Code
		if msg == "" {
			msg = inner.Type
		}
	}
	if msg == "" {
		msg = string(data)
	}
	return st.afterFinish(&Error{Message: sanitize(msg), Code: codeString(code), stream: true})
}

// afterFinish is an error in the stream, unless the stream already said
// the answer is cut or filtered: those outrank an error (docs/models.md,
// "Answer outcomes"), so the stream ends there, its usage counted, and the
// step ends incomplete with the finish's reason (OpenRouter sends
// finish_reason length, then an error chunk "Token limit reached").
func (st *streamState) afterFinish(err *Error) error {
	var ie *IncompleteError
	if errors.As(finishOutcome(&Response{FinishReason: st.out.FinishReason, Refusal: st.refusal.String()}, false), &ie) {
		st.done = true
		return nil
	}
	return err
}

// codeString is an error code as a string (providers send strings or numbers).
func codeString(c any) string {
	switch v := c.(type) {
	case string:
		return truncate(v, 64)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func (st *streamState) choice(c *choice) error {
	d := &c.Delta
	if err := st.reason(d); err != nil {
		return err
	}
	if err := st.text(d.Content, &st.content); err != nil {
		return err
	}
	// A refusal is shown as text too: the caller sees why.
	if err := st.text(d.Refusal, &st.refusal); err != nil {
		return err
	}
	for i := range d.ToolCalls {
		if err := st.toolCall(&d.ToolCalls[i]); err != nil {
			return err
		}
	}
	if err := st.gather(&st.extra, d.Extra); err != nil {
		return err
	}
	if c.FinishReason != nil {
		st.out.FinishReason = *c.FinishReason
	}
	return nil
}

// text passes on and keeps a piece of the answer (or of a refusal, into b).
func (st *streamState) text(s string, b *strings.Builder) error {
	if s == "" {
		return nil
	}
	st.started = true
	if used := st.content.Len() + st.refusal.Len(); used+len(s) <= st.lim.Text {
		b.WriteString(s)
		st.h.Text(s)
		return nil
	}
	return st.overText(s, b)
}

// overText passes on what fits of a piece over the text limit.
func (st *streamState) overText(s string, b *strings.Builder) error {
	if cut := fit(s, st.lim.Text-st.content.Len()-st.refusal.Len()); cut != "" {
		b.WriteString(cut)
		st.h.Text(cut)
	}
	return &LimitError{What: LimitText, Limit: st.lim.Text}
}

// reason passes on and keeps the delta's reasoning.
func (st *streamState) reason(d *delta) error {
	if d.ReasoningContent == "" && d.Reasoning == "" && d.Thinking == "" {
		return nil
	}
	if err := st.reasonPiece("reasoning_content", d.ReasoningContent, &st.reasoningContent, true); err != nil {
		return err
	}
	// Mistral's thinking parts have no field to go back in: shown only.
	if err := st.reasonPiece("", d.Thinking, nil, true); err != nil {
		return err
	}
	// vLLM with a reasoning parser sends the same piece under both names (in
	// vllm/reasoning_both_tool.sse): shown and counted once, kept under both
	// while both copies fit in the limit together (reasonPiece).
	return st.reasonPiece("reasoning", d.Reasoning, &st.reasoning, d.Reasoning != d.ReasoningContent)
}

// reasonPiece keeps a piece of reasoning under key (b nil: not kept) and,
// when show, passes it on and counts it against the reasoning's limit. A
// piece not shown is the duplicate of one shown under reasoning_content: it
// is kept only while everything kept fits in the limit; past it, the
// duplicate name is dropped whole (keepDuplicate), so the message goes
// back with its reasoning once, never with a copy cut short.
func (st *streamState) reasonPiece(key, s string, b *strings.Builder, show bool) error {
	if s == "" {
		return nil
	}
	st.started = true
	if b == &st.reasoning && !st.keepDuplicate(len(s)) {
		b = nil
	}
	if !show {
		if b == nil {
			return nil
		}
		if b.Len() == 0 {
			st.reasoningOrder = append(st.reasoningOrder, key)
		}
		b.WriteString(s)
		return nil
	}
	if st.reasoningN+len(s) > st.lim.Reasoning {
		if cut := fit(s, st.lim.Reasoning-st.reasoningN); cut != "" {
			st.h.Reasoning(cut)
		}
		return &LimitError{What: LimitReasoning, Limit: st.lim.Reasoning}
	}
	st.reasoningN += len(s)
	if b != nil {
		if b.Len() == 0 {
			st.reasoningOrder = append(st.reasoningOrder, key)
		}
		b.WriteString(s)
	}
	st.h.Reasoning(s)
	return nil
}

// keepDuplicate reports whether the reasoning kept under "reasoning" may
// take n more bytes: whether all the reasoning kept, under both names,
// stays within Limits.Reasoning (it holds duplicates only when it is past
// that). Once it may not, it drops what it kept and keeps nothing more.
func (st *streamState) keepDuplicate(n int) bool {
	if !st.noDuplicate && st.reasoningContent.Len()+st.reasoning.Len()+n > st.lim.Reasoning {
		st.noDuplicate = true
		st.reasoning = strings.Builder{}
	}
	return !st.noDuplicate
}

func (st *streamState) toolCall(tc *toolCallDelta) error {
	st.started = true
	p, err := st.callFor(tc)
	if err != nil {
		return err
	}
	if tc.ID != "" && p.id == "" {
		p.id = fit(tc.ID, transcript.MaxToolCallID)
	}
	name := tc.Function.Name
	if name == p.name {
		name = "" // some servers repeat the whole name in every piece
	}
	if len(p.name)+len(name)+p.args.Len()+len(tc.Function.Arguments) > st.lim.Arguments {
		return &LimitError{What: LimitArguments, Limit: st.lim.Arguments}
	}
	if st.allArgs += len(name) + len(tc.Function.Arguments); st.allArgs > st.lim.AllArguments {
		return &LimitError{What: LimitAllArguments, Limit: st.lim.AllArguments}
	}
	p.name += name
	p.args.WriteString(tc.Function.Arguments)
	return st.gather(&p.extra, tc.Extra)
}

// callFor finds the call a delta continues: by index when it has one, else
// by id (Gemini sends neither index nor a repeated name: two calls with
// two ids are two calls), else the last call.
func (st *streamState) callFor(tc *toolCallDelta) (*partialCall, error) {
	if tc.Index != nil {
		i := *tc.Index
		if i < 0 {
			return nil, &Error{Message: "tool call with a negative index", stream: true}
		}
		if i >= MaxToolCalls {
			return nil, &LimitError{What: LimitToolCalls, Limit: MaxToolCalls}
		}
		if i >= len(st.slots) {
			st.slots = append(st.slots, make([]*partialCall, i+1-len(st.slots))...)
		}
		if p := st.slots[i]; p == nil || st.anotherCall(p, tc) {
			p, err := st.newCall(i)
			if err != nil {
				return nil, err
			}
			st.slots[i] = p
		}
		return st.slots[i], nil
	}
	if tc.ID != "" {
		id := fit(tc.ID, transcript.MaxToolCallID)
		for _, p := range st.calls {
			if p.id == id {
				return p, nil
			}
		}
		return st.newCall(-1)
	}
	if len(st.calls) > 0 {
		return st.calls[len(st.calls)-1], nil
	}
	return st.newCall(-1)
}

// anotherCall reports whether a delta at the index of call p starts
// another call: a new id and a name (servers that number every parallel
// call 0).
func (st *streamState) anotherCall(p *partialCall, tc *toolCallDelta) bool {
	return tc.ID != "" && p.id != "" && tc.Function.Name != "" && fit(tc.ID, transcript.MaxToolCallID) != p.id
}

func (st *streamState) newCall(index int) (*partialCall, error) {
	if len(st.calls) >= MaxToolCalls {
		return nil, &LimitError{What: LimitToolCalls, Limit: MaxToolCalls}
	}
	p := &partialCall{index: index}
	st.calls = append(st.calls, p)
	return p, nil
}

// gather adds members to an extras set within MaxExtraBytes.
func (st *streamState) gather(e *extras, ms []member) error {
	for _, m := range ms {
		st.extraN += len(m.key) + len(m.raw)
		if st.extraN > MaxExtraBytes {
			return &LimitError{What: LimitExtra, Limit: MaxExtraBytes}
		}
		e.add(m)
	}
	return nil
}

// finish ends a stream that ended: the response, or why it is not one.
func (st *streamState) finish() (*Response, bool, error) {
	out := new(Response)
	*out = st.out
	if !st.done && out.FinishReason == "" {
		return nil, st.started, st.failure(&Error{Message: "stream ended early"})
	}
	out.Content = st.content.String()
	out.Refusal = st.refusal.String()
	for _, k := range st.reasoningOrder {
		b := &st.reasoning
		if k == "reasoning_content" {
			b = &st.reasoningContent
		} else if !st.keepDuplicate(0) {
			continue
		}
		v, _ := json.Marshal(b.String()) // a string always marshals
		st.extra.set(k, v)
	}
	st.extra.keep(st.prof.SendBack)
	st.extra.mergeText(st.prof.MergeText)
	out.Extra = st.extra.object()
	if st.allIndexed() {
		slices.SortStableFunc(st.calls, func(a, b *partialCall) int { return a.index - b.index })
	}
	bad := false
	for i, p := range st.calls {
		args := strings.TrimSpace(p.args.String())
		if p.name == "" {
			bad = bad || args != ""
			continue
		}
		if args == "" {
			args = "{}" // a call without parameters
		} else if !json.Valid([]byte(args)) {
			bad = true
		}
		id := p.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		tc := transcript.ToolCall{ID: id, Type: "function", Function: transcript.FunctionCall{Name: p.name, Arguments: args}}
		p.extra.keep(st.prof.CallSendBack)
		tc.Extra = p.extra.object()
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	if err := finishOutcome(out, bad); err != nil {
		return out, st.started, st.failure(err)
	}
	return out, st.started, nil
}

func (st *streamState) allIndexed() bool {
	for _, p := range st.calls {
		if p.index < 0 {
			return false
		}
	}
	return true
}

// extras gathers opaque members across deltas, in the order first seen: a
// string's pieces are joined (as reasoning is streamed), an array's
// elements appended, any other value replaced by the last. The cost is
// linear in what is gathered.
type extras struct {
	keys []string
	vals [][]byte // a string's encoded characters without quotes, an array's elements without brackets, or a whole value
	kind []byte   // '"', '[' or 0
}

func (e *extras) add(m member) {
	kind := byte(0)
	v := m.raw
	if len(v) >= 2 && (v[0] == '"' || v[0] == '[') {
		kind, v = v[0], v[1:len(v)-1]
	}
	i := slices.Index(e.keys, string(m.key))
	if i < 0 {
		e.keys = append(e.keys, string(m.key))
		e.vals = append(e.vals, append([]byte(nil), v...))
		e.kind = append(e.kind, kind)
		return
	}
	switch {
	case kind != e.kind[i] || kind == 0:
		e.vals[i], e.kind[i] = append(e.vals[i][:0], v...), kind
	case kind == '[' && len(bytes.TrimSpace(v)) > 0 && len(bytes.TrimSpace(e.vals[i])) > 0:
		e.vals[i] = append(append(e.vals[i], ','), v...)
	default:
		e.vals[i] = append(e.vals[i], v...)
	}
}

// set puts an encoded string under a key not seen yet.
func (e *extras) set(key string, v []byte) {
	e.keys = append(e.keys, key)
	e.vals = append(e.vals, v[1:len(v)-1])
	e.kind = append(e.kind, '"')
}

// object is the gathered members as one JSON object, or nil.
func (e *extras) object() json.RawMessage {
	if len(e.keys) == 0 {
		return nil
	}
	b := []byte{'{'}
	for i, k := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), k...), '"', ':') // a key as sent: no escapes
		switch e.kind[i] {
		case '"':
			b = append(append(append(b, '"'), e.vals[i]...), '"')
		case '[':
			b = append(append(append(b, '['), e.vals[i]...), ']')
		default:
			b = append(b, e.vals[i]...)
		}
	}
	return append(b, '}')
}

// wholeAnswer is a non-streamed answer: a chunk whose choices hold a
// message instead of a delta (the same fields).
type wholeAnswer struct {
	chunk
	Choices []struct {
		Message      delta   `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// readWhole handles a server that ignored stream:true: the answer is read
// as one delta, with the stream's rules (limits, provider fields,
// outcomes). The body counts as one line for the limits.
func readWhole(r io.Reader, lim Limits, h Handler, prof *routes.Provider) (*Response, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, int64(lim.Line)+1))
	if err != nil {
		return nil, false, &Error{Message: "response broke", Err: err}
	}
	if len(body) > lim.Line {
		return &Response{}, false, &LimitError{What: LimitLine, Limit: lim.Line}
	}
	st := &streamState{lim: lim, h: h, progress: func() {}}
	st.profile(prof)
	var v wholeAnswer
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, false, &Error{Message: "malformed response", Err: err}
	}
	if u := v.usage(); u != nil {
		st.out.Usage = *u
	}
	if v.XGroq != nil {
		st.marked("x_groq")
	}
	if v.failed() {
		return nil, false, st.failure(st.payloadError(body))
	}
	if len(v.Choices) == 0 {
		return nil, false, st.failure(&Error{Message: "response has no choices"})
	}
	c := v.Choices[0]
	c.Message.dropMembers(st.prof.Drop)
	for i := range c.Message.ToolCalls {
		if c.Message.ToolCalls[i].Index == nil {
			c.Message.ToolCalls[i].Index = &i // whole calls: one per entry
		}
	}
	if err := st.choice(&choice{Delta: c.Message, FinishReason: c.FinishReason}); err != nil {
		var le *LimitError
		if errors.As(err, &le) {
			resp, _, err := st.cut(le)
			return resp, true, err
		}
		return nil, true, st.failure(err)
	}
	st.done = true
	resp, _, err := st.finish()
	return resp, true, err
}
