package model

import (
	"encoding/json"
	"reflect"
	"testing"
)

// normalize makes empty and nil slices compare equal.
func normalize(c *chunk) chunk {
	out := *c
	if len(out.Choices) == 0 {
		out.Choices = nil
	}
	out.Choices = append([]choice(nil), out.Choices...)
	for i := range out.Choices {
		if len(out.Choices[i].Delta.ToolCalls) == 0 {
			out.Choices[i].Delta.ToolCalls = nil
		}
	}
	return out
}

// FuzzChunkDecode checks that the chunk scanner gives what json.Unmarshal
// gives whenever it accepts a chunk.
func FuzzChunkDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`,
		`{"choices":[{"delta":{"reasoning_content":"th\"ink","reasoning":"é"},"finish_reason":"stop","logprobs":{"a":[1,2.5e3,-0.1,true,false,null]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"bash","arguments":""}}]}}]}`,
		`{"Choices":[{"delta":{"content":"x"}}]}`,
		`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`,
		`{"choices":[{"delta":{"content":"\ud83d\ude00 \u00e9 \ud800"}}]}`,
		`{"choices":null,"usage":null}`,
		`{"choices":[{"delta":{"content":"a"},"delta":{"reasoning":"b"}}]} `,
		`{"usage":{"prompt_tokens":-0,"completion_tokens":1e2}}`,
		`{"error":{"message":"boom"}}`,
		`{"choices":[{"delta":{"content":"x"}}]} x`,
		"{\"choices\":[{\"delta\":{\"content\":\"\xff\"}}]}",
		`{"a":01}`,
		`[]`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d chunkDecoder
		if !d.fast(data) {
			return
		}
		var want chunk
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("scanner accepted what encoding/json refuses (%v): %q", err, data)
		}
		got, wantN := normalize(&d.ch), normalize(&want)
		if !reflect.DeepEqual(got, wantN) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(wantN)
			t.Fatalf("%q:\n got %s\nwant %s", data, gb, wb)
		}
	})
}

func TestChunkDecoderReuse(t *testing.T) {
	var d chunkDecoder
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"delta":{"content":"b"}}]}`,
	} {
		ch, err := d.decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		var want chunk
		_ = json.Unmarshal([]byte(s), &want)
		if !reflect.DeepEqual(normalize(ch), normalize(&want)) {
			t.Fatalf("%s: %+v", s, ch)
		}
	}
}
