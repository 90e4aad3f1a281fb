package model

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// FuzzMarshalMessage checks the direct message encoder against
// json.Marshal.
func FuzzMarshalMessage(f *testing.F) {
	f.Add("user", []byte(`"hello world"`), "", "", "", "", "")
	f.Add("assistant", []byte(``), "n", "call_1", "bash", `{"command":"ls <x> & y"}`, "")
	f.Add("tool", []byte(`[{"type":"text","text":"a\u003cb"}, {"type":"image_url"}]`), "", "", "", "", "call_1")
	f.Add("user", []byte("\"\u2028 é \xff\""), "é", "", "", "", "")
	f.Add("user", []byte(`null`), "", "", "", "", "")
	f.Add("user", []byte(`{"a":[1,2.5,true]}`), "", "", "", "", "")
	f.Add("user", []byte(`"unterminated`), "", "", "", "", "")
	f.Fuzz(func(t *testing.T, role string, content []byte, name, id, fn, args, callID string) {
		m := transcript.Message{Role: role, Content: content, Name: name, ToolCallID: callID}
		if fn != "" {
			m.ToolCalls = []transcript.ToolCall{{ID: id, Type: "function", Function: transcript.FunctionCall{Name: fn, Arguments: args}}}
		}
		want, werr := json.Marshal(&m)
		got, ok := appendMessage(nil, &m)
		if !ok {
			return
		}
		if werr != nil {
			t.Fatalf("json.Marshal refuses (%v) what the encoder wrote: %s", werr, got)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
		if len(got) > estimate(&m) {
			t.Fatalf("estimate %d for %d bytes: %s", estimate(&m), len(got), got)
		}
	})
}

// BenchmarkEncodeHistory encodes a 1,000-message history, once per turn.
func BenchmarkEncodeHistory(b *testing.B) {
	var msgs []transcript.Message
	for i := range 1000 {
		role := []string{"user", "assistant"}[i%2]
		msgs = append(msgs, transcript.Message{Role: role, Content: transcript.Text("message of the history, with some words in it to look like a conversation")})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeRequest(&Request{Model: "m", Messages: msgs}); err != nil {
			b.Fatal(err)
		}
	}
}
