package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// TestRequestCarriesSettings: a real loopback server receives the agent's
// settings in the body (the token limit under the route's parameter name,
// extra_body beside them), the vessel's own fields unchanged, and the
// route in its header.
func TestRequestCarriesSettings(t *testing.T) {
	temp, topP, seed := 0.2, 0.9, int64(7)
	rs := settings.RequestSettings{MaxOutputTokens: 900, Temperature: &temp, TopP: &topP, Stop: []string{"END"}, Seed: &seed,
		ReasoningEffort: "low", ExtraBody: map[string]any{"thinking": map[string]any{"type": "disabled"}, "provider": map[string]any{"order": []any{"a"}}},
		ResponseFormat: &settings.ResponseFormat{Type: "json_schema", Name: "birds", Strict: true,
			Schema: map[string]any{"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}}}}}
	for _, param := range []string{routes.TokenParamMaxTokens, routes.TokenParamMaxCompletionTokens} {
		t.Run(param, func(t *testing.T) {
			var body map[string]any
			var route string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(b, &body); err != nil {
					t.Errorf("body is not JSON: %v: %s", err, b)
				}
				route = r.Header.Get(routes.RouteHeader)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			}))
			defer srv.Close()
			s, err := NewSettings(rs, param)
			if err != nil {
				t.Fatal(err)
			}
			c := &Client{BaseURL: srv.URL + "/v1", Route: "azure"}
			msgs := []transcript.Message{{Role: "user", Content: json.RawMessage(`"hi"`)}}
			if _, err := c.Complete(context.Background(), &Request{Model: "m", Messages: msgs, Settings: s}, nopHandler{}); err != nil {
				t.Fatal(err)
			}
			other := routes.TokenParamMaxCompletionTokens
			if param == other {
				other = routes.TokenParamMaxTokens
			}
			if body[param] != 900.0 || body[other] != nil {
				t.Errorf("token limit: %v=%v %v=%v", param, body[param], other, body[other])
			}
			rf, _ := json.Marshal(body["response_format"])
			if body["temperature"] != 0.2 || body["top_p"] != 0.9 || body["seed"] != 7.0 || body["reasoning_effort"] != "low" ||
				len(body["stop"].([]any)) != 1 || body["thinking"].(map[string]any)["type"] != "disabled" || body["provider"] == nil ||
				!strings.Contains(string(rf), `"json_schema":{"name":"birds","schema":{"properties":{"count":{"type":"integer"}},"type":"object"},"strict":true}`) {
				t.Errorf("settings in body: %v", body)
			}
			if body["model"] != "m" || body["stream"] != true || len(body["messages"].([]any)) != 1 || body["stream_options"] == nil {
				t.Errorf("the vessel's own fields: %v", body)
			}
			if route != "azure" {
				t.Errorf("route header %q", route)
			}
		})
	}
	// Without settings the body is exactly the vessel's fields.
	got, err := encodeRequest(&Request{Model: "m", Messages: []transcript.Message{{Role: "user", Content: json.RawMessage(`"hi"`)}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`; string(got.bytes()) != want {
		t.Errorf("plain body %s", got.bytes())
	}
	if _, err := NewSettings(settings.RequestSettings{ExtraBody: map[string]any{"messages": 1}}, ""); err == nil {
		t.Error("extra_body messages accepted")
	}
}
