package a2acompat_test

// Security promises checked through the vessel's own server (vessel/a2aserver)
// with a deployment loaded from real files, a sandbox answering Status over
// gRPC on loopback, the scripted model on loopback and a SQLite task store
// on disk:
//   - an agent is served only while its sandbox reports confinement, its
//     agent id and the fingerprint of the files on disk;
//   - a request body of 16,000,000 bytes is read, one byte more gets 413;
//   - the history a caller sends is never written to the task store or
//     the logs.

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
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/auth/jwt"
	"github.com/astraldeep/astralvessel-go/vessel/internal/fromspec"
	"github.com/astraldeep/astralvessel-go/vessel/scripted"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// statusSandbox answers Status with whatever the test last set.
type statusSandbox struct {
	sandboxv1.UnimplementedRunServiceServer
	mu sync.Mutex
	st *sandboxv1.StatusResponse
}

func (s *statusSandbox) set(confined bool, agent, fp string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st = &sandboxv1.StatusResponse{Confined: confined, LandlockAbi: 7, Fingerprint: fp, Version: "sec", Agent: agent}
}

func (s *statusSandbox) Status(context.Context, *sandboxv1.StatusRequest) (*sandboxv1.StatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, nil
}

func (*statusSandbox) EndTurn(context.Context, *sandboxv1.EndTurnRequest) (*sandboxv1.EndTurnResponse, error) {
	return &sandboxv1.EndTurnResponse{Existed: true}, nil
}

type secVessel struct {
	srv     *a2aserver.Server
	url     string // the agent's A2A endpoint
	base    string
	agent   string
	fp      string // the fingerprint at start
	pkg     string
	dataDir string // holds the SQLite task store
	sandbox *statusSandbox
	appKey  string
	logs    *observer.ObservedLogs // everything the server logs, at debug level
	signKey *ecdsa.PrivateKey      // the "partner" issuer's key, granted only secOther
}

const (
	secAgent = "guide"
	// secOther is granted to the token issuer only; it has no sandbox.
	secOther = "records"
)

// newSecVessel loads a deployment written to disk, as cmd/vessel does, and
// serves it with Reload reading that file again on every readiness check.
func newSecVessel(t *testing.T) *secVessel {
	t.Helper()
	v := &secVessel{agent: secAgent, appKey: "sec-app-key"}
	model := httptest.NewServer(scripted.NewServer(scripted.Default()))
	t.Cleanup(model.Close)

	dir := t.TempDir()
	v.pkg = filepath.Join(dir, "agents", secAgent)
	sum := sha256.Sum256([]byte(v.appKey))
	var err error
	if v.signKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	pub, _ := jwk.Import(v.signKey.Public())
	_ = pub.Set(jwk.KeyIDKey, "p1")
	set := jwk.NewSet()
	_ = set.AddKey(pub)
	jwks, _ := json.Marshal(set)
	files := map[string]string{
		"deployment.toml": "[egress]\nupstream_url = \"https://models.example.test/v1\"\n" +
			"[[apps]]\nid = \"app\"\nkey_sha256 = \"" + hex.EncodeToString(sum[:]) + "\"\nagents = [\"" + secAgent + "\"]\n" +
			"[[issuers]]\nid = \"partner\"\nissuer = \"https://partner.example.test\"\naudience = \"vessel\"\n" +
			"jwks_file = \"jwks.json\"\nagents = [\"" + secOther + "\"]\n" +
			"[[agents]]\nid = \"" + secAgent + "\"\npackage = \"agents/" + secAgent + "\"\n" +
			"[[agents]]\nid = \"" + secOther + "\"\npackage = \"agents/" + secOther + "\"\n",
		"jwks.json":                           string(jwks),
		"agents/" + secAgent + "/vessel.toml": "name = \"Guide\"\ndescription = \"Answers.\"\n[model]\nname = \"scripted\"\n",
		"agents/" + secAgent + "/prompt.md":   "You answer.",
		"agents/" + secOther + "/vessel.toml": "name = \"Records\"\ndescription = \"Records.\"\n[model]\nname = \"scripted\"\n",
		"agents/" + secOther + "/prompt.md":   "You look records up.",
	}
	for n, c := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "deployment.toml")
	noEnv := func(string) (string, bool) { return "", false }
	d, err := fromspec.Load(path, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := jwt.New(jwt.Config{Issuers: d.Issuers, BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if v.fp, err = a2aserver.AgentFingerprint(d, secAgent); err != nil {
		t.Fatal(err)
	}

	v.sandbox = &statusSandbox{}
	v.sandbox.set(true, secAgent, v.fp)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	sandboxv1.RegisterRunServiceServer(gs, v.sandbox)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	sb, err := tools.DialSandbox("http://"+ln.Addr().String(), tokens.DeriveToken("master", "sandbox/"+secAgent))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })

	v.dataDir = filepath.Join(dir, "data")
	if err := os.MkdirAll(v.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	backend, err := store.Open(context.Background(), "sqlite://"+filepath.Join(v.dataDir, "tasks.sqlite"),
		store.Options{Agents: []string{secAgent}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backend.Close() })
	keys, err := auth.NewAppKeys(d.Apps)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	v.logs = logs
	v.srv, err = a2aserver.New(a2aserver.Config{
		Deployment:    d,
		Reload:        func() (*settings.Deployment, error) { return fromspec.Load(path, noEnv) },
		Sandboxes:     map[string]a2aserver.AgentSandbox{secAgent: sb},
		SandboxTools:  func(a *settings.Agent) []tools.Tool { return tools.SandboxTools(sb, a) },
		Auth:          auth.Chain{keys, jwt.Authenticator{V: verifier}},
		Store:         backend,
		ModelKey:      "k",
		ModelBaseURL:  model.URL + "/v1",
		Logger:        zap.New(core),
		ReadyInterval: time.Hour, // the test calls CheckReadiness itself
	})
	if err != nil {
		t.Fatal(err)
	}
	v.srv.Start(context.Background())
	t.Cleanup(v.srv.Close)
	hs := httptest.NewServer(v.srv)
	t.Cleanup(hs.Close)
	v.base = hs.URL
	v.url = hs.URL + "/agents/" + secAgent
	if ok, why := v.srv.Ready(secAgent); !ok {
		t.Fatalf("agent not ready at start: %s", why)
	}
	return v
}

func (v *secVessel) post(t *testing.T, body []byte) (int, []byte) {
	t.Helper()
	return v.postAs(t, v.url, map[string]string{"Authorization": "Bearer " + v.appKey, "X-Vessel-User": "alice"}, body)
}

func (v *secVessel) postAs(t *testing.T, url string, hdr map[string]string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, val := range hdr {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

// served checks readiness once and reports whether a turn is answered
// (200 with a completed task) or refused with 503 / -32004, and that
// /health agrees.
func (v *secVessel) served(t *testing.T) bool {
	t.Helper()
	v.srv.CheckReadiness(context.Background())
	code, b := v.post(t, []byte(sendText("r", "hello")))
	resp, err := http.Get(v.base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Agents map[string]bool `json:"agents"`
	}
	err = json.NewDecoder(resp.Body).Decode(&h)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case code == http.StatusOK && strings.Contains(string(b), "TASK_STATE_COMPLETED"):
		if !h.Agents[secAgent] {
			t.Fatalf("turn served while /health says unavailable")
		}
		return true
	case code == http.StatusServiceUnavailable && strings.Contains(string(b), "-32004"):
		if h.Agents[secAgent] {
			t.Fatalf("turn refused while /health says available")
		}
		return false
	}
	t.Fatalf("neither served nor refused as not ready: HTTP %d %s", code, b)
	return false
}

func TestServedOnlyWhenSandboxConfinedAndCurrent(t *testing.T) {
	v := newSecVessel(t)
	if !v.served(t) {
		t.Fatal("a confined sandbox with the current fingerprint is not served")
	}
	for _, c := range []struct {
		name     string
		confined bool
		agent    string
		fp       string
	}{
		{"not confined", false, secAgent, v.fp},
		{"older fingerprint", true, secAgent, "sha256:" + strings.Repeat("0", 64)},
		{"no fingerprint", true, secAgent, ""},
		{"another agent's sandbox", true, "other", v.fp},
	} {
		v.sandbox.set(c.confined, c.agent, c.fp)
		if v.served(t) {
			t.Errorf("%s: agent served", c.name)
		}
		v.sandbox.set(true, secAgent, v.fp)
		if !v.served(t) {
			t.Fatalf("%s: agent not served again once the sandbox is right", c.name)
		}
	}

	// An edit on disk that was not redeployed: the sandbox still reports the
	// fingerprint it was started with, which no longer matches the files.
	tool := filepath.Join(v.pkg, "tools", "extra.toml")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("name = \"extra\"\ndescription = \"New.\"\ncommand = [\"true\"]\nscope = \"tools:read\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v.served(t) {
		t.Error("agent served after its tools changed on disk without a redeploy")
	}
	if err := os.Remove(tool); err != nil {
		t.Fatal(err)
	}
	if !v.served(t) {
		t.Fatal("agent not served once the files match again")
	}

	// A deployment file that no longer loads serves nothing.
	dep := filepath.Join(filepath.Dir(filepath.Dir(v.pkg)), "deployment.toml")
	good, err := os.ReadFile(dep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dep, append(append([]byte{}, good...), "[[agents]]\nid = \"\"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if v.served(t) {
		t.Error("agent served while deployment.toml does not load")
	}
	if err := os.WriteFile(dep, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if !v.served(t) {
		t.Fatal("agent not served once deployment.toml loads again")
	}
}

// bodyOfSize is a SendMessage whose text pads the body to exactly n bytes.
func bodyOfSize(t *testing.T, n int) []byte {
	t.Helper()
	head := `{"jsonrpc":"2.0","id":"big","method":"SendMessage","params":{"message":{"messageId":"m-big","role":"ROLE_USER","parts":[{"text":"`
	tail := `"}]}}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatal("n too small")
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte("a"), pad)...)
	b = append(b, tail...)
	return b
}

func TestBodyLimitIsSixteenMillionBytes(t *testing.T) {
	if a2aserver.MaxBodyBytes != 16_000_000 {
		t.Fatalf("MaxBodyBytes = %d, the A2A contract says 16,000,000", a2aserver.MaxBodyBytes)
	}
	v := newSecVessel(t)
	// At the limit the body is read: the text is then too long for a turn,
	// so the task is rejected, but not with 413.
	code, b := v.post(t, bodyOfSize(t, 16_000_000))
	if code != http.StatusOK || !strings.Contains(string(b), "TASK_STATE_REJECTED") {
		t.Fatalf("16,000,000 bytes: HTTP %d %.300s", code, b)
	}
	code, b = v.post(t, bodyOfSize(t, 16_000_001))
	if code != http.StatusRequestEntityTooLarge || strings.TrimSpace(string(b)) != `{"error":"request too large"}` {
		t.Fatalf("16,000,001 bytes: HTTP %d %.300s", code, b)
	}
}

// TestHistoryNeverStored sends a turn whose history carries a marker and
// then reads every file of the task store byte for byte: the user's text
// is there (so the store is readable as written), the history is not.
func TestHistoryNeverStored(t *testing.T) {
	v := newSecVessel(t)
	rnd := make([]byte, 8)
	_, _ = rand.Read(rnd)
	marker := "private-history-" + hex.EncodeToString(rnd)
	question := "question-" + hex.EncodeToString(rnd)
	history, _ := json.Marshal(map[string]any{"version": 1, "messages": []any{
		map[string]any{"role": "user", "content": "earlier " + marker},
		map[string]any{"role": "assistant", "content": "reply " + marker},
	}})
	body := `{"jsonrpc":"2.0","id":"h1","method":"SendMessage","params":{"message":{"messageId":"m-h1","role":"ROLE_USER",
		"parts":[{"text":"` + question + `"},{"raw":"` + base64.StdEncoding.EncodeToString(history) +
		`","mediaType":"application/vnd.astralvessel.transcript+json"}]},
		"configuration":{"acceptedOutputModes":["text/markdown","application/vnd.astralvessel.transcript+json"]}}}`
	code, b := v.post(t, []byte(body))
	if code != http.StatusOK || !strings.Contains(string(b), "TASK_STATE_COMPLETED") || !strings.Contains(string(b), "You said: "+question) {
		t.Fatalf("turn: HTTP %d %s", code, b)
	}
	var all []byte
	entries, err := os.ReadDir(v.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		c, err := os.ReadFile(filepath.Join(v.dataDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c...)
	}
	if !bytes.Contains(all, []byte(question)) {
		t.Fatalf("the user's text is not in the store files %v; the scan proves nothing", entries)
	}
	if bytes.Contains(all, []byte(marker)) {
		t.Fatal("the history sent in was written to the task store")
	}
	if bytes.Contains(all, history) || bytes.Contains(all, []byte(base64.StdEncoding.EncodeToString(history))) {
		t.Fatal("the transcript part was written to the task store")
	}
	// Nor does it reach the logs, at any level.
	if v.logs.Len() == 0 {
		t.Fatal("the server logged nothing; the log scan proves nothing")
	}
	for _, e := range v.logs.All() {
		line, _ := json.Marshal(map[string]any{"msg": e.Message, "fields": e.ContextMap()})
		if bytes.Contains(line, []byte(marker)) {
			t.Fatalf("the history was logged: %s", line)
		}
	}
}

// TestOwnerBindingAcrossAppAndToken: a task belongs to the principal that
// created it. A token's subject and an app's X-Vessel-User with the same
// name are different owners, and so are two users of one app.
func TestOwnerBindingAcrossAppAndToken(t *testing.T) {
	e := newE2E(t)
	token := map[string]string{"Authorization": "Bearer " + e.token(t, "tools:read")} // sub user-42
	app := func(user string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + e.appKey, "X-Vessel-User": user}
	}
	create := func(hdr map[string]string, id string) string {
		code, b := e.post(t, hdr, sendText(id, "mine #tools"))
		var r rpcReply
		if err := json.Unmarshal(b, &r); code != http.StatusOK || err != nil || r.Result == nil || r.Result.Task == nil || r.Result.Task.ID == "" {
			t.Fatalf("create as %v: HTTP %d %s", hdr, code, b)
		}
		return r.Result.Task.ID
	}
	call := func(hdr map[string]string, method, task string) (bool, string) {
		body := `{"jsonrpc":"2.0","id":"q","method":"` + method + `","params":{"id":"` + task + `"}}`
		code, b := e.post(t, hdr, body)
		var r struct {
			Result *struct {
				ID string `json:"id"`
			} `json:"result"`
			Error *rpcError `json:"error"`
		}
		if err := json.Unmarshal(b, &r); code != http.StatusOK || err != nil {
			t.Fatalf("%s: HTTP %d %s", method, code, b)
		}
		if r.Error != nil {
			return false, r.Error.Message
		}
		return r.Result != nil && r.Result.ID == task, string(b)
	}
	who := map[string]map[string]string{"token sub user-42": token, "app user user-42": app("user-42"), "app user alice": app("alice")}
	for _, c := range []struct{ owner, ownerID string }{
		{"token sub user-42", "astral|user-42"},
		{"app user user-42", "app1/user-42"},
	} {
		id := create(who[c.owner], "o-"+strings.ReplaceAll(c.owner, " ", "-"))
		if ok, why := call(who[c.owner], "GetTask", id); !ok {
			t.Fatalf("the owner %s cannot read its task: %.300s", c.ownerID, why)
		}
		for name, hdr := range who {
			if name == c.owner {
				continue
			}
			for _, m := range []string{"GetTask", "CancelTask"} {
				if ok, why := call(hdr, m, id); ok || !strings.Contains(strings.ToLower(why), "not found") {
					t.Errorf("task of %s: %s as %s: %v %.300s", c.owner, m, name, ok, why)
				}
			}
		}
	}
}

func (v *secVessel) token(t *testing.T, sub string) string {
	t.Helper()
	claims, _ := json.Marshal(map[string]any{"iss": "https://partner.example.test", "sub": sub, "aud": "vessel",
		"exp": time.Now().Add(5 * time.Minute).Unix()})
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, "p1")
	tok, err := jws.Sign(claims, jws.WithKey(jwa.ES256(), v.signKey, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(tok)
}

// TestCallersReachOnlyGrantedAgents: an app and an issuer each reach only
// the agents deployment.toml grants them, with 403 / -32003 otherwise. The
// issuer's agent has no sandbox, so a valid token for it gets past the
// grant and stops at readiness (503): the 403 is the grant's doing.
func TestCallersReachOnlyGrantedAgents(t *testing.T) {
	v := newSecVessel(t)
	other := v.base + "/agents/" + secOther
	tok := map[string]string{"Authorization": "Bearer " + v.token(t, "user-7")}
	app := map[string]string{"Authorization": "Bearer " + v.appKey, "X-Vessel-User": "alice"}
	body := []byte(sendText("g", "hello"))
	for _, c := range []struct {
		name   string
		url    string
		hdr    map[string]string
		status int
		code   string
	}{
		{"app to its agent", v.url, app, http.StatusOK, ""},
		{"app to the issuer's agent", other, app, http.StatusForbidden, "-32003"},
		{"token to the app's agent", v.url, tok, http.StatusForbidden, "-32003"},
		{"token to its agent", other, tok, http.StatusServiceUnavailable, "-32004"},
	} {
		code, b := v.postAs(t, c.url, c.hdr, body)
		if code != c.status || (c.code != "" && !strings.Contains(string(b), c.code)) {
			t.Errorf("%s: HTTP %d %.300s, want %d %s", c.name, code, b, c.status, c.code)
		}
	}
	// The manifest endpoint applies the same grants, and the non-JSON-RPC
	// endpoints answer errors as {"error": "..."} with the same statuses.
	for _, c := range []struct {
		name   string
		url    string
		hdr    map[string]string
		status int
	}{
		{"manifest, app, granted", v.url + "/manifest", app, http.StatusOK},
		{"manifest, app, not granted", other + "/manifest", app, http.StatusForbidden},
		{"manifest, token, not granted", v.url + "/manifest", tok, http.StatusForbidden},
		{"manifest, no key", v.url + "/manifest", nil, http.StatusUnauthorized},
		{"agent list, no key", v.base + "/v1/agents", nil, http.StatusUnauthorized},
		{"agent list, bad key", v.base + "/v1/agents", map[string]string{"Authorization": "Bearer nope", "X-Vessel-User": "alice"}, http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		for k, val := range c.hdr {
			req.Header.Set(k, val)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		derr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: HTTP %d, want %d", c.name, resp.StatusCode, c.status)
			continue
		}
		if c.status != http.StatusOK {
			if msg, _ := body["error"].(string); derr != nil || msg == "" || len(body) != 1 {
				t.Errorf("%s: body %v (%v), want {\"error\": \"...\"}", c.name, body, derr)
			}
		}
	}
	// Only granted agents are listed.
	req, _ := http.NewRequest(http.MethodGet, v.base+"/v1/agents", nil)
	for k, val := range tok {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Agents []struct {
			ID string `json:"id"`
		} `json:"agents"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(list.Agents) != 1 || list.Agents[0].ID != secOther {
		t.Errorf("/v1/agents for the token: HTTP %d %+v %v, want only %s", resp.StatusCode, list, err, secOther)
	}
}
