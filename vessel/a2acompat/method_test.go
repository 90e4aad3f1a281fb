package a2acompat

import (
	"bytes"
	"testing"
)

func TestSnakeFieldsOnly(t *testing.T) {
	if hasSnakeField([]byte(`{"params":{"message":{"parts":[{"data":{"messages":[{"tool_calls":[],"tool_call_id":"x"}]}}]}}}`)) {
		t.Fatal("an OpenAI history key triggered the rewrite")
	}
	if !hasSnakeField([]byte(`{"params":{"message":{"message_id":"m"}}}`)) {
		t.Fatal("message_id did not trigger the rewrite")
	}
}

// FuzzHasSnakeField checks the one-pass scan against a search for each key.
func FuzzHasSnakeField(f *testing.F) {
	for _, s := range []string{`{"params":{"message":{"message_id":"m"}}}`, `"a_b"message_id"`, `"tool_calls" "page_size"`,
		`"x_task_push_notification_config"`, `"task_push_notification_config"`, `_"`, `"_`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want := false
		for k := range snakeFields {
			if bytes.Contains(body, []byte(`"`+k+`"`)) {
				want = true
			}
		}
		if got := hasSnakeField(body); got != want {
			t.Fatalf("%q: %v, want %v", body, got, want)
		}
	})
}

// BenchmarkHasSnakeField checks a request carrying a 1,000-message history.
func BenchmarkHasSnakeField(b *testing.B) {
	var body bytes.Buffer
	body.WriteString(`{"jsonrpc":"2.0","method":"SendStreamingMessage","params":{"message":{"messageId":"m","parts":[{"data":{"version":1,"messages":[`)
	for i := range 1000 {
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":"some text of a tool result"}`)
	}
	body.WriteString(`]}}]}}}`)
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		if hasSnakeField(body.Bytes()) {
			b.Fatal("found")
		}
	}
}
