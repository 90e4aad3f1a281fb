package a2acompat_test

// End-to-end through the vessel's own server (vessel/a2aserver) with the identity
// packages wired the way cmd/vessel/wiring.go wires them: a token caller
// verified against a JWKS on loopback, scope narrowing, a structured skill
// call answered in the strict 1.0 shape with primitives, a service tool
// received by a loopback app, and image checks.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/gif"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/auth/jwt"
	"github.com/astraldeep/astralvessel-go/vessel/images"
	"github.com/astraldeep/astralvessel-go/vessel/primitives"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/scripted"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/tools/service"
)

const e2eFP = "sha256:e2e"

const e2eScript = `{
  "rules": [
    {"name": "skill", "steps": [
      {"tool_calls": [{"id": "c1", "name": "present", "arguments": {"components": [{"type": "metric", "title": "Humidity", "value": "62%"}]}}]},
      {"tool_calls": [{"id": "c2", "name": "lookup", "arguments": {"id": "42"}}]},
      {"text": "Record: {{tool_result}}"}
    ]},
    {"name": "badpresent", "steps": [
      {"tool_calls": [{"id": "b1", "name": "present", "arguments": {"components": [{"type": "text"}]}}]},
      {"text": "Told: {{tool_result}}"}
    ]},
    {"name": "withbash", "match": {"contains": "#tools", "tool": "bash"}, "steps": [{"text": "bash offered"}]},
    {"name": "nobash", "match": {"contains": "#tools"}, "steps": [{"text": "bash not offered"}]}
  ]
}`

type e2e struct {
	url     string
	appKey  string
	signKey *ecdsa.PrivateKey
	seenMu  sync.Mutex
	seen    []http.Header
}

func (e *e2e) token(t *testing.T, scope string) string {
	t.Helper()
	claims := map[string]any{"iss": "https://iam.example.test/realms/Astral", "sub": "user-42", "aud": []string{"account", "astral-agent-service"},
		"azp": "astral-frontend", "exp": time.Now().Add(5 * time.Minute).Unix(), "scope": scope}
	payload, _ := json.Marshal(claims)
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, "k1")
	tok, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), e.signKey, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(tok)
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	e := &e2e{appKey: "app-key-1"}
	var err error
	if e.signKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	pub, _ := jwk.Import(e.signKey.Public())
	_ = pub.Set(jwk.KeyIDKey, "k1")
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	jwksDoc, _ := json.Marshal(set)
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(jwksDoc) }))
	t.Cleanup(idp.Close)

	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.seenMu.Lock()
		e.seen = append(e.seen, r.Header.Clone())
		e.seenMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"name": "Ada"}`)
	}))
	t.Cleanup(app.Close)

	sc, err := scripted.Parse([]byte(e2eScript))
	if err != nil {
		t.Fatal(err)
	}
	model := httptest.NewServer(scripted.NewServer(sc))
	t.Cleanup(model.Close)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompt.md"), []byte("You look records up."), 0o644); err != nil {
		t.Fatal(err)
	}
	agentID := "records-agent"
	sum := sha256.Sum256([]byte(e.appKey))
	d := &settings.Deployment{
		Path:   filepath.Join(dir, "deployment.toml"),
		Vessel: settings.Vessel{Port: 8700, PublicURL: "http://vessel:8700", TaskTTLHours: 24},
		Apps:   []settings.App{{ID: "app1", KeySHA256: hex.EncodeToString(sum[:]), Agents: []string{agentID}}},
		Issuers: []settings.Issuer{{ID: "astral", Issuer: "https://iam.example.test/realms/Astral", Audience: "astral-agent-service",
			JWKSURL: idp.URL + "/certs", AuthorizedParties: []string{"astral-frontend"}, Agents: []string{agentID}}},
		Agents: []settings.Agent{{
			ID: agentID, PackageDir: dir, PromptFiles: []string{"prompt.md"},
			Services: map[string]settings.Service{"records": {URL: app.URL, Headers: map[string]string{"X-Internal-Token": "s3cret"}}},
			Manifest: &settings.Manifest{
				Name: "Records", Description: "Looks records up.", Version: "0.1.0",
				Model:  settings.Model{Name: "scripted", BaseURL: model.URL + "/v1", APIKey: "k", MaxSteps: 5, AcceptsImages: true},
				Tools:  settings.Builtins{Enabled: []string{"bash", "present"}},
				Output: settings.Output{Primitives: true},
				Declared: []settings.Tool{{Name: "lookup", Description: "Look a record up.", Service: "records", Path: "/agent-tools/lookup",
					Scope: "tools:read", Parameters: map[string]any{"type": "object"}}},
			},
		}},
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	// A confined sandbox (statusSandbox, security_e2e_test.go); no tool of
	// these tests runs in it.
	fake := &statusSandbox{}
	fake.set(true, agentID, e2eFP)
	sandboxv1.RegisterRunServiceServer(gs, fake)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	token := tokens.DeriveToken("master", "sandbox/"+agentID)
	sb, err := tools.DialSandbox("http://"+ln.Addr().String(), token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })

	backend, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "tasks.sqlite"), store.Options{Agents: []string{agentID}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })

	// The wiring of cmd/vessel/wiring.go, with loopback clients.
	keys, err := auth.NewAppKeys(d.Apps)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jwt.New(jwt.Config{Issuers: d.Issuers, HTTPClient: idp.Client()})
	if err != nil {
		t.Fatal(err)
	}
	narrow := func(r *http.Request, p *auth.Principal, list []tools.Tool) ([]tools.Tool, error) {
		allowed, err := scopes.ForCall(r.Header, p.Kind == auth.KindToken, p.Scopes)
		if err != nil {
			return nil, err
		}
		return scopes.Narrow(list, func(t tools.Tool) string { return t.Def().Function.Name }, func(t tools.Tool) string { return t.Scope() }, allowed), nil
	}
	srv, err := a2aserver.New(a2aserver.Config{
		Deployment:   d,
		Fingerprint:  func(*settings.Deployment, string) (string, error) { return e2eFP, nil },
		Sandboxes:    map[string]a2aserver.AgentSandbox{agentID: sb},
		SandboxTools: func(a *settings.Agent) []tools.Tool { return tools.SandboxTools(sb, a) },
		ToolFactories: []tools.Factory{
			service.Factory(&service.Client{HTTP: app.Client()}),
			primitives.Factory(primitives.NewTool(primitives.Limits{})),
		},
		Auth:          auth.Chain{keys, jwt.Authenticator{V: v}},
		Store:         backend,
		Logger:        zap.NewNop(),
		MaxBody:       a2aserver.MaxBodyBytes,
		ReadyInterval: time.Hour,
		CheckImage:    images.Check,
		AnswerParts:   primitives.AnswerParts,
		NarrowTools:   narrow,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(context.Background())
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	e.url = hs.URL + "/agents/" + agentID
	deadline := time.Now().Add(10 * time.Second)
	for ok, _ := srv.Ready(agentID); !ok; ok, _ = srv.Ready(agentID) {
		if time.Now().After(deadline) {
			_, why := srv.Ready(agentID)
			t.Fatalf("agent never ready: %s", why)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return e
}

func (e *e2e) post(t *testing.T, hdr map[string]string, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func sendText(id, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"SendMessage","params":{"message":{"messageId":"m-%s","role":"ROLE_USER","parts":[{"text":%q}]}}}`, id, id, text)
}

func answerText(t *testing.T, b []byte) string {
	t.Helper()
	var r rpcReply
	strictDecode(t, b, &r)
	if r.Result == nil || r.Result.Task == nil {
		t.Fatalf("no task: %s", b)
	}
	for _, a := range r.Result.Task.Artifacts {
		if a.Name == "answer" && len(a.Parts) > 0 && a.Parts[0].Text != nil {
			return *a.Parts[0].Text
		}
	}
	t.Fatalf("no answer: %s", b)
	return ""
}

func TestVesselSkillCallWithTokenPrimitivesAndService(t *testing.T) {
	e := newE2E(t)
	body := `{"jsonrpc":"2.0","id":"a2a_present_1","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER",
		"parts":[{"data":{"method":"tools/call","name":"records-agent","arguments":{"question":"record 42 #script:skill"}}}]}}}`
	code, b := e.post(t, map[string]string{"Authorization": "Bearer " + e.token(t, "openid tools:read")}, body)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", code, b)
	}
	var r rpcReply
	strictDecode(t, b, &r)
	if r.Error != nil || r.Result == nil || r.Result.Task == nil || r.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("reply = %s", b)
	}
	var answer *v1Artifact
	for i, a := range r.Result.Task.Artifacts {
		if a.Name == "answer" {
			answer = &r.Result.Task.Artifacts[i]
		}
	}
	if answer == nil || len(answer.Parts) != 2 || answer.Parts[0].Text == nil || *answer.Parts[0].Text != `Record: {"name":"Ada"}` {
		t.Fatalf("answer = %s", b)
	}
	if answer.Parts[0].MediaType != "text/markdown" || answer.Parts[1].MediaType != "application/vnd.astral.primitives+json" {
		t.Fatalf("answer part media types %q, %q", answer.Parts[0].MediaType, answer.Parts[1].MediaType)
	}
	data, _ := answer.Parts[1].Data.(map[string]any)
	comps, _ := data["_ui_components"].([]any)
	if len(comps) != 1 || comps[0].(map[string]any)["variant"] != "default" || answer.Parts[1].Metadata["type"] != "ui_components" {
		t.Fatalf("primitives part = %+v", answer.Parts[1])
	}
	if _, ok := data["_data"]; !ok {
		t.Fatalf("no _data in %v", data)
	}
	e.seenMu.Lock()
	defer e.seenMu.Unlock()
	if len(e.seen) != 1 {
		t.Fatalf("service called %d times", len(e.seen))
	}
	h := e.seen[0]
	if h.Get("X-Vessel-Owner") != "astral|user-42" || h.Get("X-Vessel-Agent") != "records-agent" || h.Get("X-Vessel-Tool") != "lookup" ||
		h.Get("X-Internal-Token") != "s3cret" || h.Get("Authorization") != "" || h.Get("X-Vessel-User") != "" {
		t.Fatalf("service headers = %v", h)
	}
}

func TestVesselScopeNarrowing(t *testing.T) {
	e := newE2E(t)
	app := map[string]string{"Authorization": "Bearer " + e.appKey, "X-Vessel-User": "alice"}
	cases := []struct {
		name string
		hdr  map[string]string
		want string
	}{
		{"app, no header", app, "bash offered"},
		{"app, read only", map[string]string{"Authorization": app["Authorization"], "X-Vessel-User": "alice", "X-Vessel-Scopes": "tools:read"}, "bash not offered"},
		{"app, execute", map[string]string{"Authorization": app["Authorization"], "X-Vessel-User": "alice", "X-Vessel-Scopes": "tools:read,tools:execute"}, "bash offered"},
		{"token read", map[string]string{"Authorization": "Bearer " + e.token(t, "tools:read")}, "bash not offered"},
		{"token execute", map[string]string{"Authorization": "Bearer " + e.token(t, "tools:read tools:execute")}, "bash offered"},
		{"token execute, header narrows", map[string]string{"Authorization": "Bearer " + e.token(t, "tools:execute"), "X-Vessel-Scopes": "tools:read"}, "bash not offered"},
	}
	for i, c := range cases {
		code, b := e.post(t, c.hdr, sendText(fmt.Sprint("s", i), "which tools? #tools"))
		if code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", c.name, code, b)
		}
		if got := answerText(t, b); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	code, b := e.post(t, map[string]string{"Authorization": app["Authorization"], "X-Vessel-User": "alice", "X-Vessel-Scopes": "tools:root"}, sendText("bad", "x #tools"))
	if code != http.StatusForbidden || !strings.Contains(string(b), "unknown scope") {
		t.Fatalf("bad header: %d %s", code, b)
	}
	// A refused token (wrong azp is not tested here; an unsigned one is).
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://iam.example.test/realms/Astral","sub":"x"}`)) + "."
	if code, b := e.post(t, map[string]string{"Authorization": "Bearer " + none}, sendText("none", "x")); code != http.StatusUnauthorized || !strings.Contains(string(b), `"missing or invalid credentials"`) {
		// The reason (alg none) is for the vessel's log, not the caller.
		t.Fatalf("alg none: %d %s", code, b)
	}
}

func TestVesselPresentErrorReachesModel(t *testing.T) {
	e := newE2E(t)
	code, b := e.post(t, map[string]string{"Authorization": "Bearer " + e.appKey, "X-Vessel-User": "alice"}, sendText("p1", "#script:badpresent"))
	if code != http.StatusOK {
		t.Fatalf("HTTP %d %s", code, b)
	}
	if got := answerText(t, b); !strings.Contains(got, `components[0]: text requires \"content\"`) && !strings.Contains(got, `components[0]: text requires "content"`) {
		t.Fatalf("answer = %q", got)
	}
}

func TestVesselImageChecks(t *testing.T) {
	e := newE2E(t)
	var g bytes.Buffer
	_ = gif.Encode(&g, image.NewRGBA(image.Rect(0, 0, 2, 2)), nil)
	raw := base64.StdEncoding.EncodeToString(g.Bytes())
	body := `{"jsonrpc":"2.0","id":"i1","method":"SendMessage","params":{"message":{"messageId":"mi1","role":"ROLE_USER",
		"parts":[{"text":"what is this?"},{"raw":"` + raw + `","mediaType":"image/png"}]}}}`
	code, b := e.post(t, map[string]string{"Authorization": "Bearer " + e.appKey, "X-Vessel-User": "alice"}, body)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d %s", code, b)
	}
	var r rpcReply
	strictDecode(t, b, &r)
	st := r.Result.Task.Status
	if st.State != "TASK_STATE_REJECTED" || st.Message == nil || len(st.Message.Parts) == 0 || st.Message.Parts[0].Text == nil ||
		!strings.Contains(*st.Message.Parts[0].Text, "declared as image/png but the bytes are GIF") {
		t.Fatalf("reply = %s", b)
	}
}

// TestVesselServesV03 checks 0.3 callers through the vessel: message/send
// at the agent URL and at <agent URL>/a2a; it fails when vessel/a2aserver does not
// build its JSON-RPC handler with a2acompat.NewHandler or route /a2a.
func TestVesselServesV03(t *testing.T) {
	e := newE2E(t)
	body := `{"jsonrpc":"2.0","id":"v3","method":"message/send","params":{"message":{"kind":"message","messageId":"m-v3","role":"user",
		"parts":[{"kind":"data","data":{"method":"tools/call","name":"records-agent","arguments":{"question":"old caller #tools"}}}]}}}`
	hdr := map[string]string{"Authorization": "Bearer " + e.token(t, "tools:read"), "A2A-Version": "0.3"}
	code, b := e.post(t, hdr, body)
	if code == http.StatusOK && strings.Contains(string(b), "-32601") {
		t.Fatal("vessel/a2aserver does not use a2acompat.NewHandler (message/send is -32601)")
	}
	for _, url := range []string{e.url, e.url + "/a2a"} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound && strings.HasSuffix(url, "/a2a") {
			t.Fatal("vessel/a2aserver does not route <agent>/a2a")
		}
		var r struct {
			Result struct {
				Kind   string `json:"kind"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &r); err != nil || resp.StatusCode != 200 || r.Result.Kind != "task" || r.Result.Status.State != "completed" ||
			!strings.Contains(string(b), "bash not offered") {
			t.Fatalf("%s: HTTP %d %s", url, resp.StatusCode, b)
		}
	}
	// The 1.0 card's skill carries the strongest scope of the agent's tools
	// (bash: tools:execute).
	cresp, err := http.Get(e.url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := io.ReadAll(cresp.Body)
	cresp.Body.Close()
	if !strings.Contains(string(cb), `"scope:tools:execute"`) {
		t.Fatalf("card = %s", cb)
	}
	// Older builds read the card at <agent URL>/a2a/.well-known/agent-card.json.
	resp, err := http.Get(e.url + "/a2a/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil || resp.StatusCode != 200 {
		t.Fatalf("0.3 card: HTTP %d %v", resp.StatusCode, err)
	}
	if card["url"] != "http://vessel:8700/agents/records-agent" || card["protocolVersion"] != "0.3" {
		t.Fatalf("0.3 card = %v", card)
	}
}

// TestVesselTranscriptRoundTrip: the transcript of a turn that used
// present and a service tool (streamed, as the transcript goes out on the
// live stream only) is accepted as the next turn's history.
func TestVesselTranscriptRoundTrip(t *testing.T) {
	e := newE2E(t)
	const tmt = "application/vnd.astralvessel.transcript+json"
	cl, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(e.url, a2a.TransportProtocolJSONRPC)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{
		"Authorization": {"Bearer " + e.appKey}, "X-Vessel-User": {"alice"}})
	req := &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("record 42 #script:skill")),
		Config:  &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/markdown", tmt}},
	}
	var messages []json.RawMessage
	for ev, err := range cl.SendStreamingMessage(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		au, ok := ev.(*a2a.TaskArtifactUpdateEvent)
		if !ok || (au.Artifact.Name != "transcript" && !au.Append) {
			continue
		}
		for _, p := range au.Artifact.Parts {
			if p.MediaType != "" && p.MediaType != tmt {
				continue
			}
			raw, ok := p.Content.(a2a.Raw)
			if !ok {
				continue
			}
			var env struct {
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatal(err)
			}
			messages = append(messages, env.Messages...)
		}
	}
	if len(messages) < 5 {
		t.Fatalf("transcript has %d messages", len(messages))
	}
	var all []string
	for _, m := range messages {
		all = append(all, string(m))
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{`"name":"present"`, `"name":"lookup"`, `Attached 1 component(s) (metric)`, `{\"name\":\"Ada\"}`} {
		if !strings.Contains(joined, want) {
			t.Errorf("transcript lacks %s:\n%s", want, joined)
		}
	}
	env, _ := json.Marshal(map[string]any{"version": 1, "messages": messages})
	next := `{"jsonrpc":"2.0","id":"t2","method":"SendMessage","params":{"message":{"messageId":"mt2","role":"ROLE_USER",
		"parts":[{"text":"and again? #tools"},{"raw":"` + base64.StdEncoding.EncodeToString(env) + `","mediaType":"` + tmt + `"}]}}}`
	code, b := e.post(t, map[string]string{"Authorization": "Bearer " + e.appKey, "X-Vessel-User": "alice"}, next)
	if code != http.StatusOK {
		t.Fatalf("HTTP %d %s", code, b)
	}
	if got := answerText(t, b); got != "bash offered" {
		t.Fatalf("next turn with history: %q (%s)", got, b)
	}
}

// TestVesselScopeNarrowingREST: over HTTP+JSON the same app keys and
// tokens authenticate, and the same scopes narrow the tools, as on
// JSON-RPC (TestVesselScopeNarrowing).
func TestVesselScopeNarrowingREST(t *testing.T) {
	e := newE2E(t)
	post := func(hdr map[string]string, text string) (int, []byte) {
		body := fmt.Sprintf(`{"message":{"messageId":"m-%d","role":"ROLE_USER","parts":[{"text":%q}]}}`, time.Now().UnixNano(), text)
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/message:send", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	app := map[string]string{"Authorization": "Bearer " + e.appKey, "X-Vessel-User": "alice"}
	cases := []struct {
		name string
		hdr  map[string]string
		want string
	}{
		{"app, no header", app, "bash offered"},
		{"app, read only", map[string]string{"Authorization": app["Authorization"], "X-Vessel-User": "alice", "X-Vessel-Scopes": "tools:read"}, "bash not offered"},
		{"token read", map[string]string{"Authorization": "Bearer " + e.token(t, "tools:read")}, "bash not offered"},
		{"token execute", map[string]string{"Authorization": "Bearer " + e.token(t, "tools:read tools:execute")}, "bash offered"},
	}
	for _, c := range cases {
		code, b := post(c.hdr, "which tools? #tools")
		if code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", c.name, code, b)
		}
		// The REST answer is {"task": ...}: the JSON-RPC result's shape.
		if got := answerText(t, []byte(`{"jsonrpc":"2.0","id":1,"result":`+strings.TrimSpace(string(b))+`}`)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	code, b := post(map[string]string{"Authorization": app["Authorization"], "X-Vessel-User": "alice", "X-Vessel-Scopes": "tools:root"}, "x #tools")
	if code != http.StatusForbidden || !strings.Contains(string(b), "unknown scope") || !strings.Contains(string(b), `"PERMISSION_DENIED"`) {
		t.Fatalf("bad header: %d %s", code, b)
	}
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"https://iam.example.test/realms/Astral","sub":"x"}`)) + "."
	if code, b := post(map[string]string{"Authorization": "Bearer " + none}, "x"); code != http.StatusUnauthorized || !strings.Contains(string(b), `"UNAUTHENTICATED"`) {
		t.Fatalf("alg none: %d %s", code, b)
	}
}
