// Package model talks to an OpenAI-compatible chat completions endpoint:
// one streaming request per step, with tools, retried with backoff while no
// token has arrived yet.
package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/deployer/redact"
	"github.com/astraldeep/astralvessel-go/deployer/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// ToolDef is a tool offered to the model.
type ToolDef struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef describes a tool's function.
type FunctionDef struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  any    `json:"parameters,omitempty"`
}

// Request is one chat completion call.
type Request struct {
	Model    string
	Messages []transcript.Message
	Tools    []ToolDef
	// Cache, when set, keeps each message's encoding between the calls of a
	// turn, whose message lists only grow: a long history is encoded once.
	// The messages' Content then points into the cache (see MessageCache).
	Cache *MessageCache
	// Limits bound what this call may stream; over one, the stream is
	// closed at once and Complete returns a *LimitError.
	Limits Limits
}

// Limits bound one call's output. Zero fields take the defaults below.
type Limits struct {
	// Text is the most content text the call may stream, in bytes;
	// Reasoning the most reasoning text (default: Text's default).
	Text      int
	Reasoning int
	// Arguments is the most one tool call's name and arguments may hold;
	// AllArguments the most all of this call's tool calls may hold together.
	Arguments    int
	AllArguments int
	// Line is the longest stream line (one SSE data line, or a whole
	// non-streamed response); default 3×max(Text, Arguments) + 64 KiB: room
	// for a chunk holding all the text the other limits allow with every
	// non-ASCII character written as a \u escape.
	Line int
}

// Defaults of Limits.
const (
	DefaultMaxText      = 1 << 20
	DefaultMaxArguments = 1 << 20
	// MaxToolCalls bounds the tool calls of one model call (tool call indexes
	// 0 to MaxToolCalls-1).
	MaxToolCalls = 128
	// TurnArgumentsFactor × the per-call arguments limit bounds all of a
	// turn's tool-call arguments together (the loop passes what is left as
	// AllArguments).
	TurnArgumentsFactor = 16
)

func (l Limits) withDefaults() Limits {
	if l.Text <= 0 {
		l.Text = DefaultMaxText
	}
	if l.Reasoning <= 0 {
		l.Reasoning = DefaultMaxText
	}
	if l.Arguments <= 0 {
		l.Arguments = DefaultMaxArguments
	}
	if l.AllArguments <= 0 {
		l.AllArguments = TurnArgumentsFactor * l.Arguments
	}
	if l.Line <= 0 {
		l.Line = 3*max(l.Text, l.Arguments) + 64<<10
	}
	return l
}

// What a LimitError is about.
const (
	LimitText      = "text"
	LimitReasoning = "reasoning"
	LimitArguments = "arguments"
	// LimitAllArguments: the tool calls' arguments together (Limits.AllArguments).
	LimitAllArguments = "all_arguments"
	LimitLine         = "line"
	LimitToolCalls    = "tool_calls"
)

// ErrOutputLimit is matched (errors.Is) by every *LimitError.
var ErrOutputLimit = errors.New("model output over a limit")

// LimitError is a call stopped because the model's output went over one of
// its Limits. Complete returns it together with the response so far: the
// text up to the limit (cut on a rune boundary, exactly what the Handler
// was given) and no tool calls.
type LimitError struct {
	What  string // LimitText, LimitReasoning, LimitArguments, LimitAllArguments, LimitLine or LimitToolCalls
	Limit int    // the limit in bytes (a count for LimitToolCalls)
}

func (e *LimitError) Error() string {
	switch e.What {
	case LimitText:
		return fmt.Sprintf("the model's text went over %d bytes", e.Limit)
	case LimitReasoning:
		return fmt.Sprintf("the model's reasoning went over %d bytes", e.Limit)
	case LimitArguments:
		return fmt.Sprintf("a tool call's arguments went over %d bytes", e.Limit)
	case LimitAllArguments:
		return fmt.Sprintf("the tool calls' arguments together went over %d bytes", e.Limit)
	case LimitToolCalls:
		return fmt.Sprintf("the model asked for more than %d tool calls at once", e.Limit)
	}
	return fmt.Sprintf("a line of the model's stream went over %d bytes", e.Limit)
}

// Is makes errors.Is(err, ErrOutputLimit) true.
func (e *LimitError) Is(target error) bool { return target == ErrOutputLimit }

// MessageCache holds a turn's messages encoded, one after another in one
// buffer: the model request is written from it without another copy of
// the history, and a message is encoded once per turn. The content of a
// message written directly is then read from that buffer too: fill points
// the message's Content at its bytes there, so a long history is held
// once (encoded), not twice (parsed and encoded).
type MessageCache struct {
	enc     []byte   // the messages' encodings, comma-separated
	ends    []int    // where each message's encoding ends in enc
	content [][2]int // where each message's Content lies in enc; {0, 0} when it does not
}

// fill encodes the messages of msgs the cache does not hold yet; msgs must
// begin with the messages it holds (a turn's messages only grow).
func (c *MessageCache) fill(msgs []transcript.Message) error {
	if len(c.ends) >= len(msgs) {
		return nil
	}
	est := 0
	for i := len(c.ends); i < len(msgs); i++ {
		est += estimate(&msgs[i]) + 1
	}
	before := c.enc
	c.enc = slices.Grow(c.enc, est)
	// The lists get an entry per message: room for as many as msgs has
	// room for (the loop makes it with room for the turn's usual steps)
	// makes them once instead of growing them message by message.
	room := max(cap(msgs), len(msgs))
	c.ends = slices.Grow(c.ends, room-len(c.ends))
	c.content = slices.Grow(c.content, room-len(c.content))
	if cap(before) > 0 && &before[:1][0] != &c.enc[:1][0] {
		// The buffer moved: the contents pointing into it follow, so the
		// old one is not kept alive.
		for i, sp := range c.content {
			if sp[1] > sp[0] {
				msgs[i].Content = c.enc[sp[0]:sp[1]:sp[1]]
			}
		}
	}
	for i := len(c.ends); i < len(msgs); i++ {
		if i > 0 {
			c.enc = append(c.enc, ',')
		}
		start := len(c.enc)
		var ok bool
		if c.enc, ok = appendMessage(c.enc, &msgs[i]); !ok {
			b, err := json.Marshal(&msgs[i])
			if err != nil {
				return err
			}
			c.enc = append(c.enc, b...)
		}
		sp := [2]int{}
		if n := len(msgs[i].Content); ok && n > 0 {
			at := start + len(`{"role":"","content":`) + len(msgs[i].Role)
			if at+n <= len(c.enc) && bytes.Equal(c.enc[at:at+n], msgs[i].Content) {
				sp = [2]int{at, at + n}
				msgs[i].Content = c.enc[at : at+n : at+n]
			}
		}
		c.content = append(c.content, sp)
		c.ends = append(c.ends, len(c.enc))
	}
	return nil
}

// requestBody is a model request's body in pieces: the head, the cached
// messages (shared with the cache, not copied) and the tail.
type requestBody struct {
	parts [][]byte
	n     int64
}

func (b *requestBody) reader() *bodyReader { return &bodyReader{parts: b.parts} }

// bodyReader reads a requestBody's pieces in order, without changing them
// (GetBody reads them again). Its WriteTo writes them as they are:
// io.MultiReader's allocates a 32 KB copy buffer, and the transport copies
// a body once more after its Content-Length bytes, to see nothing is left.
type bodyReader struct {
	parts [][]byte
	i     int // the piece being read
	off   int // how much of it is read
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for r.i < len(r.parts) && n < len(p) {
		c := copy(p[n:], r.parts[r.i][r.off:])
		n += c
		if r.off += c; r.off == len(r.parts[r.i]) {
			r.i, r.off = r.i+1, 0
		}
	}
	if n == 0 && r.i == len(r.parts) && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for ; r.i < len(r.parts); r.i, r.off = r.i+1, 0 {
		rest := r.parts[r.i][r.off:]
		c, err := w.Write(rest)
		n += int64(c)
		r.off += c
		if err != nil {
			return n, err
		}
		if c < len(rest) {
			return n, io.ErrShortWrite
		}
	}
	return n, nil
}

// bytes joins the pieces.
func (b *requestBody) bytes() []byte { return bytes.Join(b.parts, nil) }

// encodeRequest writes the request body, reusing cached message encodings.
func encodeRequest(req *Request) (*requestBody, error) {
	head, err := json.Marshal(wireRequest{Model: req.Model, Tools: req.Tools, Stream: true,
		StreamOptions: &streamOptions{IncludeUsage: true}})
	if err != nil {
		return nil, err
	}
	c := req.Cache
	if c == nil {
		c = &MessageCache{}
	}
	if err := c.fill(req.Messages); err != nil {
		return nil, err
	}
	msgs := []byte(nil)
	if len(req.Messages) > 0 {
		msgs = c.enc[:c.ends[len(req.Messages)-1]]
	}
	// head ends with "}"; the messages go in as its last member.
	head = append(head[:len(head)-1], `,"messages":[`...)
	b := &requestBody{parts: [][]byte{head, msgs, []byte("]}")}}
	for _, p := range b.parts {
		b.n += int64(len(p))
	}
	return b, nil
}

// Usage is the token count of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Response is a finished call. Reasoning is passed to the Handler only,
// never kept, so a long reasoning stream costs no memory.
type Response struct {
	Content      string
	ToolCalls    []transcript.ToolCall
	Usage        Usage
	FinishReason string
}

// Handler receives deltas as they stream in; the strings are only valid
// during the call.
type Handler interface {
	Text(delta string)
	Reasoning(delta string)
}

// Client is an OpenAI-compatible client.
type Client struct {
	BaseURL string // e.g. http://egress:8080/v1
	APIKey  string
	// Agent, when set, is sent as telemetry.AgentHeader: the egress counts
	// tokens by it and never forwards it.
	Agent string
	HTTP  *http.Client
	// Attempts is how many times a call is tried while nothing has streamed
	// (default 4); Backoff the first wait, doubled each time (default 250ms).
	Attempts int
	Backoff  time.Duration
	// FirstByteTimeout bounds the wait from sending a request to the first
	// data line of its answer; IdleTimeout the gap between data lines after
	// that. SSE comments and blank lines are not progress. A call that times
	// out is retried like any transport failure while nothing has streamed.
	// Defaults DefaultFirstByteTimeout and DefaultIdleTimeout.
	FirstByteTimeout time.Duration
	IdleTimeout      time.Duration
}

// Default stream timeouts.
const (
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
)

// TimeoutError is the cause of a call stopped because the model sent
// nothing for too long.
type TimeoutError struct {
	FirstByte bool // before the first data line (else between two)
	After     time.Duration
}

func (e *TimeoutError) Error() string {
	if e.FirstByte {
		return fmt.Sprintf("the model sent no data within %s of the request", e.After)
	}
	return fmt.Sprintf("the model's stream was silent for %s", e.After)
}

// watchdog cancels a call's context when the model stays silent: first
// for the first-byte timeout, then for the idle timeout after each data
// line. Only the reading goroutine calls data and stop.
type watchdog struct {
	cancel context.CancelCauseFunc
	t      *time.Timer
	idle   time.Duration
	seen   bool
}

func newWatchdog(cancel context.CancelCauseFunc, first, idle time.Duration) *watchdog {
	w := &watchdog{cancel: cancel, idle: idle}
	w.t = time.AfterFunc(first, func() { cancel(&TimeoutError{FirstByte: true, After: first}) })
	return w
}

// data notes a data line: the silence after it is bounded by idle.
func (w *watchdog) data() {
	if w.seen {
		w.t.Reset(w.idle)
		return
	}
	w.seen = true
	if !w.t.Stop() {
		return // the first-byte timeout has fired already
	}
	w.t = time.AfterFunc(w.idle, func() { w.cancel(&TimeoutError{After: w.idle}) })
}

func (w *watchdog) stop() { w.t.Stop() }

// Error is a failed call; Status is the HTTP status, 0 for transport errors.
type Error struct {
	Status  int
	Message string
	// Code is the error code the answer gave (the OpenAI shape's
	// error.code, a string), e.g. BudgetCode.
	Code       string
	Err        error
	retryAfter time.Duration
}

// BudgetCode is the code of an answer the egress refused or cut because a
// token budget ([budgets]) was spent.
const BudgetCode = "budget_exceeded"

// Budget reports whether the egress stopped the call for a token budget:
// never retried, the turn ends as model_error with the reason budget.
func (e *Error) Budget() bool { return e.Code == BudgetCode }

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("model answered %d: %s", e.Status, e.Message)
	}
	return "model call failed: " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) retryable() bool {
	if e.Budget() {
		return false
	}
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
}

// Complete streams one chat completion, retrying failures that happen
// before the first delta. Over one of req.Limits it returns the response so
// far with a *LimitError, without retrying.
func (c *Client) Complete(ctx context.Context, req *Request, h Handler) (*Response, error) {
	body, err := encodeRequest(req)
	if err != nil {
		return nil, fmt.Errorf("encode model request: %w", err)
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 4
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = 250 * time.Millisecond
	}
	var last error
	for i := range attempts {
		if i > 0 {
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			wait *= 2
		}
		resp, started, err := c.once(ctx, body, req.Limits.withDefaults(), h)
		if err == nil {
			return resp, nil
		}
		if errors.Is(err, ErrOutputLimit) {
			return resp, err
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		last = err
		var me *Error
		if started || !errors.As(err, &me) || !me.retryable() {
			return nil, err
		}
		if me.Status != 0 && me.retryAfter > wait && me.retryAfter <= 10*time.Second {
			wait = me.retryAfter
		}
	}
	return nil, last
}

type wireRequest struct {
	Model         string         `json:"model"`
	Tools         []ToolDef      `json:"tools,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

func (c *Client) once(ctx context.Context, body *requestBody, lim Limits, h Handler) (*Response, bool, error) {
	first, idle := c.FirstByteTimeout, c.IdleTimeout
	if first <= 0 {
		first = DefaultFirstByteTimeout
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	wd := newWatchdog(cancel, first, idle)
	defer wd.stop()
	resp, started, err := c.attempt(cctx, body, lim, wd, h)
	var me *Error
	if errors.As(err, &me) {
		// Providers echo a refused key in their error text; the message
		// reaches the turn's end event, the caller and the log.
		me.Message = redact.Scrub(me.Message, c.APIKey)
	}
	if err != nil && ctx.Err() == nil {
		var te *TimeoutError
		if errors.As(context.Cause(cctx), &te) {
			// Status 0: retried like a transport failure while nothing streamed.
			return nil, started, &Error{Message: te.Error(), Err: te}
		}
	}
	return resp, started, err
}

func (c *Client) attempt(ctx context.Context, body *requestBody, lim Limits, wd *watchdog, h Handler) (*Response, bool, error) {
	endpoint := strings.TrimSuffix(c.BaseURL, "/") + "/chat/completions"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, body.reader())
	if err != nil {
		return nil, false, &Error{Message: "bad model URL", Err: err}
	}
	hreq.ContentLength = body.n
	hreq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.reader()), nil }
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if id := telemetry.TaskIDFrom(ctx); id != "" {
		hreq.Header.Set(telemetry.TaskIDHeader, id) // logged by the egress, never sent upstream
	}
	telemetry.InjectHTTP(ctx, hreq.Header) // the egress continues the trace and removes the headers
	if c.Agent != "" {
		hreq.Header.Set(telemetry.AgentHeader, c.Agent) // likewise
	}
	if o := telemetry.OwnerFrom(ctx); o != "" {
		hreq.Header.Set(telemetry.OwnerHeader, url.PathEscape(o)) // the egress's owner budget; likewise
	}
	if c.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, false, &Error{Message: "request failed", Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		e := &Error{Status: resp.StatusCode, Message: errorMessage(msg), Code: errorCode(msg)}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			e.retryAfter = time.Duration(s) * time.Second
		}
		return nil, false, e
	}
	// Returning closes the body: over a limit the stream is cut at once.
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		return readWhole(progressReader{resp.Body, wd}, lim, h)
	}
	return readStream(resp.Body, lim, wd.data, h)
}

// progressReader counts every byte of a whole (non-streamed) answer as
// progress: it has no comments.
type progressReader struct {
	r  io.Reader
	wd *watchdog
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.wd.data()
	}
	return n, err
}

// errorCode is the string error.code of an error body, or "".
func errorCode(b []byte) string {
	var v struct {
		Error struct {
			Code any `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	c, _ := v.Error.Code.(string)
	return truncate(c, 64)
}

// errorMessage pulls a short message out of an error body.
func errorMessage(b []byte) string {
	var v struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &v) == nil && v.Error.Message != "" {
		return truncate(v.Error.Message, 300)
	}
	return truncate(strings.TrimSpace(string(b)), 300)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// readLine reads one line of at most max bytes (its end included). A longer
// line is not read whole: a *LimitError comes back once max is passed. buf
// is reused for lines longer than br's buffer.
func readLine(br *bufio.Reader, buf *[]byte, max int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > max {
			return nil, &LimitError{What: LimitLine, Limit: max}
		}
		return line, err
	}
	b := append((*buf)[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(b) > max {
			*buf = b[:0]
			return nil, &LimitError{What: LimitLine, Limit: max}
		}
		line, err = br.ReadSlice('\n')
		b = append(b, line...)
	}
	*buf = b[:0]
	if len(b) > max {
		return nil, &LimitError{What: LimitLine, Limit: max}
	}
	return b, err
}

// fit cuts s to at most n bytes on a rune boundary.
func fit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// streamReaderSize is the size of the buffer a stream is read through;
// longer lines go to readLine's own buffer.
const streamReaderSize = 64 << 10

// streamReaders holds the readers of finished streams: a turn makes a call
// per step, and each would otherwise allocate its buffer. The buffer's size
// is fixed, so a pooled reader never holds more than streamReaderSize.
var streamReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamReaderSize) }}

// readStream reads an SSE answer; progress is called for every data line.
func readStream(r io.Reader, lim Limits, progress func(), h Handler) (*Response, bool, error) {
	br := streamReaders.Get().(*bufio.Reader)
	br.Reset(r)
	// Nothing read through br outlives the call: lines are decoded into
	// strings (copies) before the next read, so br can be reused after it.
	defer func() {
		br.Reset(nil)
		streamReaders.Put(br)
	}()
	out := &Response{}
	var content strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	var dec chunkDecoder
	var long []byte
	allArgs, reasoning := 0, 0
	started := false
	done := false
	for !done {
		line, err := readLine(br, &long, lim.Line)
		if err != nil {
			// Declared here, not per line: errors.As's target escapes.
			var le *LimitError
			if errors.As(err, &le) {
				out.Content = content.String()
				return out, started, le
			}
		}
		if err != nil && len(line) == 0 {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, started, &Error{Message: "stream broke", Err: err}
		}
		line = bytes.TrimRight(line, "\r\n")
		if !bytes.HasPrefix(line, []byte("data:")) {
			if err != nil {
				break
			}
			continue
		}
		progress()
		data := bytes.TrimSpace(line[5:])
		if string(data) == "[DONE]" {
			done = true
			break
		}
		ch, jerr := dec.decode(data)
		if jerr != nil {
			return nil, started, &Error{Message: "malformed stream chunk", Err: jerr}
		}
		if ch.Error != nil {
			return nil, started, &Error{Message: truncate(ch.Error.Message, 300), Code: ch.Error.code()}
		}
		if ch.Usage != nil {
			out.Usage = *ch.Usage
		}
		for _, c := range ch.Choices {
			d := c.Delta
			if d.ReasoningContent != "" || d.Reasoning != "" {
				started = true
				rs := d.ReasoningContent + d.Reasoning
				if reasoning+len(rs) > lim.Reasoning {
					if cut := fit(rs, lim.Reasoning-reasoning); cut != "" {
						h.Reasoning(cut)
					}
					out.Content = content.String()
					return out, started, &LimitError{What: LimitReasoning, Limit: lim.Reasoning}
				}
				reasoning += len(rs)
				h.Reasoning(rs)
			}
			if d.Content != "" {
				started = true
				if content.Len()+len(d.Content) > lim.Text {
					if cut := fit(d.Content, lim.Text-content.Len()); cut != "" {
						content.WriteString(cut)
						h.Text(cut)
					}
					out.Content = content.String()
					return out, started, &LimitError{What: LimitText, Limit: lim.Text}
				}
				content.WriteString(d.Content)
				h.Text(d.Content)
			}
			for _, tc := range d.ToolCalls {
				started = true
				if tc.Index < 0 {
					return nil, started, &Error{Message: "tool call with a negative index"}
				}
				if tc.Index >= MaxToolCalls {
					out.Content = content.String()
					return out, started, &LimitError{What: LimitToolCalls, Limit: MaxToolCalls}
				}
				for tc.Index >= len(calls) {
					calls = append(calls, &partial{})
				}
				p := calls[tc.Index]
				if tc.ID != "" {
					p.id = fit(tc.ID, transcript.MaxToolCallID)
				}
				if len(p.name)+len(tc.Function.Name)+p.args.Len()+len(tc.Function.Arguments) > lim.Arguments {
					out.Content = content.String()
					return out, started, &LimitError{What: LimitArguments, Limit: lim.Arguments}
				}
				if allArgs += len(tc.Function.Name) + len(tc.Function.Arguments); allArgs > lim.AllArguments {
					out.Content = content.String()
					return out, started, &LimitError{What: LimitAllArguments, Limit: lim.AllArguments}
				}
				if tc.Function.Name != "" {
					p.name += tc.Function.Name
				}
				p.args.WriteString(tc.Function.Arguments)
			}
			if c.FinishReason != nil {
				out.FinishReason = *c.FinishReason
			}
		}
		if err != nil {
			break
		}
	}
	if !done && out.FinishReason == "" {
		return nil, started, &Error{Message: "stream ended early"}
	}
	out.Content = content.String()
	for i, p := range calls {
		if p.name == "" {
			continue
		}
		id := p.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		out.ToolCalls = append(out.ToolCalls, transcript.ToolCall{ID: id, Type: "function",
			Function: transcript.FunctionCall{Name: p.name, Arguments: p.args.String()}})
	}
	return out, started, nil
}

// readWhole handles a server that ignored stream:true. The body counts as
// one line for the limits.
func readWhole(r io.Reader, lim Limits, h Handler) (*Response, bool, error) {
	var v struct {
		Choices []struct {
			Message struct {
				Content          *string               `json:"content"`
				ReasoningContent string                `json:"reasoning_content"`
				ToolCalls        []transcript.ToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage Usage `json:"usage"`
	}
	body, err := io.ReadAll(io.LimitReader(r, int64(lim.Line)+1))
	if err != nil {
		return nil, false, &Error{Message: "response broke", Err: err}
	}
	if len(body) > lim.Line {
		return &Response{}, false, &LimitError{What: LimitLine, Limit: lim.Line}
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, false, &Error{Message: "malformed response", Err: err}
	}
	if len(v.Choices) == 0 {
		return nil, false, &Error{Message: "response has no choices"}
	}
	m := v.Choices[0].Message
	out := &Response{Usage: v.Usage, FinishReason: v.Choices[0].FinishReason}
	if len(m.ReasoningContent) > lim.Reasoning {
		if cut := fit(m.ReasoningContent, lim.Reasoning); cut != "" {
			h.Reasoning(cut)
		}
		return &Response{}, true, &LimitError{What: LimitReasoning, Limit: lim.Reasoning}
	}
	if m.ReasoningContent != "" {
		h.Reasoning(m.ReasoningContent)
	}
	if m.Content != nil {
		out.Content = *m.Content
	}
	if len(out.Content) > lim.Text {
		out.Content = fit(out.Content, lim.Text)
		if out.Content != "" {
			h.Text(out.Content)
		}
		return out, true, &LimitError{What: LimitText, Limit: lim.Text}
	}
	if out.Content != "" {
		h.Text(out.Content)
	}
	if len(m.ToolCalls) > MaxToolCalls {
		return out, true, &LimitError{What: LimitToolCalls, Limit: MaxToolCalls}
	}
	all := 0
	for _, tc := range m.ToolCalls {
		n := len(tc.Function.Name) + len(tc.Function.Arguments)
		if n > lim.Arguments {
			return out, true, &LimitError{What: LimitArguments, Limit: lim.Arguments}
		}
		if all += n; all > lim.AllArguments {
			return out, true, &LimitError{What: LimitAllArguments, Limit: lim.AllArguments}
		}
	}
	out.ToolCalls = m.ToolCalls
	return out, true, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
