package transcript

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	in := `{"version":1,"messages":[
	  {"role":"user","content":"hi"},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"bash","arguments":"{}"}},
	                                                   {"id":"b","type":"function","function":{"name":"read","arguments":"{}"}}]},
	  {"role":"tool","tool_call_id":"a","content":"out"},
	  {"role":"tool","tool_call_id":"b","content":"out"},
	  {"role":"assistant","content":"done"},
	  {"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}]}`
	env, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Messages) != 6 || TextOf(env.Messages[5].Content) != "look" {
		t.Fatalf("%+v", env)
	}
	out, err := Marshal(env.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(out); err != nil {
		t.Fatalf("round trip: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string]string{
		"system":        `{"version":1,"messages":[{"role":"system","content":"x"}]}`,
		"developer":     `{"version":1,"messages":[{"role":"developer","content":"x"}]}`,
		"version":       `{"version":2,"messages":[]}`,
		"no role":       `{"version":1,"messages":[{"content":"x"}]}`,
		"odd role":      `{"version":1,"messages":[{"role":"function","content":"x"}]}`,
		"orphan tool":   `{"version":1,"messages":[{"role":"tool","tool_call_id":"x","content":"r"}]}`,
		"no call id":    `{"version":1,"messages":[{"role":"tool","content":"r"}]}`,
		"empty user":    `{"version":1,"messages":[{"role":"user"}]}`,
		"number":        `{"version":1,"messages":[{"role":"user","content":5}]}`,
		"bad part":      `{"version":1,"messages":[{"role":"user","content":[{"type":"audio"}]}]}`,
		"dup call":      `{"version":1,"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x"}},{"id":"a","function":{"name":"y"}}]}]}`,
		"nameless call": `{"version":1,"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":""}}]}]}`,
		"empty asst":    `{"version":1,"messages":[{"role":"assistant"}]}`,
		"trailing":      `{"version":1,"messages":[]} {}`,
		"syntax":        `{"version":1,`,
		"not utf8":      "{\"version\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}",
	}
	for name, in := range cases {
		_, err := Parse([]byte(in))
		var ve *Error
		if !errors.As(err, &ve) {
			t.Errorf("%s: %v", name, err)
		}
	}
	many := `{"version":1,"messages":[` + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"x"},`, MaxMessages+1), ",") + `]}`
	if _, err := Parse([]byte(many)); err == nil || err.Error() != "the history holds more than 2000 messages; at most 2000 are allowed" {
		t.Fatalf("too many: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":1,"messages":[{"role":"user","content":"hi"}]}`))
	f.Add([]byte(`{"version":1,"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"x","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}]}`))
	f.Add([]byte(`{"version":1,"messages":[{"role":"system","content":"x"}]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"version":1,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, err := Parse(b)
		if err != nil {
			var ve *Error
			if !errors.As(err, &ve) {
				t.Fatalf("error is not a validation error: %v", err)
			}
			return
		}
		// Whatever passes must survive a round trip and never hold a system message.
		out, err := Marshal(env.Messages)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("round trip of accepted input failed: %v", err)
		}
		for _, m := range env.Messages {
			if m.Role == "system" || m.Role == "developer" {
				t.Fatal("system message accepted")
			}
		}
		_ = json.Valid(out)
	})
}
