package model

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
)

// TestMergeTextItems: consecutive reasoning.text items with one index are
// merged; other items, other indexes and items without an index are kept
// apart; what is not an array of objects is sent as received.
func TestMergeTextItems(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"reasoning.text","text":"a","signature":"","index":0},{"type":"reasoning.text","text":"b<c","signature":"s","index":0}`,
			`{"type":"reasoning.text","text":"ab<c","signature":"s","index":0}`},
		{`{"type":"reasoning.text","text":"a","index":0},{"type":"reasoning.text","text":"b","index":1}`,
			`{"type":"reasoning.text","text":"a","index":0},{"type":"reasoning.text","text":"b","index":1}`},
		{`{"type":"reasoning.text","text":"a"},{"type":"reasoning.text","text":"b"}`,
			`{"type":"reasoning.text","text":"a"},{"type":"reasoning.text","text":"b"}`},
		{`{"type":"reasoning.text","text":"a","index":0},{"type":"reasoning.encrypted","data":"x","index":0},{"type":"reasoning.text","text":"b","index":0}`,
			`{"type":"reasoning.text","text":"a","index":0},{"type":"reasoning.encrypted","data":"x","index":0},{"type":"reasoning.text","text":"b","index":0}`},
		{`{"type":"reasoning.text","index":0,"format":null},{"type":"reasoning.text","text":"b","index":0,"format":"f"}`,
			`{"type":"reasoning.text","index":0,"format":"f","text":"b"}`},
	} {
		got, ok := mergeTextItems([]byte(tc.in))
		if !ok || string(got) != tc.want {
			t.Errorf("merge %s\n got %s (%v)\nwant %s", tc.in, got, ok, tc.want)
		}
	}
	for _, in := range []string{`1,2`, `{"type":"reasoning.text","text":1,"index":0},{"type":"reasoning.text","text":"b","index":0}`, `{`} {
		if _, ok := mergeTextItems([]byte(in)); ok {
			t.Errorf("%s merged", in)
		}
	}
}

// TestProfileTable: every profile's token parameter is one a route takes,
// every marker is one the reader recognises, and auto is the reader's
// former behaviour.
func TestProfileTable(t *testing.T) {
	for _, n := range routes.ProviderNames() {
		p := routes.ProfileOf(n)
		if p.TokenParam != routes.TokenParamMaxTokens && p.TokenParam != routes.TokenParamMaxCompletionTokens {
			t.Errorf("%s: token param %q", n, p.TokenParam)
		}
		if p.Marker != "" && p.Marker != "x_groq" {
			t.Errorf("%s: marker %q is not read by the chunk decoder", n, p.Marker)
		}
	}
	if p := routes.ProfileOf("nope"); !p.Detect || p.SendBack != nil {
		t.Error("an unknown profile is not read as auto")
	}
}

// TestErrorAfterFinish: an error after a finish that cuts or filters the
// answer leaves the step incomplete with that reason (they outrank an
// error); after a complete finish it is still a model error. A refusal's
// text outranks an error too.
func TestErrorAfterFinish(t *testing.T) {
	srv, _ := replay(t, []byte(`data: {"choices":[{"delta":{"refusal":"No."},"finish_reason":null}]}`+"\n\n"+
		`data: {"error":{"message":"late trouble"}}`+"\n\n"))
	var h rec
	_, err := (&Client{BaseURL: srv.URL, Backoff: 1}).Complete(context.Background(), req(), &h)
	if ie := (*IncompleteError)(nil); !errors.As(err, &ie) || ie.Reason != IncompleteRefusal {
		t.Errorf("refusal then error: %v", err)
	}
	for _, tc := range []struct{ finish, wantIncomplete string }{
		{"length", IncompleteLength},
		{"content_filter", IncompleteContentFilter},
		{"stop", ""},
	} {
		stream := `data: {"choices":[{"delta":{"content":"Hi"},"finish_reason":"` + tc.finish + `"}]}` + "\n\n" +
			`data: {"error":{"message":"late trouble"},"usage":{"prompt_tokens":3,"completion_tokens":2}}` + "\n\n" +
			"event: error\ndata: {\"error\":{\"message\":\"more\"}}\n\ndata: [DONE]\n\n"
		srv, _ := replay(t, []byte(stream))
		var h rec
		resp, err := (&Client{BaseURL: srv.URL, Backoff: 1}).Complete(context.Background(), req(), &h)
		var ie *IncompleteError
		var me *Error
		switch {
		case tc.wantIncomplete != "":
			if !errors.As(err, &ie) || ie.Reason != tc.wantIncomplete || resp.Content != "Hi" || resp.Usage.CompletionTokens != 2 {
				t.Errorf("%s then error: %v, %+v", tc.finish, err, resp)
			}
		case !errors.As(err, &me) || !strings.Contains(me.Message, "late trouble") || me.Usage.CompletionTokens != 2:
			t.Errorf("%s then error: %v", tc.finish, err)
		}
	}
}

// FuzzMergeTextItems: any array body merges without a panic, and a merge
// that succeeds is a valid JSON array of no more items.
func FuzzMergeTextItems(f *testing.F) {
	f.Add(`{"type":"reasoning.text","text":"a","signature":"","index":0},{"type":"reasoning.text","text":"b","signature":"s","index":0}`)
	f.Add(`{"type":"reasoning.text","text":"a"},{"type":"reasoning.encrypted","data":"x","index":0}`)
	f.Add(`{"type":"reasoning.text","index":0,"index":0}`)
	f.Fuzz(func(t *testing.T, in string) {
		out, ok := mergeTextItems([]byte(in))
		if !ok {
			return
		}
		var before, after []json.RawMessage
		if json.Unmarshal([]byte("["+in+"]"), &before) != nil || json.Unmarshal(append(append([]byte{'['}, out...), ']'), &after) != nil {
			t.Fatalf("merged %s into invalid %s", in, out)
		}
		if len(after) > len(before) {
			t.Fatalf("%d items from %d", len(after), len(before))
		}
	})
}
