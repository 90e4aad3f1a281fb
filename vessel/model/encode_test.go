package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/internal/jsonscan"
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

// compactContentBytewise is compactContent as it was, one byte at a time:
// the reference for the word-at-a-time scan.
func compactContentBytewise(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if in {
			switch {
			case c == '\\':
				i++
			case c == '"':
				in = false
			case c == '<', c == '>', c == '&':
				return false
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
				return false
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	var s jsonscan.Scanner
	s.Reset(raw)
	return s.Skip() && s.End()
}

// TestContentPlain8 checks the word test against the bytes it stands for:
// every byte value in every position of an otherwise plain word.
func TestContentPlain8(t *testing.T) {
	stop := func(c byte) bool { return strings.IndexByte("\\\"<>&\xe2", c) >= 0 }
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			w := []byte("abcdefgh")
			w[pos] = byte(v)
			if got := contentPlain8(binary.LittleEndian.Uint64(w)); got == stop(byte(v)) {
				t.Fatalf("byte %#x at %d: contentPlain8 = %v", v, pos, got)
			}
		}
	}
}

// FuzzCompactContent checks compactContent against the byte-at-a-time scan.
func FuzzCompactContent(f *testing.F) {
	for _, s := range []string{`"plain text longer than eight bytes"`, `{"a":"x<y and more text here"}`, "\"long text \u2028 after\"",
		"\"long text \xe2\x80 cut\"", `["aaaaaaaa\"bbbbbbbb\\","c d"]`, `"aaaaaaa\`, `{"k":"vvvvvvvvvvvvvvvv"} `, "\"\xe2\x80\xa9\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := compactContent(raw), compactContentBytewise(raw); got != want {
			t.Fatalf("compactContent(%q) = %v, byte by byte %v", raw, got, want)
		}
	})
}

// FuzzMarshalExtra: a message's and a call's provider fields are written
// by the encoder exactly as json.Marshal writes them, and the result is
// valid JSON holding them.
func FuzzMarshalExtra(f *testing.F) {
	f.Add([]byte(`{"reasoning_content":"think \"a\""}`), []byte(`{"extra_content":{"google":{"thought_signature":"c2ln"}}}`))
	f.Add([]byte(`{}`), []byte(``))
	f.Add([]byte(`{ "a": 1 }`), []byte(`{"b":[1,2]}`))
	f.Add([]byte(`{"a":"<b>"}`), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, extra, callExtra []byte) {
		m := transcript.Message{Role: "assistant", Content: transcript.Text("x"), Extra: extra,
			ToolCalls: []transcript.ToolCall{{ID: "c", Type: "function", Function: transcript.FunctionCall{Name: "f", Arguments: "{}"}, Extra: callExtra}}}
		want, werr := json.Marshal(&m)
		got, ok := appendMessage(nil, &m)
		if !ok {
			return
		}
		if werr != nil {
			t.Fatalf("json.Marshal refuses (%v) what the encoder wrote: %s", werr, got)
		}
		if !bytes.Equal(got, want) || !json.Valid(got) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
		if len(got) > estimate(&m) {
			t.Fatalf("estimate %d for %d bytes", estimate(&m), len(got))
		}
	})
}
