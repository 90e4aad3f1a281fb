// Package model talks to an OpenAI-compatible chat completions endpoint:
// one streaming request per step, with tools, retried with backoff while no
// token has arrived yet.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/astraldeep/astralvessel-go/runtime/redact"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/internal/backoff"
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
	// Settings are the agent's request settings (settings.go); nil sends
	// none.
	Settings *Settings
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
	// LimitExtra: the provider fields to send back (MaxExtraBytes).
	LimitExtra = "provider_fields"
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
	case LimitExtra:
		return fmt.Sprintf("the model's provider fields went over %d bytes", e.Limit)
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
	// head ends with "}"; the settings, then the messages go in as its
	// last members.
	head = append(appendSettings(head[:len(head)-1], req.Settings), `,"messages":[`...)
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

// Response is a finished call.
type Response struct {
	Content string
	// Refusal is the model's refusal text (delta.refusal), when it refused.
	Refusal   string
	ToolCalls []transcript.ToolCall // each with its provider fields in Extra
	// Extra holds the message's provider fields to send back in the
	// assistant message: reasoning_content or reasoning (joined from the
	// stream, within Limits.Reasoning), and any field of the delta the
	// reader does not know.
	Extra        []byte
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
	// Route, when set, is sent as routes.RouteHeader: the egress forwards
	// the request to that model route, and never forwards the header.
	Route string
	// Profile is the route's provider profile (settings.Agent.Provider):
	// which provider fields the reader keeps and sends back. nil is auto.
	Profile *routes.Provider
	HTTP    *http.Client
	// The retry policy. Attempts is how many times a call is tried while
	// nothing has streamed (default 4); Backoff the first wait, doubled
	// each time up to MaxBackoff (default 250 ms and 10 s, ±25% jitter, never
	// over MaxBackoff). A Retry-After is honoured up to MaxBackoff. Budget
	// bounds the whole call until its first data line, waits and attempts
	// together (default the larger of DefaultBudget and 1.5 × the first-byte
	// timeout): each attempt's first-byte timeout is cut to what is left,
	// and no retry starts whose wait would pass it.
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
	Budget     time.Duration
	// FirstByteTimeout bounds the wait from sending a request to the first
	// data line of its answer; IdleTimeout the gap between data lines after
	// that. SSE comments and blank lines are not progress. A call that times
	// out is retried like any transport failure while nothing has streamed.
	// Defaults DefaultFirstByteTimeout and DefaultIdleTimeout.
	FirstByteTimeout time.Duration
	IdleTimeout      time.Duration
}

// Default stream timeouts and retry policy.
const (
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultIdleTimeout      = 60 * time.Second
	DefaultAttempts         = 4
	DefaultBackoff          = 250 * time.Millisecond
	DefaultMaxBackoff       = 10 * time.Second
	DefaultBudget           = 90 * time.Second
)

// Retrier is a Handler told of each retry before its wait: the attempt
// about to be made (2 for the first retry), the wait, and the failure.
type Retrier interface {
	Retry(attempt int, wait time.Duration, err error)
}

type retryPolicy struct {
	attempts                       int
	base, limit, budget, firstByte time.Duration
}

func (c *Client) policy() retryPolicy {
	p := retryPolicy{attempts: c.Attempts, base: c.Backoff, limit: c.MaxBackoff, budget: c.Budget, firstByte: c.FirstByteTimeout}
	if p.attempts <= 0 {
		p.attempts = DefaultAttempts
	}
	if p.base <= 0 {
		p.base = DefaultBackoff
	}
	if p.limit <= 0 {
		p.limit = DefaultMaxBackoff
	}
	if p.firstByte <= 0 {
		p.firstByte = DefaultFirstByteTimeout
	}
	if p.budget <= 0 {
		// A model configured to think long before its first token keeps
		// room for a retry.
		p.budget = max(DefaultBudget, p.firstByte*3/2)
	}
	return p
}

// wait is the wait before retry i after err: the backoff, or the
// server's Retry-After when longer, never over the cap.
func (p retryPolicy) wait(i int, err error) time.Duration {
	w := backoff.Delay(i, p.base, p.limit)
	var me *Error
	if errors.As(err, &me) && me.Status != 0 && me.retryAfter > w {
		w = me.retryAfter
	}
	return min(w, p.limit)
}

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
//
// A data line costs only a clock read and an atomic store: the idle timer
// is armed once, and when it fires it looks at when the last data line
// came and either cancels (silent for idle or longer) or waits out the
// rest. Resetting a runtime timer for every streamed piece cost more
// (docs/performance.md, "Streamed pieces").
type watchdog struct {
	cancel context.CancelCauseFunc
	first  *time.Timer
	idle   time.Duration
	seen   bool

	base time.Time    // the clock's origin for last
	last atomic.Int64 // when the last data line came, as time since base

	mu      sync.Mutex // orders check's re-arming with stop
	idleT   *time.Timer
	stopped bool
}

func newWatchdog(cancel context.CancelCauseFunc, first, idle time.Duration) *watchdog {
	w := &watchdog{cancel: cancel, idle: idle}
	w.first = time.AfterFunc(first, func() { cancel(&TimeoutError{FirstByte: true, After: first}) })
	return w
}

// data notes a data line: the silence after it is bounded by idle.
func (w *watchdog) data() {
	if w.seen {
		w.last.Store(int64(time.Since(w.base)))
		return
	}
	w.seen = true
	if !w.first.Stop() {
		return // the first-byte timeout has fired already
	}
	w.base = time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	// check reads w.idleT only under the lock, which is held until the
	// assignment is done, however soon the timer fires.
	w.idleT = time.AfterFunc(w.idle, w.check)
}

// check runs when the idle timer fires.
func (w *watchdog) check() {
	// last first, then the clock: a data line stored in between is then
	// older than now, never newer, so quiet is never negative.
	last := time.Duration(w.last.Load())
	quiet := time.Since(w.base) - last
	if quiet >= w.idle {
		w.cancel(&TimeoutError{After: w.idle})
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.idleT.Reset(w.idle - quiet)
	}
}

func (w *watchdog) stop() {
	w.first.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.idleT != nil {
		w.idleT.Stop()
	}
}

// Error is a failed call; Status is the HTTP status, 0 for transport errors.
type Error struct {
	Status  int
	Message string
	// Code is the error code the answer gave (the OpenAI shape's
	// error.code, a string), e.g. BudgetCode.
	Code       string
	Err        error
	retryAfter time.Duration
	// Usage is what the provider counted for the failed call (an error
	// chunk's usage, or the stream's so far): the turn still counts it.
	Usage Usage
	// stream: the provider sent the error in the answer's stream (an error
	// event, line or chunk) or ended it with finish_reason error: never
	// retried.
	stream bool
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
	if e.Budget() || e.stream {
		return false
	}
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
}

// Complete streams one chat completion, retrying failures that happen
// before the first delta within the retry policy (see Client). Over one
// of req.Limits it returns the response so far with a *LimitError, and
// for an answer that ended but is not complete the response with an
// *IncompleteError, without retrying.
func (c *Client) Complete(ctx context.Context, req *Request, h Handler) (*Response, error) {
	body, err := encodeRequest(req)
	if err != nil {
		return nil, fmt.Errorf("encode model request: %w", err)
	}
	p := c.policy()
	deadline := time.Now().Add(p.budget)
	var last error
	for i := range p.attempts {
		if i > 0 {
			wait := p.wait(i, last)
			if time.Until(deadline) <= wait {
				return nil, last // no time left in the budget for another attempt
			}
			if r, ok := h.(Retrier); ok {
				r.Retry(i+1, wait, last)
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
		}
		first := min(p.firstByte, time.Until(deadline))
		resp, started, err := c.once(ctx, body, req.Limits.withDefaults(), h, first)
		if err == nil {
			return resp, nil
		}
		if errors.Is(err, ErrOutputLimit) || errors.Is(err, ErrIncomplete) {
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

func (c *Client) once(ctx context.Context, body *requestBody, lim Limits, h Handler, first time.Duration) (*Response, bool, error) {
	idle := c.IdleTimeout
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
	if c.Route != "" {
		hreq.Header.Set(routes.RouteHeader, c.Route) // likewise
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
		e := &Error{Status: resp.StatusCode, Message: sanitize(errorMessage(msg)), Code: errorCode(msg)}
		if d, ok := backoff.RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			e.retryAfter = d
		}
		return nil, false, e
	}
	// Returning closes the body: over a limit the stream is cut at once.
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		return readWhole(progressReader{resp.Body, wd}, lim, h, c.Profile)
	}
	return readStream(resp.Body, lim, wd.data, h, c.Profile)
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
