package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// toolStream builds a stream of n tool calls whose argument pieces are
// interleaved as seed says, with empty chunks and null fields between
// them. indexed: every piece has its index (OpenAI); else every piece
// has its call's id (Gemini's index-less calls). dupIDs gives every call
// the same id (indexed only: an index-less id is the call's key).
func toolStream(seed []byte, indexed, dupIDs bool) (string, []call) {
	at := 0
	next := func() int {
		if len(seed) == 0 {
			return 0
		}
		b := int(seed[at%len(seed)])
		at++
		return b
	}
	n := 1 + next()%4
	var want []call
	var pieces [][]string
	for i := range n {
		args := fmt.Sprintf(`{"k":%d,"s":"%s"}`, i, strings.Repeat("é\\\"x", next()%5))
		id := fmt.Sprintf("id%d", i)
		if dupIDs && indexed {
			id = "dup"
		}
		want = append(want, call{id, fmt.Sprintf("tool%d", i), args, ""})
		var ps []string
		for rest := args; rest != ""; {
			k := min(1+next()%7, len(rest))
			// never split inside an escape or a multi-byte rune
			for k < len(rest) && (rest[k-1] == '\\' || rest[k]&0xC0 == 0x80) {
				k++
			}
			ps, rest = append(ps, rest[:k]), rest[k:]
		}
		pieces = append(pieces, ps)
	}
	var b strings.Builder
	sent := make([]int, n)
	for left := true; left; {
		left = false
		i := next() % n
		for j := range n { // the next call with a piece left, from i on
			if c := (i + j) % n; sent[c] < len(pieces[c]) {
				i, left = c, true
				break
			}
		}
		if !left {
			break
		}
		tc := map[string]any{"function": map[string]any{"arguments": pieces[i][sent[i]]}}
		if indexed {
			tc["index"] = i
		}
		if sent[i] == 0 || !indexed {
			tc["id"] = want[i].ID
		}
		if sent[i] == 0 {
			tc["type"] = "function"
			tc["function"].(map[string]any)["name"] = want[i].Name
		}
		sent[i]++
		ch, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{tc}}}}})
		fmt.Fprintf(&b, "data: %s\n\n", ch)
		switch next() % 5 {
		case 0:
			b.WriteString(`data: {"choices":[],"usage":null}` + "\n\n")
		case 1:
			b.WriteString(`data: {"choices":[{"index":0,"delta":null,"finish_reason":null}]}` + "\n\n")
		case 2:
			b.WriteString(": keep-alive\n\n")
		}
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	return b.String(), want
}

// FuzzToolCallOrder: however the pieces of parallel tool calls are
// interleaved, with or without indexes, with empty chunks, null deltas and
// duplicate ids between them, each call comes out whole and exact.
func FuzzToolCallOrder(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 7}, true, false)
	f.Add([]byte{2, 0, 1, 0, 1, 9}, false, false)
	f.Add([]byte{3, 7, 7, 7}, true, true)
	f.Fuzz(func(t *testing.T, seed []byte, indexed, dupIDs bool) {
		stream, want := toolStream(seed, indexed, dupIDs)
		resp, _, err := readStream(strings.NewReader(stream), Limits{}.withDefaults(), func() {}, nopHandler{}, nil)
		if err != nil {
			t.Fatalf("%v\n%s", err, stream)
		}
		got := map[string]call{}
		for _, tc := range resp.ToolCalls {
			got[tc.Function.Name] = call{tc.ID, tc.Function.Name, tc.Function.Arguments, ""}
		}
		if len(resp.ToolCalls) != len(want) {
			t.Fatalf("%d calls, want %d\n%s", len(resp.ToolCalls), len(want), stream)
		}
		for i, w := range want {
			if got[w.Name] != w {
				t.Fatalf("call %s: %+v, want %+v\n%s", w.Name, got[w.Name], w, stream)
			}
			if indexed && resp.ToolCalls[i].Function.Name != w.Name {
				t.Fatalf("indexed calls out of index order: %+v", resp.ToolCalls)
			}
		}
	})
}

// TestSameIndexNewID: a server that numbers every parallel call 0 still
// gives two calls when the second comes with its own id and name; a piece
// repeating the first call's id continues it.
func TestSameIndexNewID(t *testing.T) {
	stream := `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\":"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"1}"}}]}}]}

data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"f","arguments":"{\"x\":2}"}}]}}]}

data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]
`
	resp, _, err := readStream(strings.NewReader(stream), Limits{}.withDefaults(), func() {}, nopHandler{}, nil)
	if err != nil || len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Function.Arguments != `{"x":1}` || resp.ToolCalls[1].ID != "b" || resp.ToolCalls[1].Function.Arguments != `{"x":2}` {
		t.Fatalf("%v %+v", err, resp)
	}
}
