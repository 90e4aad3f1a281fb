package scripted

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
)

// FuzzDecodeRequest checks that the request scanner gives what
// json.Unmarshal gives whenever it accepts a request.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}],"messages":[{"role":"system","content":"p"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null,"tool_calls":[{"id":"a"}]},{"role":"tool","tool_call_id":"a","content":"r\"x\""}]}`,
		`{"messages":[{"Role":"user","content":"x"}]}`,
		`{"messages":[{"role":"us\u0065r","content":"x"}],"messages":[]}`,
		`{"messages":null,"tools":null,"stream":null}`,
		`{"messages":[null]}`,
		`{"stream":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got request
		if !scanRequest(data, &got) {
			return
		}
		var want request
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("scanner accepted what encoding/json refuses (%v): %q", err, data)
		}
		if len(got.Messages) == 0 && len(want.Messages) == 0 {
			got.Messages, want.Messages = nil, nil
		}
		if len(got.Tools) == 0 && len(want.Tools) == 0 {
			got.Tools, want.Tools = nil, nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// BenchmarkDecodeRequest reads a request with a 1,000-message history, as
// each model call of the load scenario sends.
func BenchmarkDecodeRequest(b *testing.B) {
	var msgs []string
	for i := range 1000 {
		role := []string{"user", "assistant"}[i%2]
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":"message %d of the history, with some words in it to look like a conversation"}`, role, i))
	}
	msgs = append(msgs, `{"role":"user","content":"#script:load run the command"}`)
	body := []byte(`{"model":"m","stream":true,"tools":[{"type":"function","function":{"name":"bash","parameters":{"type":"object"}}}],"messages":[` + strings.Join(msgs, ",") + `]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var req request
		if err := decodeRequest(body, &req); err != nil || len(req.Messages) != 1001 {
			b.Fatal(err)
		}
		_ = readTurn(&req)
	}
}

// TestStreamChunks checks the prebuilt chunk envelope: every chunk is a
// whole chat.completion.chunk object.
func TestStreamChunks(t *testing.T) {
	srv := httptest.NewServer(NewServer(&Script{Default: &Rule{Steps: []Step{{Text: "a \"quoted\" <answer> é", Pieces: 4, Reasoning: "hm", ReasoningPieces: 2}}}}))
	defer srv.Close()
	_, body := post(t, srv.URL, map[string]any{"model": "m\"x", "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "q"}}})
	var text, reasoning strings.Builder
	var finish string
	n := 0
	events, err := sse.ReadAll(strings.NewReader(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range events {
		if string(data) == "[DONE]" {
			continue
		}
		var c struct {
			ID, Object, Model string
			Created           int64
			Choices           []struct {
				Index int
				Delta struct {
					Role, Content    string
					ReasoningContent string `json:"reasoning_content"`
				}
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		if c.ID == "" || c.Object != "chat.completion.chunk" || c.Model != "m\"x" || c.Created == 0 {
			t.Fatalf("envelope: %s", data)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
			reasoning.WriteString(ch.Delta.ReasoningContent)
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
		n++
	}
	if text.String() != "a \"quoted\" <answer> é" || reasoning.String() != "hm" || finish != "stop" || n != 1+2+4+1+1 {
		t.Fatalf("%d chunks, text %q, reasoning %q, finish %q\n%s", n, text.String(), reasoning.String(), finish, body)
	}
}
