package a2acompat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
	"github.com/astraldeep/astralvessel-go/vessel/primitives"
)

// --- strict A2A 1.0 reply shapes: every field the protocol defines, and no
// others; decoding with DisallowUnknownFields fails on anything extra (such
// as a 0.3 "kind"), as AstralDeep's protobuf reader does.

type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *sendResult     `json:"result"`
	Error   *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

type sendResult struct {
	Task    *v1Task    `json:"task"`
	Message *v1Message `json:"message"`
}

type v1Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    v1Status       `json:"status"`
	Artifacts []v1Artifact   `json:"artifacts"`
	History   []v1Message    `json:"history"`
	Metadata  map[string]any `json:"metadata"`
}

type v1Status struct {
	State     string     `json:"state"`
	Message   *v1Message `json:"message"`
	Timestamp string     `json:"timestamp"`
}

type v1Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parts       []v1Part       `json:"parts"`
	Metadata    map[string]any `json:"metadata"`
	Extensions  []string       `json:"extensions"`
}

type v1Part struct {
	Text      *string        `json:"text"`
	Raw       *string        `json:"raw"`
	URL       *string        `json:"url"`
	Data      any            `json:"data"`
	Filename  string         `json:"filename"`
	MediaType string         `json:"mediaType"`
	Metadata  map[string]any `json:"metadata"`
}

type v1Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId"`
	TaskID           string         `json:"taskId"`
	Role             string         `json:"role"`
	Parts            []v1Part       `json:"parts"`
	Metadata         map[string]any `json:"metadata"`
	Extensions       []string       `json:"extensions"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds"`
}

func strictDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, b)
	}
}

// --- a small agent: answers the question of a text part or of a
// structured skill call, attaching one component.

type echo struct{}

func question(m *a2a.Message) string {
	for _, p := range m.Parts {
		if s, ok := p.Content.(a2a.Text); ok {
			return string(s)
		}
	}
	for _, p := range m.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			if v, ok := d.Value.(map[string]any); ok && v["method"] == "tools/call" {
				args, _ := v["arguments"].(map[string]any)
				q, _ := args["question"].(string)
				return q
			}
		}
	}
	return ""
}

func (echo) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if ec.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
		}
		comps, err := primitives.Parse([]byte(`{"components":[{"type":"metric","title":"Humidity","value":"62%"}]}`), primitives.Limits{})
		if err != nil {
			yield(nil, err)
			return
		}
		ev := a2a.NewArtifactEvent(ec, primitives.AnswerParts("answer to: "+question(ec.Message), comps)...)
		ev.Artifact.Name = "answer"
		ev.LastChunk = true
		if !yield(ev, nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (echo) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// versionCheck refuses A2A versions other than 1.0, as the vessel does.
type versionCheck struct {
	a2asrv.PassthroughCallInterceptor
}

func (versionCheck) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	if vs, ok := cc.ServiceParams().Get("A2A-Version"); ok {
		for _, v := range vs {
			if v != "" && v != "1.0" {
				return ctx, nil, a2a.NewError(a2a.ErrVersionNotSupported, "A2A version "+v+" is not supported")
			}
		}
	}
	return ctx, nil, nil
}

func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	rh := a2asrv.NewHandler(echo{}, a2asrv.WithCallInterceptors(versionCheck{}))
	h := a2acompat.NewHandler(rh)
	mux := http.NewServeMux()
	mux.Handle("POST /agents/field-guide", h)
	mux.Handle("POST /agents/field-guide/a2a", h) // older builds post to {base}/a2a
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, version, body string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	return b
}

// checkAnswer verifies a strict 1.0 reply: a completed task whose answer
// artifact has the text, then the _ui_components data part.
func checkAnswer(t *testing.T, b []byte, id, wantText string) {
	t.Helper()
	var r rpcReply
	strictDecode(t, b, &r)
	if r.JSONRPC != "2.0" || string(r.ID) != `"`+id+`"` || r.Error != nil || r.Result == nil || r.Result.Task == nil || r.Result.Message != nil {
		t.Fatalf("reply = %s", b)
	}
	task := r.Result.Task
	if task.Status.State != "TASK_STATE_COMPLETED" || len(task.Artifacts) != 1 {
		t.Fatalf("task = %s", b)
	}
	a := task.Artifacts[0]
	if a.ArtifactID == "" || a.Name != "answer" || len(a.Parts) != 2 {
		t.Fatalf("artifact = %+v", a)
	}
	if a.Parts[0].Text == nil || *a.Parts[0].Text != wantText || a.Parts[0].MediaType != "text/markdown" {
		t.Fatalf("text part = %+v", a.Parts[0])
	}
	data, ok := a.Parts[1].Data.(map[string]any)
	if !ok || a.Parts[1].MediaType != primitives.MediaType || a.Parts[1].Metadata["type"] != "ui_components" {
		t.Fatalf("data part = %+v", a.Parts[1])
	}
	comps, ok := data["_ui_components"].([]any)
	if !ok || len(comps) != 1 || comps[0].(map[string]any)["type"] != "metric" {
		t.Fatalf("_ui_components = %v", data)
	}
	if v, ok := data["_data"]; !ok || v != nil {
		t.Fatalf("_data = %v", data)
	}
}

func TestSkillCallStrictV1(t *testing.T) {
	srv := newServer(t)
	body := `{"jsonrpc":"2.0","id":"a2a_present_1","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER",
		"parts":[{"data":{"method":"tools/call","name":"field-guide","arguments":{"question":"which birds fish?"},
		"caller_capabilities":{"le_ts":{"lease":"x"}}}}]}}}`
	checkAnswer(t, post(t, srv.URL+"/agents/field-guide", "1.0", body), "a2a_present_1", "answer to: which birds fish?")
}

func TestSnakeCaseV1(t *testing.T) {
	srv := newServer(t)
	body := `{"jsonrpc":"2.0","id":"r2","method":"SendMessage","params":{"message":{"message_id":"m2","context_id":"conv-1","role":"ROLE_USER",
		"parts":[{"text":"hello","media_type":"text/plain"}]},"configuration":{"accepted_output_modes":["text/markdown"],"history_length":0}}}`
	b := post(t, srv.URL+"/agents/field-guide", "1.0", body)
	checkAnswer(t, b, "r2", "answer to: hello")
	var r rpcReply
	strictDecode(t, b, &r)
	if r.Result.Task.ContextID != "conv-1" {
		t.Fatalf("context_id not carried: %s", b)
	}
	if len(r.Result.Task.History) != 1 || r.Result.Task.History[0].MessageID != "m2" || r.Result.Task.History[0].Parts[0].MediaType != "text/plain" {
		t.Fatalf("message_id/media_type not carried: %s", b)
	}
}

func TestV03MessageSend(t *testing.T) {
	srv := newServer(t)
	for _, path := range []string{"/agents/field-guide", "/agents/field-guide/a2a"} {
		body := `{"jsonrpc":"2.0","id":"r3","method":"message/send","params":{"message":{"kind":"message","messageId":"m3","role":"user",
			"parts":[{"kind":"data","data":{"method":"tools/call","name":"field-guide","arguments":{"question":"old caller"}}}]}}}`
		b := post(t, srv.URL+path, "0.3", body)
		var r struct {
			Result struct {
				Kind      string                 `json:"kind"`
				ID        string                 `json:"id"`
				Status    struct{ State string } `json:"status"`
				Artifacts []struct {
					Parts []map[string]any `json:"parts"`
				} `json:"artifacts"`
			} `json:"result"`
			Error any `json:"error"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Error != nil {
			t.Fatalf("%s: %s (%v)", path, b, err)
		}
		if r.Result.Kind != "task" || r.Result.Status.State != "completed" || len(r.Result.Artifacts) != 1 {
			t.Fatalf("%s: 0.3 reply = %s", path, b)
		}
		parts := r.Result.Artifacts[0].Parts
		if len(parts) != 2 || parts[0]["kind"] != "text" || parts[0]["text"] != "answer to: old caller" || parts[1]["kind"] != "data" {
			t.Fatalf("%s: parts = %v", path, parts)
		}
		if _, ok := parts[1]["data"].(map[string]any)["_ui_components"]; !ok {
			t.Fatalf("%s: no _ui_components in %v", path, parts[1])
		}
		// tasks/get on the same task, snake_case and 0.3.
		b = post(t, srv.URL+path, "", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"id":"`+r.Result.ID+`","history_length":1}}`)
		if !strings.Contains(string(b), `"kind":"task"`) || !strings.Contains(string(b), r.Result.ID) {
			t.Fatalf("%s: tasks/get = %s", path, b)
		}
	}
}

func TestV1VersionStillChecked(t *testing.T) {
	srv := newServer(t)
	b := post(t, srv.URL+"/agents/field-guide", "0.3", `{"jsonrpc":"2.0","id":"r5","method":"SendMessage","params":{"message":{"messageId":"m5","role":"ROLE_USER","parts":[{"text":"x"}]}}}`)
	if !strings.Contains(string(b), "-32009") {
		t.Fatalf("a 1.0 method with A2A-Version 0.3 must still be refused: %s", b)
	}
}

func TestMalformedBodyLeftToSDK(t *testing.T) {
	srv := newServer(t)
	b := post(t, srv.URL+"/agents/field-guide", "1.0", `{"jsonrpc":"2.0","message_id": [`)
	if !strings.Contains(string(b), "-32700") {
		t.Fatalf("malformed body: %s", b)
	}
}

func TestCamelCase(t *testing.T) {
	in := `{"jsonrpc":"2.0","params":{"message":{"message_id":"a","messageId":"keep","reference_task_ids":["t"],
		"parts":[{"data":{"snake_key":1,"big":9007199254740993,"nested":{"a_b":[{"c_d":1}]}},"media_type":"x","metadata":{"k_v":1}}]},
		"metadata":{"trace_id":"t"},"_private":1,"weird_Key":2,"x__y":3}}`
	out, err := a2acompat.CamelCase([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	p := v["params"].(map[string]any)
	m := p["message"].(map[string]any)
	if m["messageId"] != "keep" || m["message_id"] != nil || m["referenceTaskIds"] == nil {
		t.Fatalf("message = %v", m)
	}
	part := m["parts"].([]any)[0].(map[string]any)
	data := part["data"].(map[string]any)
	if data["snake_key"] == nil || data["big"].(json.Number) != "9007199254740993" || data["nested"].(map[string]any)["a_b"] == nil {
		t.Fatalf("data rewritten: %v", data)
	}
	if part["mediaType"] != "x" || part["metadata"].(map[string]any)["k_v"] == nil {
		t.Fatalf("part = %v", part)
	}
	if p["metadata"].(map[string]any)["trace_id"] == nil || p["_private"] == nil || p["weird_Key"] == nil || p["x__y"] == nil {
		t.Fatalf("params = %v", p)
	}
	if _, err := a2acompat.CamelCase([]byte(`{"a_b":`)); err == nil {
		t.Fatal("malformed accepted")
	}
}

func TestCardV03(t *testing.T) {
	card := &a2a.AgentCard{Name: "field-guide", Description: "d", Version: "0.1.0",
		SupportedInterfaces: []*a2a.AgentInterface{a2a.NewAgentInterface("http://vessel:8700/agents/field-guide", a2a.TransportProtocolJSONRPC)},
		Skills:              []a2a.AgentSkill{{ID: "field-guide", Name: "n", Description: "d", Tags: []string{"scope:tools:read"}}}}
	b, err := a2acompat.CardV03JSON(context.Background(), card, "http://vessel:8700/agents/field-guide")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	_ = json.Unmarshal(b, &v)
	if v["url"] != "http://vessel:8700/agents/field-guide" || v["protocolVersion"] != "0.3" || v["preferredTransport"] != "JSONRPC" || v["name"] != "field-guide" {
		t.Fatalf("0.3 card = %s", b)
	}
	if len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Fatal("the original card was modified")
	}
	rec := httptest.NewRecorder()
	a2acompat.CardV03Handler(card, "http://vessel:8700/agents/field-guide").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/agents/field-guide/a2a/.well-known/agent-card.json", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"preferredTransport"`) {
		t.Fatalf("card handler: %d %s", rec.Code, rec.Body)
	}
}

func FuzzCamelCase(f *testing.F) {
	f.Add([]byte(`{"message_id":"a","parts":[{"data":{"x_y":1}}]}`))
	f.Add([]byte(`[{"a_b":{"c_d":[1,2,{"e_f":null}]}}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := a2acompat.CamelCase(b)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid output %q", out)
		}
	})
}

func TestV03MessageStream(t *testing.T) {
	srv := newServer(t)
	body := `{"jsonrpc":"2.0","id":"s1","method":"message/stream","params":{"message":{"kind":"message","message_id":"ms1","role":"user",
		"parts":[{"kind":"text","text":"streamed"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/agents/field-guide", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "0.3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	s := string(b)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(s, `"kind":"artifact-update"`) ||
		!strings.Contains(s, "answer to: streamed") || !strings.Contains(s, `"state":"completed"`) {
		t.Fatalf("0.3 stream: %s", s)
	}
}
