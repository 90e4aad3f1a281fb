package a2aserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/scripted"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// onRoute puts the field guide on route "azure" (token limit under
// max_completion_tokens) with request settings and a structured answer.
func onRoute(d *settings.Deployment) {
	a := &d.Agents[0]
	a.ModelRoute = "azure"
	a.TokenParam = routes.TokenParamMaxCompletionTokens
	m := *a.Manifest
	temp := 0.3
	m.Model.RequestSettings = settings.RequestSettings{MaxOutputTokens: 500, Temperature: &temp,
		ExtraBody: map[string]any{"thinking": map[string]any{"type": "disabled"}},
		ResponseFormat: &settings.ResponseFormat{Type: "json_schema", Name: "count", Strict: true, Schema: map[string]any{
			"type": "object", "required": []any{"count"}, "properties": map[string]any{"count": map[string]any{"type": "integer"}}}}}
	a.Manifest = &m
}

func answerScript(t *testing.T, text string) *scripted.Script {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"rules": []any{}, "default": map[string]any{"name": "a", "steps": []any{map[string]any{"text": text}}}})
	sc, err := scripted.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestStructuredAnswerOnRoute: the agent's requests name its route and
// carry its settings (the token limit under the route's parameter name); an
// answer matching the response_format schema comes back as text and as a
// data part, one that does not fails the task with schema_mismatch.
func TestStructuredAnswerOnRoute(t *testing.T) {
	h := newHarness(t, onRoute)
	h.model.SetScript(answerScript(t, `{"count": 3}`))
	res, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("how many?")})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %v", task.Status.State)
	}
	var data any
	for _, art := range task.Artifacts {
		if art.Name != a2aserver.ArtifactAnswer {
			continue
		}
		for _, p := range art.Parts {
			if d, ok := p.Content.(a2a.Data); ok && p.MediaType == a2aserver.MediaJSON {
				data = d.Value
			}
		}
	}
	if m, ok := data.(map[string]any); !ok || m["count"] != 3.0 {
		t.Fatalf("data part %#v in %+v", data, task.Artifacts)
	}
	hdr := h.modelHeaders.Load().(interface{ Get(string) string })
	if hdr.Get(routes.RouteHeader) != "azure" {
		t.Errorf("route header %q", hdr.Get(routes.RouteHeader))
	}
	var body map[string]any
	if err := json.Unmarshal(h.modelBody.Load().([]byte), &body); err != nil {
		t.Fatal(err)
	}
	rf, _ := body["response_format"].(map[string]any)
	if body["max_completion_tokens"] != 500.0 || body["max_tokens"] != nil || body["temperature"] != 0.3 ||
		body["thinking"] == nil || rf["type"] != "json_schema" {
		t.Errorf("request body %v", body)
	}

	h.model.SetScript(answerScript(t, `{"count": "three"}`))
	res, err = h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("how many now?")})
	if err != nil {
		t.Fatal(err)
	}
	task = res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("mismatching answer: state %v", task.Status.State)
	}
	b, _ := json.Marshal(task.Status.Message)
	if !json.Valid(b) || !strings.Contains(string(b), "schema_mismatch") {
		t.Errorf("status message %s", b)
	}
}

// TestRouteProviderTokenParam: an agent whose route's provider profile
// gives the token parameter (fromspec resolves it; TestTranslateRoutes)
// sends the token limit under it.
func TestRouteProviderTokenParam(t *testing.T) {
	h := newHarness(t, func(d *settings.Deployment) {
		onRoute(d)
		d.Agents[0].TokenParam = routes.ProfileOf("openai").TokenParam
	})
	h.model.SetScript(answerScript(t, `{"count": 3}`))
	if _, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("how many?")}); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(h.modelBody.Load().([]byte), &body); err != nil {
		t.Fatal(err)
	}
	if body["max_completion_tokens"] != 500.0 || body["max_tokens"] != nil {
		t.Errorf("request body %v", body)
	}
}
