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
	"strconv"
	"strings"
	"time"

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
	Cache *MessageCache
}

// MessageCache holds encoded messages by position.
type MessageCache struct{ enc [][]byte }

// encodeRequest writes the request body, reusing cached message encodings.
func encodeRequest(req *Request) ([]byte, error) {
	head, err := json.Marshal(wireRequest{Model: req.Model, Tools: req.Tools, Stream: true,
		StreamOptions: &streamOptions{IncludeUsage: true}})
	if err != nil {
		return nil, err
	}
	c := req.Cache
	if c == nil {
		c = &MessageCache{}
	}
	size := len(head) + 16
	for i := range req.Messages {
		if i >= len(c.enc) {
			b, err := marshalMessage(&req.Messages[i])
			if err != nil {
				return nil, err
			}
			c.enc = append(c.enc, b)
		}
		size += len(c.enc[i]) + 1
	}
	// head ends with "}"; the messages go in as its last member.
	var buf bytes.Buffer
	buf.Grow(size)
	buf.Write(head[:len(head)-1])
	buf.WriteString(`,"messages":[`)
	for i := range req.Messages {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(c.enc[i])
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

// Usage is the token count of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Response is a finished call.
type Response struct {
	Content      string
	Reasoning    string
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
	HTTP    *http.Client
	// Attempts is how many times a call is tried while nothing has streamed
	// (default 4); Backoff the first wait, doubled each time (default 250ms).
	Attempts int
	Backoff  time.Duration
}

// Error is a failed call; Status is the HTTP status, 0 for transport errors.
type Error struct {
	Status     int
	Message    string
	Err        error
	retryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("model answered %d: %s", e.Status, e.Message)
	}
	return "model call failed: " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func (e *Error) retryable() bool {
	return e.Status == 0 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
}

// Complete streams one chat completion, retrying failures that happen
// before the first delta.
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
		resp, started, err := c.once(ctx, body, h)
		if err == nil {
			return resp, nil
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

func (c *Client) once(ctx context.Context, body []byte, h Handler) (*Response, bool, error) {
	url := strings.TrimSuffix(c.BaseURL, "/") + "/chat/completions"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, false, &Error{Message: "bad model URL", Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
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
		e := &Error{Status: resp.StatusCode, Message: errorMessage(msg)}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			e.retryAfter = time.Duration(s) * time.Second
		}
		return nil, false, e
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		return readWhole(resp.Body, h)
	}
	return readStream(resp.Body, h)
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

func readStream(r io.Reader, h Handler) (*Response, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	out := &Response{}
	var content, reasoning strings.Builder
	type partial struct {
		id, name string
		args     strings.Builder
	}
	var calls []*partial
	var dec chunkDecoder
	started := false
	done := false
	for !done {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: collect it whole.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
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
			return nil, started, &Error{Message: truncate(ch.Error.Message, 300)}
		}
		if ch.Usage != nil {
			out.Usage = *ch.Usage
		}
		for _, c := range ch.Choices {
			d := c.Delta
			if rs := d.ReasoningContent + d.Reasoning; rs != "" {
				started = true
				reasoning.WriteString(rs)
				h.Reasoning(rs)
			}
			if d.Content != "" {
				started = true
				content.WriteString(d.Content)
				h.Text(d.Content)
			}
			for _, tc := range d.ToolCalls {
				started = true
				for tc.Index >= len(calls) {
					calls = append(calls, &partial{})
				}
				if tc.Index < 0 {
					return nil, started, &Error{Message: "tool call with a negative index"}
				}
				p := calls[tc.Index]
				if tc.ID != "" {
					p.id = tc.ID
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
	out.Reasoning = reasoning.String()
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

// readWhole handles a server that ignored stream:true.
func readWhole(r io.Reader, h Handler) (*Response, bool, error) {
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
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&v); err != nil {
		return nil, false, &Error{Message: "malformed response", Err: err}
	}
	if len(v.Choices) == 0 {
		return nil, false, &Error{Message: "response has no choices"}
	}
	m := v.Choices[0].Message
	out := &Response{Reasoning: m.ReasoningContent, ToolCalls: m.ToolCalls, Usage: v.Usage, FinishReason: v.Choices[0].FinishReason}
	if m.Content != nil {
		out.Content = *m.Content
	}
	if out.Reasoning != "" {
		h.Reasoning(out.Reasoning)
	}
	if out.Content != "" {
		h.Text(out.Content)
	}
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
