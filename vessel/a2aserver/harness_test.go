package a2aserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/scripted"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

const testFP = "sha256:test-fingerprint"

// fakeSandbox is a RunService for tests until the real sandboxd is used:
// "species" prints JSON, "bash" runs "sleep" until cancelled or echoes,
// "draw" returns a PNG file, "hostile" files sandboxd would have refused.
type fakeSandbox struct {
	sandboxv1.UnimplementedRunServiceServer
	agent    string
	confined bool
	token    string
	// tier is the isolation tier Status reports ("" as sandboxd before
	// tiers).
	tier string

	mu    sync.Mutex
	ended []string
	// failEnds is how many EndTurn calls to come fail as a busy sandbox's
	// would (Unavailable) before one succeeds.
	failEnds int
	// endCalls counts EndTurn calls, failed ones included.
	endCalls  int
	cancelled int
	running   int
	// turns is what ListTurns reports.
	turns []*sandboxv1.TurnInfo
	// tasks are the x-vessel-task-id metadata of the Run calls, in order.
	tasks []string
	// commands are the bash commands run, in order.
	commands []string
	// traceparents are the traceparent metadata of the Run calls.
	traceparents []string
}

func (f *fakeSandbox) bashCommands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.commands...)
}

func (f *fakeSandbox) taskIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.tasks...)
}

func (f *fakeSandbox) ListTurns(ctx context.Context, _ *sandboxv1.ListTurnsRequest) (*sandboxv1.ListTurnsResponse, error) {
	if !f.authorized(ctx) {
		return nil, fmt.Errorf("unauthorized")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &sandboxv1.ListTurnsResponse{Turns: f.turns}, nil
}

func (f *fakeSandbox) authorized(ctx context.Context) bool {
	md, _ := metadataFrom(ctx)
	return md == "Bearer "+f.token
}

func (f *fakeSandbox) Status(ctx context.Context, _ *sandboxv1.StatusRequest) (*sandboxv1.StatusResponse, error) {
	if !f.authorized(ctx) {
		return nil, fmt.Errorf("unauthorized")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &sandboxv1.StatusResponse{Confined: f.confined, LandlockAbi: 7, Fingerprint: testFP, Version: "fake", Agent: f.agent, Tier: f.tier}, nil
}

func (f *fakeSandbox) EndTurn(ctx context.Context, req *sandboxv1.EndTurnRequest) (*sandboxv1.EndTurnResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.endCalls++
	if f.failEnds > 0 {
		f.failEnds--
		return nil, status.Error(codes.Unavailable, "sandbox busy")
	}
	f.ended = append(f.ended, req.TurnId)
	return &sandboxv1.EndTurnResponse{Existed: true}, nil
}

func (f *fakeSandbox) Run(req *sandboxv1.RunRequest, stream grpc.ServerStreamingServer[sandboxv1.RunResponse]) error {
	if !f.authorized(stream.Context()) {
		return fmt.Errorf("unauthorized")
	}
	send := func(r *sandboxv1.RunResponse) error { return stream.Send(r) }
	if md, ok := metadata.FromIncomingContext(stream.Context()); ok {
		f.mu.Lock()
		f.tasks = append(f.tasks, md.Get(telemetry.TaskIDMetadata)...)
		f.traceparents = append(f.traceparents, md.Get("traceparent")...)
		f.mu.Unlock()
	}
	switch req.Tool {
	case "species":
		_ = send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Stdout{Stdout: []byte(`[{"common_name":"Osprey"},{"common_name":"Belted Kingfisher"}]`)}})
	case "bash":
		var args struct{ Command string }
		_ = json.Unmarshal([]byte(req.ArgumentsJson), &args)
		f.mu.Lock()
		f.commands = append(f.commands, args.Command)
		f.mu.Unlock()
		if strings.HasPrefix(args.Command, "sleep") {
			f.mu.Lock()
			f.running++
			f.mu.Unlock()
			<-stream.Context().Done()
			f.mu.Lock()
			f.running--
			f.cancelled++
			f.mu.Unlock()
			return stream.Context().Err()
		}
		_ = send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Stdout{Stdout: []byte(args.Command + "\n")}})
	case "draw":
		_ = send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_File{File: &sandboxv1.OutboxFile{Name: "plot.png", MediaType: "image/png", Content: tinyPNG()}}})
		_ = send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_File{File: &sandboxv1.OutboxFile{Name: "data.csv", MediaType: "text/csv", Content: []byte("a,b\n1,2\n")}}})
	case "hostile":
		var args struct{ Case string }
		_ = json.Unmarshal([]byte(req.ArgumentsJson), &args)
		if err := sendHostileFiles(stream, req.CallId, args.Case); err != nil {
			return err
		}
	default:
		return send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Exit{Exit: &sandboxv1.Exit{Code: -1, Error: "unknown tool " + req.Tool}}})
	}
	return send(&sandboxv1.RunResponse{Event: &sandboxv1.RunResponse_Exit{Exit: &sandboxv1.Exit{Code: 0, DurationUs: 10}}})
}

func (f *fakeSandbox) stats() (ended []string, cancelled, running int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ended...), f.cancelled, f.running
}

// startFakeSandbox serves a fake RunService on loopback.
func startFakeSandbox(t testing.TB, agent, token string) (*fakeSandbox, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSandbox{agent: agent, confined: true, token: token}
	gs := grpc.NewServer()
	sandboxv1.RegisterRunServiceServer(gs, fs)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return fs, "http://" + ln.Addr().String()
}

func digest(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// testScript drives the scripted model in service tests.
const testScript = `{
  "rules": [
    {"name": "tool", "steps": [
      {"reasoning": "let me look", "tool_calls": [{"id": "c1", "name": "species", "arguments": {}}]},
      {"text": "Ospreys hunt fish. {{tool_result_list}}", "pieces": 6}
    ]},
    {"name": "parallel", "steps": [
      {"tool_calls": [{"id": "p1", "name": "species"}, {"id": "p2", "name": "bash", "arguments": {"command": "echo hi"}}]},
      {"text": "done"}
    ]},
    {"name": "twocalls", "steps": [
      {"tool_calls": [{"id": "e1", "name": "bash", "arguments": {"command": "echo one"}}, {"id": "e2", "name": "bash", "arguments": {"command": "echo two"}},
                      {"id": "e3", "name": "species"}]},
      {"text": "results: {{tool_result_list}}"}
    ]},
    {"name": "files", "steps": [
      {"tool_calls": [{"id": "f1", "name": "draw"}]},
      {"text": "see the files"}
    ]},
    {"name": "hostile-names", "steps": [
      {"tool_calls": [{"id": "n1", "name": "hostile", "arguments": {"case": "names"}}]},
      {"text": "names done"}
    ]},
    {"name": "hostile-types", "steps": [
      {"tool_calls": [{"id": "t1", "name": "hostile", "arguments": {"case": "types"}}]},
      {"text": "types done"}
    ]},
    {"name": "hostile-sizes", "steps": [
      {"tool_calls": [{"id": "z1", "name": "hostile", "arguments": {"case": "sizes"}}]},
      {"text": "sizes done"}
    ]},
    {"name": "hostile-turn-count", "steps": [
      {"tool_calls": [{"id": "k1", "name": "hostile", "arguments": {"case": "four"}},
                      {"id": "k2", "name": "hostile", "arguments": {"case": "four"}},
                      {"id": "k3", "name": "hostile", "arguments": {"case": "four"}}]},
      {"text": "count done"}
    ]},
    {"name": "hostile-turn-bytes", "steps": [
      {"tool_calls": [{"id": "b1", "name": "hostile", "arguments": {"case": "big3"}},
                      {"id": "b2", "name": "hostile", "arguments": {"case": "big2"}}]},
      {"text": "bytes done"}
    ]},
    {"name": "hostile-utf8", "steps": [
      {"tool_calls": [{"id": "u1", "name": "hostile", "arguments": {"case": "invalid-utf8"}},
                      {"id": "u2", "name": "draw"}]},
      {"text": "utf8 done"}
    ]},
    {"name": "slowtext", "steps": [{"text": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "pieces": 50, "piece_delay_ms": 100}]},
    {"name": "sleeptool", "steps": [
      {"tool_calls": [{"id": "s1", "name": "bash", "arguments": {"command": "sleep 60"}}]},
      {"text": "slept"}
    ]},
    {"name": "loop", "steps": [{"tool_calls": [{"name": "bash", "arguments": {"command": "echo again"}}]}]},
    {"name": "flaky", "steps": [{"error": {"status": 503, "count": 2}, "text": "recovered"}]},
    {"name": "broken", "steps": [{"error": {"status": 500}}]},
    {"name": "badreq", "steps": [{"error": {"status": 400, "count": 1}, "text": "never"}]},
    {"name": "flood", "steps": [{"text": "x", "repeat": 1000, "pieces": 1}]},
    {"name": "pieces100", "steps": [{"text": "word of the answer ", "repeat": 100}]},
    {"name": "pieces1000", "steps": [{"text": "word of the answer ", "repeat": 1000}]},
    {"name": "spaced100", "steps": [{"text": "word of the answer ", "repeat": 100, "piece_delay_ms": 1}]},
    {"name": "spaced1000", "steps": [{"text": "word of the answer ", "repeat": 1000, "piece_delay_ms": 1}]}
  ],
  "default": {"name": "echo", "steps": [{"text": "You said: {{last_user}}", "pieces": 3}]}
}`

type harness struct {
	t        *testing.T
	url      string
	srv      *a2aserver.Server
	sandbox  *fakeSandbox
	model    *scripted.Server
	backend  store.Backend
	dbPath   string
	deploy   *settings.Deployment
	httpc    *http.Client
	keyApp1  string
	keyApp2  string
	agentID  string
	otherID  string
	brokenID string
	sbURL    string
	logs     *observer.ObservedLogs
	// modelHeaders holds the headers of the last model request (an
	// http.Header): what the egress would see.
	modelHeaders atomic.Value
	// modelBody holds the body of the last model request (a []byte).
	modelBody atomic.Value
	// modelDelay (a time.Duration) holds each model request before it is
	// answered; modelInFlight counts the requests being held and
	// modelMostInFlight the most at once: the turns doing work together.
	modelDelay                       atomic.Int64
	modelInFlight, modelMostInFlight atomic.Int32
	// grpcAddr is the gRPC listener (GRPCServer), on every harness; the
	// cards declare it with selfCards.
	grpcAddr string
}

type harnessOpt func(d *settings.Deployment)

// selfURL as Config.PublicURL makes the harness put its own address in
// the cards, so that a client can start from a card on loopback.
const selfURL = "http://harness.invalid"

// selfCards is the serverOpt that sets selfURL.
func selfCards(c *a2aserver.Config) { c.PublicURL = selfURL }

// serverOpt changes the server's Config before it is built.
type serverOpt func(c *a2aserver.Config)

func newHarness(t *testing.T, opts ...harnessOpt) *harness {
	t.Helper()
	return newHarnessConfig(t, nil, opts...)
}

// newHarnessConfig is newHarness with a last change to the server's Config.
func newHarnessConfig(t *testing.T, cfgOpt serverOpt, opts ...harnessOpt) *harness {
	t.Helper()
	return newHarnessStore(t, "", cfgOpt, opts...)
}

// newHarnessStore is newHarnessConfig on the task store at storeURL (""
// for a fresh SQLite file).
func newHarnessStore(t *testing.T, storeURL string, cfgOpt serverOpt, opts ...harnessOpt) *harness {
	t.Helper()
	h := &harness{t: t, keyApp1: "key-one", keyApp2: "key-two", agentID: "field-guide", otherID: "reader", brokenID: "broken"}
	master := "master-secret"
	sc, err := scripted.Parse([]byte(testScript))
	if err != nil {
		t.Fatal(err)
	}
	h.model = scripted.NewServer(sc)
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.modelHeaders.Store(r.Header.Clone())
		// Counted while held, and no longer once the answer starts: a turn
		// can only go on after its answer, so a handler still returning
		// (descheduled on a loaded machine) is never counted beside the
		// next turn's request.
		n := h.modelInFlight.Add(1)
		for m := h.modelMostInFlight.Load(); n > m && !h.modelMostInFlight.CompareAndSwap(m, n); m = h.modelMostInFlight.Load() {
		}
		time.Sleep(time.Duration(h.modelDelay.Load()))
		h.modelInFlight.Add(-1)
		if b, err := io.ReadAll(r.Body); err == nil {
			h.modelBody.Store(b)
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.model.ServeHTTP(w, r)
	}))
	t.Cleanup(ms.Close)

	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "prompt.md"), []byte("You answer questions about birds."), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := func(name string) *settings.Manifest {
		return &settings.Manifest{
			Name: name, Description: "Answers questions about birds.", Version: "0.1.0",
			Examples: []string{"Which birds hunt fish?"},
			Model:    settings.Model{Name: "scripted", BaseURL: ms.URL + "/v1", APIKey: "egress-token", MaxSteps: 3},
			Tools:    settings.Builtins{Enabled: []string{"bash", "read"}},
			Output:   settings.Output{Files: []string{"png", "csv"}},
			Declared: []settings.Tool{
				{Name: "species", Description: "List species.", Command: []string{"true"}, Scope: "tools:read"},
				{Name: "draw", Description: "Draw.", Command: []string{"true"}, Scope: "tools:files"},
				{Name: "hostile", Description: "Return files sandboxd would refuse.", Command: []string{"true"}, Scope: "tools:files"},
			},
		}
	}
	d := &settings.Deployment{
		Path:   filepath.Join(dir, "deployment.toml"),
		Vessel: settings.Vessel{Port: 8700, PublicURL: "http://vessel:8700", TaskTTLHours: 24},
		Apps: []settings.App{
			{ID: "app1", KeySHA256: digest(h.keyApp1), Agents: []string{h.agentID}},
			{ID: "app2", KeySHA256: digest(h.keyApp2), Agents: []string{h.agentID, h.otherID, h.brokenID}},
		},
		Agents: []settings.Agent{
			{ID: h.agentID, PackageDir: pkg, PromptFiles: []string{"prompt.md"}, Manifest: manifest("Field guide")},
			{ID: h.otherID, PackageDir: pkg, PromptFiles: []string{"prompt.md"}, Manifest: manifest("Reader")},
			{ID: h.brokenID, PackageDir: pkg, PromptFiles: []string{"prompt.md"}, Manifest: manifest("Broken")},
		},
	}
	for _, o := range opts {
		o(d)
	}
	h.deploy = d
	fs, sbURL := startFakeSandbox(t, h.agentID, tokens.DeriveToken(master, "sandbox/"+h.agentID))
	h.sandbox = fs
	h.sbURL = sbURL
	_, sbURL2 := startFakeSandbox(t, h.otherID, tokens.DeriveToken(master, "sandbox/"+h.otherID))
	sbs := map[string]a2aserver.AgentSandbox{}
	clients := map[string]*tools.Sandbox{}
	for id, u := range map[string]string{h.agentID: sbURL, h.otherID: sbURL2, h.brokenID: "http://127.0.0.1:1"} {
		sb, err := tools.DialSandbox(u, tokens.DeriveToken(master, "sandbox/"+id))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Close() })
		sbs[id], clients[id] = sb, sb
	}
	h.dbPath = filepath.Join(dir, "tasks.sqlite")
	if storeURL == "" {
		storeURL = "sqlite://" + h.dbPath
	}
	h.backend, err = store.Open(context.Background(), storeURL, store.Options{Agents: []string{h.agentID, h.otherID, h.brokenID}, TTL: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.backend.Close() })
	keys, err := auth.NewAppKeys(d.Apps)
	if err != nil {
		t.Fatal(err)
	}
	logCore, logs := observer.New(zap.InfoLevel)
	h.logs = logs
	cfg := a2aserver.Config{
		Deployment:    d,
		Fingerprint:   func(*settings.Deployment, string) (string, error) { return testFP, nil },
		Sandboxes:     sbs,
		SandboxTools:  func(a *settings.Agent) []tools.Tool { return tools.SandboxTools(clients[a.ID], a) },
		Auth:          auth.Chain{keys},
		Store:         h.backend,
		Logger:        zap.New(logCore),
		MaxBody:       a2aserver.MaxBodyBytes,
		ReadyInterval: time.Hour,
	}
	if cfgOpt != nil {
		cfgOpt(&cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.url = "http://" + ln.Addr().String()
	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.grpcAddr = gln.Addr().String()
	if cfg.PublicURL == selfURL {
		cfg.PublicURL = h.url
		cfg.GRPCAddress = h.grpcAddr
	}
	h.srv, err = a2aserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gs := h.srv.GRPCServer()
	go func() { _ = gs.Serve(gln) }()
	t.Cleanup(gs.Stop)
	h.srv.Start(context.Background())
	t.Cleanup(h.srv.Close)
	hs := httptest.NewUnstartedServer(h.srv)
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	h.httpc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	return h
}

// client is an a2a-go client for agent as app key/user.
func (h *harness) client(agent string) *a2aclient.Client {
	h.t.Helper()
	cl, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(h.url+"/agents/"+agent, a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(h.httpc))
	if err != nil {
		h.t.Fatal(err)
	}
	return cl
}

func as(key, user string) context.Context {
	return a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{
		"Authorization": {"Bearer " + key}, "X-Vessel-User": {user}})
}

func textMsg(s string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s))
}

// stream runs a streaming turn and returns its frames.
func (h *harness) stream(ctx context.Context, agent string, req *a2a.SendMessageRequest) ([]a2a.Event, error) {
	var evs []a2a.Event
	for ev, err := range h.client(agent).SendStreamingMessage(ctx, req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// eventOf returns the vessel event carried by a status update.
func eventOf(ev a2a.Event) map[string]any {
	su, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || su.Status.Message == nil || len(su.Status.Message.Parts) == 0 {
		return nil
	}
	m, _ := su.Status.Message.Parts[0].Data().(map[string]any)
	return m
}

// rawPost posts a JSON-RPC body with headers and returns status and body.
func (h *harness) rawPost(path string, body string, hdr map[string]string) (int, http.Header, []byte) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.httpc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b := readAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}
