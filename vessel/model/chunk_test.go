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
		`{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"a"},{"type":"image_url","image_url":"x"}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":{"a": [1, "b"]}}}]}}]}`,
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

// decodeLikeUnmarshal checks one decode against json.Unmarshal: the same
// acceptance and, when accepted, the same chunk.
func decodeLikeUnmarshal(t *testing.T, d *chunkDecoder, data []byte) {
	t.Helper()
	got, err := d.decode(data)
	var want chunk
	werr := json.Unmarshal(data, &want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: decode error %v, json.Unmarshal error %v", data, err, werr)
	}
	if err != nil {
		return
	}
	g, w := normalize(got), normalize(&want)
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Fatalf("%q:\n got %s\nwant %s", data, gb, wb)
	}
}

// FuzzChunkTemplate checks the template path: after a chunk a, the chunk
// made of a's bytes around content s (whatever s is), and then any chunk b,
// decode as json.Unmarshal reads them.
func FuzzChunkTemplate(f *testing.F) {
	env := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}],"usage":{"prompt_tokens":3}}`
	for _, c := range [][3]string{
		{env, `"ok "`, env},
		{env, `"a\"b\u00e9"`, `{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}`},
		{env, `"a","content":"b"`, env},
		{env, `"a" `, env},
		{env, `null`, env},
		{env, `"a`, env},
		{env, `"` + "\xff" + `"`, env},
		{env, `""`, `"x"`},
		{`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`, `"c"`, env},
		{`{"choices":[{"delta":{"role":"assistant","content":""}}]}`, `"x"`, `{"choices":[{"delta":{"content":"y"}}]}`},
		{`{"choices":[{"delta":{"content":"a","content":"b"}}]}`, `"c"`, env},
	} {
		f.Add([]byte(c[0]), []byte(c[1]), []byte(c[2]))
	}
	f.Fuzz(func(t *testing.T, a, s, b []byte) {
		var d chunkDecoder
		decodeLikeUnmarshal(t, &d, a)
		if d.tpl {
			mid := append(append(append([]byte(nil), d.pre...), s...), d.post...)
			decodeLikeUnmarshal(t, &d, mid)
		}
		decodeLikeUnmarshal(t, &d, b)
	})
}

// TestChunkTemplateStream decodes a stream in one envelope, checking each
// chunk against json.Unmarshal and which ones the template read.
func TestChunkTemplateStream(t *testing.T) {
	pre := `{"choices":[{"delta":{"content":`
	post := `},"finish_reason":null,"index":0}],"created":1,"id":"c","model":"m"}`
	chunks := []string{`{"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null,"index":0}],"created":1,"id":"c","model":"m"}`}
	for _, s := range []string{`"one"`, `" two"`, `"\u00e9\n"`, `null`, `"after null"`, `"x","reasoning":"y"`, `"z"`} {
		chunks = append(chunks, pre+s+post)
	}
	chunks = append(chunks, `{"choices":[{"delta":{"content":"end"},"finish_reason":"stop","index":0}],"created":1,"id":"c","model":"m"}`)
	var d chunkDecoder
	var hits []int
	for i, c := range chunks {
		// again sets only what decode would set from the same bytes.
		if d.again([]byte(c)) {
			hits = append(hits, i)
		}
		decodeLikeUnmarshal(t, &d, []byte(c))
	}
	// " two" and the escaped string follow "one"'s template; the role
	// chunk's envelope differs, a null content leaves no template, two
	// tokens in the string's place or another envelope are not the template.
	if want := []int{2, 3}; !reflect.DeepEqual(hits, want) {
		t.Fatalf("template read chunks %v, want %v", hits, want)
	}
	if !d.tpl || d.ch.Choices[0].Delta.Content != "end" {
		t.Fatalf("the last chunk left no template: %+v", d.ch)
	}
}

// TestPartsAndObjectArguments reads content as a list of parts and
// arguments as a JSON object on both paths: the scanner's, and
// encoding/json's (an escaped key sends a delta there).
func TestPartsAndObjectArguments(t *testing.T) {
	for _, key := range []string{`"role"`, `"r\u006fle"`} {
		data := `{"choices":[{"delta":{` + key + `:"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Hm, "},{"type":"text","text":"yes."}]},` +
			`{"type":"text","text":"Yes"},{"type":"text","text":"."}],"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":{"a": [1, "b"]}}}]}}]}`
		var d chunkDecoder
		ch, err := d.decode([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		got := ch.Choices[0].Delta
		if got.Content != "Yes." || got.Thinking != "Hm, yes." || len(got.ToolCalls) != 1 || got.ToolCalls[0].Function.Arguments != `{"a":[1,"b"]}` {
			t.Fatalf("%s: %+v", key, got)
		}
	}
	for _, bad := range []string{
		`{"choices":[{"delta":{"content":[1]}}]}`,
		`{"choices":[{"delta":{"content":{"type":"text"}}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":true}}]}}]}`,
	} {
		var d chunkDecoder
		if _, err := d.decode([]byte(bad)); err == nil {
			t.Fatalf("%s read without error", bad)
		}
	}
}

// TestChunkDecoderSlowPathDrop: a chunk the scanner leaves to
// encoding/json (here an escaped key outside the delta) drops the route
// profile's members, not the auto profile's: the same as the scanner.
func TestChunkDecoderSlowPathDrop(t *testing.T) {
	slow := []byte(`{"i\u0064":"c","choices":[{"delta":{"content":"a","index":0,"token_id":7,"INDEX":1,"x":1}}]}`)
	fast := []byte(`{"id":"c","choices":[{"delta":{"content":"a","index":0,"token_id":7,"x":1}}]}`)
	if d := (chunkDecoder{}); d.fast(slow) {
		t.Fatal("the scanner read the escaped key: the test needs a chunk it leaves to encoding/json")
	}
	keys := func(drop []string, data []byte) []string {
		d := chunkDecoder{drop: drop}
		c, err := d.decode(data)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range c.Choices[0].Delta.Extra {
			out = append(out, string(m.key))
		}
		return out
	}
	for _, tc := range []struct {
		drop     []string
		slow     []string
		fastKeys []string
	}{
		{[]string{"index", "token_id"}, []string{"x"}, []string{"x"}},
		{[]string{}, []string{"index", "token_id", "INDEX", "x"}, []string{"index", "token_id", "x"}},
		{[]string{"token_id"}, []string{"index", "INDEX", "x"}, []string{"index", "x"}},
	} {
		if got := keys(tc.drop, slow); !reflect.DeepEqual(got, tc.slow) {
			t.Errorf("drop %q, encoding/json path: members %q, want %q", tc.drop, got, tc.slow)
		}
		if got := keys(tc.drop, fast); !reflect.DeepEqual(got, tc.fastKeys) {
			t.Errorf("drop %q, scanner: members %q, want %q", tc.drop, got, tc.fastKeys)
		}
	}
}
