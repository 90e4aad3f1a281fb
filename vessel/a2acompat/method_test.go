package a2acompat

import "testing"

func TestMethodOf(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"message/send","params":{}}`:               "message/send",
		`{"params":{"message":{"parts":[{"text":"}"}]}},"id":1,"method":"X"}`: "X",
		`{"METHOD":"tasks/get"}`: "tasks/get",
		`{"jsonrpc":"2.0",`:      "",
		`[]`:                     "",
		`{"method":5}`:           "",
	} {
		if got := methodOf([]byte(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestSnakeFieldsOnly(t *testing.T) {
	if hasSnakeField([]byte(`{"params":{"message":{"parts":[{"data":{"messages":[{"tool_calls":[],"tool_call_id":"x"}]}}]}}}`)) {
		t.Fatal("an OpenAI history key triggered the rewrite")
	}
	if !hasSnakeField([]byte(`{"params":{"message":{"message_id":"m"}}}`)) {
		t.Fatal("message_id did not trigger the rewrite")
	}
}
