package transcript

import (
	"strings"
	"testing"
)

// TestExtraRoundTrip: provider fields on a message and a tool call survive
// Parse (the scanner's path and encoding/json's) and Marshal unchanged.
func TestExtraRoundTrip(t *testing.T) {
	const assistant = `{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"s=="}}}],"reasoning_content":"r"}`
	for _, doc := range []string{
		`{"version":1,"messages":[{"role":"user","content":"q"},` + assistant + `,{"role":"tool","tool_call_id":"c","content":"ok"}]}`,
		// An escaped key sends the document to encoding/json.
		`{"version":1,"messages":[{"role":"user","content":"q","n\u0061me":"x"},` + assistant + `,{"role":"tool","tool_call_id":"c","content":"ok"}]}`,
	} {
		env, err := Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		a := env.Messages[1]
		if string(a.Extra) != `{"reasoning_content":"r"}` || string(a.ToolCalls[0].Extra) != `{"extra_content":{"google":{"thought_signature":"s=="}}}` {
			t.Fatalf("%s: extras %s %s", doc, a.Extra, a.ToolCalls[0].Extra)
		}
		b, err := Marshal(env.Messages)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"arguments":"{}"},"extra_content":{"google":{"thought_signature":"s=="}}}],"reasoning_content":"r"}`) {
			t.Fatalf("marshalled %s", b)
		}
	}
}

// TestExtraBounded: a history cannot carry unbounded provider fields.
func TestExtraBounded(t *testing.T) {
	big := `{"role":"assistant","content":"a","reasoning_content":"` + strings.Repeat("x", MaxExtraBytes) + `"}`
	if _, err := Parse([]byte(`{"version":1,"messages":[{"role":"user","content":"q"},` + big + `]}`)); err == nil || !strings.Contains(err.Error(), "provider fields") {
		t.Fatalf("err %v", err)
	}
}

// TestExtraOnlyOnAssistantMessages: an application's own keys on user and
// tool messages are not sent on to the model.
func TestExtraOnlyOnAssistantMessages(t *testing.T) {
	env, err := Parse([]byte(`{"version":1,"messages":[{"role":"user","content":"q","created_at":1},{"role":"assistant","content":"a","reasoning":"r"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if env.Messages[0].Extra != nil || string(env.Messages[1].Extra) != `{"reasoning":"r"}` {
		t.Fatalf("%s / %s", env.Messages[0].Extra, env.Messages[1].Extra)
	}
}
