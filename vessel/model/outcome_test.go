package model

import (
	"strings"
	"testing"
)

// TestSanitize: a provider's message shown to the caller keeps its words
// and loses anything that looks like a credential or a control character.
func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"Incorrect API key provided: sk-proj-abc123XYZ*****wxyz. You can find your API key at https://x": "Incorrect API key provided: [redacted]. You can find your API key at https://x",
		"Authorization: Bearer eyJhbGciOi.payload.sig rejected":                                          "Authorization: [redacted] rejected",
		"API key not valid: AIzaSyD-1234567890abcdefgh":                                                  "API key not valid: [redacted]",
		"line one\nline two\x1b[31m":                                                                     "line one line two [31m",
		"the request exceeds the available context size":                                                 "the request exceeds the available context size",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := sanitize(strings.Repeat("word ", 200)); len(got) > 300+len("…") {
		t.Fatalf("%d bytes", len(got))
	}
}

// TestFinishOutcome: each finish reason and answer shape maps to its
// documented outcome.
func TestFinishOutcome(t *testing.T) {
	for _, c := range []struct {
		out  Response
		bad  bool
		want string
	}{
		{Response{FinishReason: "stop"}, false, ""},
		{Response{FinishReason: "tool_calls"}, false, ""},
		{Response{}, false, ""},
		{Response{FinishReason: "LENGTH"}, false, IncompleteLength},
		{Response{FinishReason: "max_tokens"}, true, IncompleteLength},
		{Response{FinishReason: "SAFETY"}, false, IncompleteContentFilter},
		{Response{FinishReason: "stop", Refusal: "no"}, false, IncompleteRefusal},
		{Response{FinishReason: "tool_calls"}, true, IncompleteBadArguments},
		{Response{FinishReason: "error"}, false, "error"},
	} {
		err := finishOutcome(&c.out, c.bad)
		got := ""
		switch e := err.(type) {
		case *IncompleteError:
			got = e.Reason
		case *Error:
			got = "error"
		}
		if got != c.want {
			t.Errorf("%+v bad=%v: %v, want %q", c.out, c.bad, err, c.want)
		}
	}
}
