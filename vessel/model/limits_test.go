package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// endless streams line forever (until the client goes), counting calls.
func endless(t *testing.T, calls *atomic.Int32, head, line string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, head)
		for {
			if _, err := fmt.Fprint(w, line); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTextLimitCutsOnRuneAndIsNotRetried(t *testing.T) {
	var calls atomic.Int32
	// "é" is 2 bytes: a 1001-byte limit cuts between runes.
	srv := endless(t, &calls, "", "data: {\"choices\":[{\"delta\":{\"content\":\""+strings.Repeat("é", 100)+"\"}}]}\n\n")
	r := req()
	r.Limits = Limits{Text: 1001}
	var h rec
	resp, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &h)
	var le *LimitError
	if !errors.As(err, &le) || le.What != LimitText || le.Limit != 1001 || !errors.Is(err, ErrOutputLimit) {
		t.Fatalf("err %v", err)
	}
	if resp == nil || resp.Content != strings.Repeat("é", 500) || h.text.String() != resp.Content {
		t.Fatalf("partial text %d bytes, handler %d bytes", len(resp.Content), h.text.Len())
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls: a limit stop was retried", calls.Load())
	}
}

func TestReasoningLimit(t *testing.T) {
	var calls atomic.Int32
	srv := endless(t, &calls, "", `data: {"choices":[{"delta":{"reasoning_content":"`+strings.Repeat("r", 1000)+`"}}]}`+"\n\n")
	r := req()
	r.Limits = Limits{Reasoning: 4500}
	var h rec
	_, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &h)
	var le *LimitError
	if !errors.As(err, &le) || le.What != LimitReasoning || le.Limit != 4500 || h.reasoning.Len() != 4500 {
		t.Fatalf("err %v, %d bytes of reasoning passed on", err, h.reasoning.Len())
	}
}

// TestReasoningUnderBothNames: vLLM sends each reasoning piece as reasoning
// and as reasoning_content; it is passed on and counted once, and a piece
// that differs between the two is passed on twice. Both names are kept
// while all the reasoning kept fits in the limit; past it, the duplicate
// name is dropped whole.
func TestReasoningUnderBothNames(t *testing.T) {
	srv, _ := replay(t, []byte(`data: {"choices":[{"delta":{"reasoning":"Think","reasoning_content":"Think"}}]}`+"\n\n"+
		`data: {"choices":[{"delta":{"reasoning":" a","reasoning_content":" b"}}]}`+"\n\n"+
		`data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n"))
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{14, `{"reasoning_content":"Think b","reasoning":"Think a"}`},
		{9, `{"reasoning_content":"Think b"}`}, // 9 shown, 14 kept under both names
	} {
		r := req()
		r.Limits = Limits{Reasoning: tc.limit}
		var h rec
		resp, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &h)
		if err != nil || h.reasoning.String() != "Think b a" {
			t.Fatalf("limit %d: err %v, reasoning %q passed on", tc.limit, err, h.reasoning.String())
		}
		if string(resp.Extra) != tc.want {
			t.Fatalf("limit %d: kept %s, want %s", tc.limit, resp.Extra, tc.want)
		}
	}
}

// TestMaxedReasoningUnderBothNamesFitsTheTranscript: at the largest
// max_answer_bytes (4 MiB), reasoning sent under both names is kept once,
// so the assistant message goes through the transcript the next turn
// reads (transcript.Parse, Envelope.Validate) instead of passing
// transcript.MaxExtraBytes.
func TestMaxedReasoningUnderBothNamesFitsTheTranscript(t *testing.T) {
	const limit = 4 << 20
	piece := strings.Repeat("x", 64<<10)
	var body strings.Builder
	for range limit / len(piece) {
		body.WriteString(`data: {"choices":[{"delta":{"reasoning":"` + piece + `","reasoning_content":"` + piece + `"}}]}` + "\n\n")
	}
	body.WriteString(`data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	srv, _ := replay(t, []byte(body.String()))
	r := req()
	r.Limits = Limits{Reasoning: limit}
	var h rec
	resp, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &h)
	if err != nil || h.reasoning.Len() != limit {
		t.Fatalf("err %v, %d bytes of reasoning passed on", err, h.reasoning.Len())
	}
	b, err := transcript.Marshal([]transcript.Message{{Role: "user", Content: transcript.Text("q")},
		{Role: "assistant", Content: transcript.Text(resp.Content), Extra: resp.Extra}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := transcript.Parse(b)
	if err == nil {
		err = env.Validate()
	}
	if err != nil {
		t.Fatalf("the next turn refuses the transcript: %v", err)
	}
	var kept map[string]string
	if err := json.Unmarshal(env.Messages[1].Extra, &kept); err != nil || len(kept["reasoning_content"]) != limit || len(kept) != 1 {
		t.Fatalf("kept %d names (%v), reasoning_content of %d bytes", len(kept), err, len(kept["reasoning_content"]))
	}
}

func TestArgumentsLimit(t *testing.T) {
	var calls atomic.Int32
	srv := endless(t, &calls,
		`data: {"choices":[{"delta":{"content":"calling","tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":""}}]}}]}`+"\n\n",
		`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"`+strings.Repeat("a", 4096)+`"}}]}}]}`+"\n\n")
	r := req()
	r.Limits = Limits{Arguments: 10000}
	resp, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &rec{})
	var le *LimitError
	if !errors.As(err, &le) || le.What != LimitArguments || le.Limit != 10000 {
		t.Fatalf("err %v", err)
	}
	if resp.Content != "calling" || len(resp.ToolCalls) != 0 {
		t.Fatalf("partial %+v", resp)
	}
}

func TestToolCallIndexLimit(t *testing.T) {
	var calls atomic.Int32
	// An index of a billion must not grow a billion-entry slice.
	srv := endless(t, &calls, `data: {"choices":[{"delta":{"tool_calls":[{"index":1000000000,"function":{"name":"x"}}]}}]}`+"\n\n", ": x\n")
	_, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), req(), &rec{})
	var le *LimitError
	if !errors.As(err, &le) || le.What != LimitToolCalls || le.Limit != MaxToolCalls {
		t.Fatalf("err %v", err)
	}
}

func TestLineLimit(t *testing.T) {
	var calls atomic.Int32
	// One line that never ends: read up to the line limit, no further.
	srv := endless(t, &calls, `data: {"choices":[{"delta":{"content":"`, strings.Repeat("b", 64<<10))
	r := req()
	r.Limits = Limits{Line: 300 << 10}
	_, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &rec{})
	var le *LimitError
	if !errors.As(err, &le) || le.What != LimitLine || le.Limit != 300<<10 {
		t.Fatalf("err %v", err)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls", calls.Load())
	}
	if got := (Limits{Text: 1 << 20, Arguments: 2 << 20}).withDefaults().Line; got != 6<<20+64<<10 {
		t.Fatalf("default line limit %d", got)
	}
}

func TestWholeResponseLimits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"content":"%s"},"finish_reason":"stop"}]}`, strings.Repeat("c", 5000))
	}))
	defer srv.Close()
	r := req()
	r.Limits = Limits{Text: 4000}
	var h rec
	resp, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &h)
	if !errors.Is(err, ErrOutputLimit) || len(resp.Content) != 4000 || h.text.Len() != 4000 {
		t.Fatalf("err %v", err)
	}
	r.Limits = Limits{Text: 4000, Line: 1000}
	if _, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &rec{}); !errors.Is(err, ErrOutputLimit) {
		t.Fatalf("line limit on a whole response: %v", err)
	}
}

func TestAllArgumentsLimit(t *testing.T) {
	// Many calls, each small, together over AllArguments.
	i := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for ; i < MaxToolCalls; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":%d,\"function\":{\"name\":\"x\",\"arguments\":\"%s\"}}]}}]}\n\n", i, strings.Repeat("a", 900))
		}
	}))
	defer srv.Close()
	r := req()
	r.Limits = Limits{Arguments: 1000, AllArguments: 5000}
	_, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), r, &rec{})
	var le *LimitError
	if !errors.As(err, &le) || le.What != LimitAllArguments || le.Limit != 5000 {
		t.Fatalf("err %v", err)
	}
}

// FuzzReadStream: whatever a model streams, the reader never panics and
// never hands back more than its limits allow.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hello\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(`data: {"choices":[{"delta":{"tool_calls":[{"index":3,"id":"a","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}}]}` + "\ndata: [DONE]\n"))
	f.Add([]byte(": comment\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"\\u00e9\\u00e9\\u00e9\"}}]}\n" + strings.Repeat("x", 300)))
	lim := Limits{Text: 64, Reasoning: 32, Arguments: 48, AllArguments: 100, Line: 256}
	f.Fuzz(func(t *testing.T, data []byte) {
		var h rec
		resp, _, err := readStream(strings.NewReader(string(data)), lim, func() {}, &h, nil)
		if h.reasoning.Len() > lim.Reasoning {
			t.Fatalf("%d bytes of reasoning, limit %d", h.reasoning.Len(), lim.Reasoning)
		}
		if resp == nil {
			return
		}
		if len(resp.Content) > lim.Text || h.text.Len() > lim.Text {
			t.Fatalf("%d bytes of text, handler %d, limit %d (err %v)", len(resp.Content), h.text.Len(), lim.Text, err)
		}
		if len(resp.ToolCalls) > MaxToolCalls {
			t.Fatalf("%d tool calls", len(resp.ToolCalls))
		}
		all := 0
		for _, c := range resp.ToolCalls {
			n := len(c.Function.Name) + len(c.Function.Arguments)
			if all += n; n > lim.Arguments || all > lim.AllArguments {
				t.Fatalf("tool call of %d bytes, %d together", n, all)
			}
		}
	})
}
