package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

type rec struct{ text, reasoning strings.Builder }

func (r *rec) Text(d string)      { r.text.WriteString(d) }
func (r *rec) Reasoning(d string) { r.reasoning.WriteString(d) }

func req() *Request {
	return &Request{Model: "m", Messages: []transcript.Message{{Role: "user", Content: transcript.Text("hi")}}}
}

func TestStreamToolCallsAndUsage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"choices":[{"delta":{"role":"assistant","content":""}}]}`,
			`{"choices":[{"delta":{"reasoning_content":"think"}}]}`,
			`{"choices":[{"delta":{"content":"Hel"}}]}`,
			`{"choices":[{"delta":{"content":"lo"}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"bash","arguments":""}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"read","arguments":"{\"pa"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\"}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"x\"}"}}]}}]}`,
			`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	var h rec
	resp, err := (&Client{BaseURL: srv.URL, APIKey: "k"}).Complete(context.Background(), req(), &h)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello" || h.text.String() != "Hello" || h.reasoning.String() != "think" || resp.Usage.PromptTokens != 7 {
		t.Fatalf("%+v", resp)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Function.Arguments != `{"command":"ls"}` || resp.ToolCalls[1].Function.Arguments != `{"path":"x"}` {
		t.Fatalf("tool calls: %+v", resp.ToolCalls)
	}
}

func TestRetriesBeforeFirstToken(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.WriteHeader(503)
			fmt.Fprint(w, `{"error":{"message":"busy"}}`)
		case 2:
			// Broken before any token: retried too.
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n")
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		}
	}))
	defer srv.Close()
	resp, err := (&Client{BaseURL: srv.URL, Backoff: time.Millisecond}).Complete(context.Background(), req(), &rec{})
	if err != nil || resp.Content != "ok" || n.Load() != 3 {
		t.Fatalf("%v %v %d", resp, err, n.Load())
	}
}

func TestNoRetryAfterFirstTokenOr4xx(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Query().Get("x") == "" && strings.HasSuffix(r.URL.Path, "/bad/chat/completions") {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"bad request"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"partial\"}}]}\n\n")
	}))
	defer srv.Close()
	_, err := (&Client{BaseURL: srv.URL, Backoff: time.Millisecond}).Complete(context.Background(), req(), &rec{})
	var me *Error
	if !errors.As(err, &me) || n.Load() != 1 {
		t.Fatalf("after first token: %v, %d calls", err, n.Load())
	}
	n.Store(0)
	_, err = (&Client{BaseURL: srv.URL + "/bad", Backoff: time.Millisecond}).Complete(context.Background(), req(), &rec{})
	if !errors.As(err, &me) || me.Status != 400 || n.Load() != 1 || !strings.Contains(err.Error(), "bad request") {
		t.Fatalf("4xx: %v, %d calls", err, n.Load())
	}
}

func TestNonStreamingFallbackAndCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow/chat/completions" {
			_, _ = io.ReadAll(r.Body) // the server notices a closed connection only after the body
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"content":"whole","tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`)
	}))
	defer srv.Close()
	var h rec
	resp, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), req(), &h)
	if err != nil || resp.Content != "whole" || h.text.String() != "whole" || len(resp.ToolCalls) != 1 {
		t.Fatalf("%+v %v", resp, err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel(errors.New("stop")) }()
	_, err = (&Client{BaseURL: srv.URL + "/slow"}).Complete(ctx, req(), &h)
	if err == nil || err.Error() != "stop" {
		t.Fatalf("cancel: %v", err)
	}
}

func TestEncodeRequestCache(t *testing.T) {
	c := &MessageCache{}
	msgs := []transcript.Message{{Role: "system", Content: transcript.Text("p")}, {Role: "user", Content: transcript.Text("q \"x\"")}}
	check := func(msgs []transcript.Message) {
		body, err := encodeRequest(&Request{Model: "m", Messages: msgs, Tools: []ToolDef{{Type: "function", Function: FunctionDef{Name: "t"}}}, Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		b := body.bytes()
		if r, _ := io.ReadAll(body.reader()); !bytes.Equal(r, b) || int64(len(b)) != body.n {
			t.Fatalf("reader %q, pieces %q, length %d", r, b, body.n)
		}
		// Written straight from the messages, the request is what
		// encoding/json makes of them.
		want, _ := json.Marshal(struct {
			Model         string               `json:"model"`
			Tools         []ToolDef            `json:"tools"`
			Stream        bool                 `json:"stream"`
			StreamOptions *streamOptions       `json:"stream_options"`
			Messages      []transcript.Message `json:"messages"`
		}{"m", []ToolDef{{Type: "function", Function: FunctionDef{Name: "t"}}}, true, &streamOptions{IncludeUsage: true}, msgs})
		if !bytes.Equal(b, want) {
			t.Fatalf("request\n%s\nwant\n%s", b, want)
		}
		var got struct {
			Model    string               `json:"model"`
			Messages []transcript.Message `json:"messages"`
			Tools    []ToolDef            `json:"tools"`
			Stream   bool                 `json:"stream"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		if got.Model != "m" || !got.Stream || len(got.Tools) != 1 || len(got.Messages) != len(msgs) {
			t.Fatalf("%s", b)
		}
		for i := range msgs {
			if got.Messages[i].Role != msgs[i].Role || transcript.TextOf(got.Messages[i].Content) != transcript.TextOf(msgs[i].Content) {
				t.Fatalf("message %d: %s", i, b)
			}
		}
	}
	check(msgs)
	msgs = append(msgs, transcript.Message{Role: "assistant", ToolCalls: []transcript.ToolCall{{ID: "a", Type: "function", Function: transcript.FunctionCall{Name: "t", Arguments: "{}"}}}},
		transcript.Message{Role: "tool", ToolCallID: "a", Content: transcript.Text("r")})
	check(msgs)
	// A message encoding/json must write (HTML characters are escaped)
	// goes in between the directly written ones.
	msgs = append(msgs, transcript.Message{Role: "user", Name: "a<b", Content: json.RawMessage(`[ {"type":"text","text":"x"} ]`)},
		transcript.Message{Role: "user", Content: transcript.Text("after")})
	check(msgs)
	// Contents written directly are read from the cache's buffer, which
	// moved as it grew; the one encoding/json wrote keeps its own bytes.
	for i, m := range msgs {
		if len(m.Content) == 0 {
			continue
		}
		if inCache, want := c.holds(m.Content), i != 4; inCache != want {
			t.Errorf("message %d: content in the cache %v", i, inCache)
		}
	}
	if len(c.ends) != 6 {
		t.Fatalf("cache holds %d", len(c.ends))
	}
}

// holds reports whether b lies in the cache's buffer.
func (c *MessageCache) holds(b []byte) bool {
	for i := range c.enc[:cap(c.enc)] {
		if &c.enc[:cap(c.enc)][i] == &b[0] {
			return true
		}
	}
	return false
}
