package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/astraldeep/astralvessel-go/vessel/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// fakeAgent answers every turn with reasoning, a text delta, a transcript
// and an answer, and records the history it was sent.
type fakeAgent struct {
	mu        sync.Mutex
	history   []int
	questions []string
	// slow: stream text until cancelled; started gets the first delta.
	slow    bool
	started chan struct{}
	// restCalls counts requests that reached the HTTP+JSON binding,
	// grpcCalls those that reached the gRPC binding.
	restCalls, grpcCalls int
	// approval: the first message pauses for approval of one bash call;
	// decisions are the approval.decision parts received.
	approval  bool
	decisions []map[string]any
	// toolBetween: text, then a tool call, then the answer's text.
	toolBetween bool
}

func status(ec *a2asrv.ExecutorContext, state a2a.TaskState, typ string, data map[string]any) *a2a.TaskStatusUpdateEvent {
	ev := a2a.NewStatusUpdateEvent(ec, state, a2a.NewMessageForTask(a2a.MessageRoleAgent, ec, a2a.NewDataPart(data)))
	ev.SetMeta("vessel.event", typ)
	return ev
}

func (f *fakeAgent) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		text, n := "", 0
		for _, p := range ec.Message.Parts {
			switch c := p.Content.(type) {
			case a2a.Text:
				text = string(c)
			case a2a.Raw:
				msgs, _ := client.DecodeEnvelope(c)
				n = len(msgs)
			}
		}
		f.mu.Lock()
		f.history = append(f.history, n)
		f.questions = append(f.questions, text)
		f.mu.Unlock()
		if f.approval && ec.StoredTask == nil {
			if yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				yield(status(ec, a2a.TaskStateInputRequired, "approval.required", map[string]any{
					"type": "approval.required", "approval_id": "ap1", "timeout_seconds": 600, "on_timeout": "deny",
					"expires_at": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339),
					"calls": []any{
						map[string]any{"call_id": "c1", "tool": "bash", "arguments": `{"command":"rm -r x"}`, "scope": "tools:execute",
							"reason": "the policy lists tool bash", "editable": true},
						map[string]any{"call_id": "c2", "tool": "bash", "arguments": `{"command":"ls"}`, "scope": "tools:execute",
							"reason": "the policy lists tool bash", "editable": true},
					}}), nil)
			}
			return
		}
		if ec.StoredTask != nil {
			for _, p := range ec.Message.Parts {
				if m, ok := p.Data().(map[string]any); ok && m["type"] == "approval.decision" {
					f.mu.Lock()
					f.decisions = append(f.decisions, m)
					f.mu.Unlock()
				}
			}
		}
		if f.slow {
			if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			for i := 0; ctx.Err() == nil && i < 500; i++ {
				if !yield(status(ec, a2a.TaskStateWorking, "text.delta", map[string]any{"text": "word "}), nil) {
					return
				}
				if i == 0 {
					close(f.started)
				}
				time.Sleep(10 * time.Millisecond)
			}
			return
		}
		env, _ := client.EncodeEnvelope([]client.Message{client.UserMessage(text), client.AssistantMessage("Ospreys.")})
		tr := a2a.NewArtifactEvent(ec, &a2a.Part{Content: a2a.Raw(env), MediaType: client.TranscriptMediaType})
		tr.Artifact.Name, tr.LastChunk = "transcript", true
		ans := a2a.NewArtifactEvent(ec, &a2a.Part{Content: a2a.Text("Ospreys."), MediaType: client.MarkdownMediaType})
		ans.Artifact.Name, ans.LastChunk = "answer", true
		first := a2a.Event(a2a.NewSubmittedTask(ec, ec.Message))
		if ec.StoredTask != nil {
			first = status(ec, a2a.TaskStateWorking, "tool.finished", map[string]any{"call_id": "c1", "name": "bash", "ok": true, "approval": "edited"})
		}
		var before []a2a.Event
		if f.toolBetween {
			before = []a2a.Event{
				status(ec, a2a.TaskStateWorking, "model.retry", map[string]any{"attempt": 2, "wait_ms": 1500, "error": "model answered 429: slow down"}),
				status(ec, a2a.TaskStateWorking, "text.delta", map[string]any{"text": "Let me look."}),
				status(ec, a2a.TaskStateWorking, "tool.started", map[string]any{"call_id": "c1", "name": "bash", "arguments": "{}"}),
				status(ec, a2a.TaskStateWorking, "tool.finished", map[string]any{"call_id": "c1", "name": "bash", "ok": true}),
			}
		}
		evs := append([]a2a.Event{
			first,
			status(ec, a2a.TaskStateWorking, "turn.started", map[string]any{}),
			status(ec, a2a.TaskStateWorking, "reasoning.delta", map[string]any{"text": "thinking"})}, before...)
		evs = append(evs,
			status(ec, a2a.TaskStateWorking, "text.delta", map[string]any{"text": "Ospreys."}),
			tr, ans,
			status(ec, a2a.TaskStateCompleted, "turn.finished", map[string]any{"status": "ok"}))
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (f *fakeAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		// Text that arrives after the cancel must not be shown.
		if yield(status(ec, a2a.TaskStateWorking, "text.delta", map[string]any{"text": "AFTER-CANCEL"}), nil) {
			yield(status(ec, a2a.TaskStateCanceled, "turn.finished", map[string]any{"status": "cancelled"}), nil)
		}
	}
}

// fakeStack serves agent as "birds" and writes a stack.json like
// `astralvessel up` does; it returns the server and the state folder.
func fakeStack(t *testing.T, agent *fakeAgent) (*httptest.Server, string) {
	t.Helper()
	h := a2asrv.NewHandler(agent)
	rpc, rest := a2asrv.NewJSONRPCHandler(h), a2asrv.NewRESTHandler(h)
	grpcAddr := fakeGRPC(t, agent, h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/agents/birds/.well-known/agent-card.json" {
			g := a2a.NewAgentInterface(grpcAddr, a2a.TransportProtocolGRPC)
			g.Tenant = "birds"
			_ = json.NewEncoder(w).Encode(&a2a.AgentCard{Name: "birds", SupportedInterfaces: []*a2a.AgentInterface{g}})
			return
		}
		if r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("X-Vessel-User") != "local" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/v1/agents" {
			_ = json.NewEncoder(w).Encode(map[string]any{"agents": []any{map[string]any{"id": "birds"}}})
			return
		}
		if p, ok := strings.CutPrefix(r.URL.Path, "/agents/birds/v1/"); ok {
			agent.mu.Lock()
			agent.restCalls++
			agent.mu.Unlock()
			r.URL.Path = "/" + p
			rest.ServeHTTP(w, r)
			return
		}
		rpc.ServeHTTP(w, r)
	}))

	// A stack.json like `astralvessel up` writes.
	state := t.TempDir()
	keyFile := filepath.Join(state, "app.key")
	if err := os.WriteFile(keyFile, []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"url": srv.URL, "agents": []string{"birds"}, "app_key_file": keyFile, "user": "local"})
	if err := os.WriteFile(filepath.Join(state, "stack.json"), info, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VESSEL_APP_KEY", "")
	t.Setenv("VESSEL_USER", "")
	return srv, state
}

func TestAskKeepsTheConversation(t *testing.T) {
	agent := &fakeAgent{}
	srv, state := fakeStack(t, agent)
	defer srv.Close()

	var conv string
	for i := range 2 {
		var out, errb bytes.Buffer
		if code := dispatch([]string{"ask", "--state", state, "Which", "birds", "fish?"}, &out, &errb); code != 0 {
			t.Fatalf("ask %d: code %d, stderr %s", i, code, errb.String())
		}
		if out.String() != "Ospreys.\n" {
			t.Errorf("stdout %q", out.String())
		}
		if !strings.Contains(errb.String(), "reasoning: thinking") {
			t.Errorf("stderr %q", errb.String())
		}
		// The conversation is named on stderr, with how to go on.
		line, _, _ := strings.Cut(errb.String(), "\n")
		var id, how string
		if _, err := fmt.Sscanf(line, "conversation %s %s", &id, &how); err != nil || !strings.HasPrefix(id, "cli-") || !strings.Contains(line, "--new starts another") {
			t.Fatalf("ask %d: first stderr line %q", i, line)
		}
		if i == 0 {
			conv = id
			if how != "(new;" {
				t.Errorf("first ask: %q", line)
			}
		} else if id != conv || how != "(continued," {
			t.Errorf("second ask: %q, want conversation %s continued", line, conv)
		}
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "--new", "Again?"}, &out, &errb); code != 0 {
		t.Fatalf("ask --new: %d %s", code, errb.String())
	}
	// With --url the agent comes from /v1/agents.
	if code := dispatch([]string{"ask", "--state", t.TempDir(), "--url", srv.URL, "--key", "k", "Hi"}, &out, &errb); code != 0 {
		t.Fatalf("ask --url: %d %s", code, errb.String())
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	// First turn no history, second the first turn's two messages, --new none.
	if got := agent.history; len(got) != 4 || got[0] != 0 || got[1] != 2 || got[2] != 0 || got[3] != 0 {
		t.Errorf("history sent: %v", got)
	}
}

// fakeGRPC serves h over gRPC for tenant birds, with the stack's key.
func fakeGRPC(t *testing.T, agent *fakeAgent, h a2asrv.RequestHandler) string {
	t.Helper()
	check := func(ctx context.Context, req any) error {
		md, _ := metadata.FromIncomingContext(ctx)
		if strings.Join(md.Get("authorization"), "") != "Bearer k" || strings.Join(md.Get("x-vessel-user"), "") != "local" {
			return grpcstatus.Error(codes.Unauthenticated, "bad key")
		}
		if r, ok := req.(interface{ GetTenant() string }); !ok || r.GetTenant() != "birds" {
			return grpcstatus.Error(codes.NotFound, "unknown agent")
		}
		agent.mu.Lock()
		agent.grpcCalls++
		agent.mu.Unlock()
		return nil
	}
	gs := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			if err := check(ctx, req); err != nil {
				return nil, err
			}
			return next(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
			return next(srv, &checkedStream{ServerStream: ss, check: check})
		}))
	a2agrpc.NewHandler(h).RegisterWith(gs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	return ln.Addr().String()
}

type checkedStream struct {
	grpc.ServerStream
	check func(context.Context, any) error
}

func (s *checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return s.check(s.Context(), m)
}

// TestAskBindingGRPC: --binding grpc reads the gRPC address from the
// agent's card and asks there, naming the agent as tenant.
// TestAskSeparatesTextBeforeATool: text written before a tool call and
// the final answer are two paragraphs, not one glued line; a model retry
// is shown on stderr.
func TestAskSeparatesTextBeforeATool(t *testing.T) {
	agent := &fakeAgent{toolBetween: true}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "Which", "birds?"}, &out, &errb); code != 0 {
		t.Fatalf("code %d, stderr %s", code, errb.String())
	}
	if out.String() != "Let me look.\n\nOspreys.\n" {
		t.Fatalf("stdout %q", out.String())
	}
	if !strings.Contains(errb.String(), "[model: model answered 429: slow down; trying again in 1.5s]") {
		t.Fatalf("stderr %q: the retry is not shown", errb.String())
	}
}

func TestAskBindingGRPC(t *testing.T) {
	agent := &fakeAgent{}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "--binding", "grpc", "Which", "birds", "fish?"}, &out, &errb); code != 0 {
		t.Fatalf("ask --binding grpc: code %d, stderr %s", code, errb.String())
	}
	if out.String() != "Ospreys.\n" {
		t.Errorf("stdout %q", out.String())
	}
	agent.mu.Lock()
	n := agent.grpcCalls
	agent.mu.Unlock()
	if n == 0 {
		t.Error("no call reached the gRPC binding")
	}
}

// TestAskBinding: --binding rest asks over HTTP+JSON; an unknown binding
// is a usage error.
func TestAskBinding(t *testing.T) {
	agent := &fakeAgent{}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "--binding", "rest", "Which", "birds", "fish?"}, &out, &errb); code != 0 {
		t.Fatalf("ask --binding rest: code %d, stderr %s", code, errb.String())
	}
	if out.String() != "Ospreys.\n" {
		t.Errorf("stdout %q", out.String())
	}
	agent.mu.Lock()
	n := agent.restCalls
	agent.mu.Unlock()
	if n == 0 {
		t.Error("no call reached the REST binding")
	}
	errb.Reset()
	if code := dispatch([]string{"ask", "--state", state, "--binding", "soap", "hi"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "soap") {
		t.Errorf("unknown binding: %d %s", code, errb.String())
	}
}

func TestAskErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask"}, &out, &errb); code != 2 {
		t.Errorf("no question: %d", code)
	}
	t.Setenv("VESSEL_APP_KEY", "")
	if code := dispatch([]string{"ask", "--state", t.TempDir(), "hi"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "astralvessel up") {
		t.Errorf("no stack: %d %s", code, errb.String())
	}
}

// up on a busy address says so in one line before building or starting
// anything.
func TestUpBusyListen(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	state := t.TempDir()
	var out, errb bytes.Buffer
	code := dispatch([]string{"up", "--listen", addr, "--bin", t.TempDir(), "--state", state}, &out, &errb)
	want := "astralvessel up: " + addr + " is already in use (another process listens there, maybe another local stack): stop it or pass --listen with another address\n"
	if code != 1 || errb.String() != want || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errb.String(), want)
	}
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("up wrote %v", entries)
	}
}

func TestUpUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"up", "a.toml", "b.toml"}, &out, &errb); code != 2 {
		t.Errorf("two files: %d", code)
	}
	if code := dispatch([]string{"up", "--bin", t.TempDir(), "--state", t.TempDir(), filepath.Join(t.TempDir(), "missing.toml")}, &out, &errb); code != 1 {
		t.Errorf("missing binaries: %d %s", code, errb.String())
	}
}

// The try: line of up works as printed: the binary by its path unless PATH
// finds this very one, --state (quoted) only when it is not the default.
func TestAskHint(t *testing.T) {
	if got := askHint("/opt/av bin/astralvessel", "/tmp/st", "/tmp/st"); got != `'/opt/av bin/astralvessel' ask 'Which birds in the guide hunt fish?'` {
		t.Errorf("default state: %s", got)
	}
	if got := askHint("astralvessel", "/tmp/it's", "/home/x"); got != `astralvessel ask --state '/tmp/it'\''s' 'Which birds in the guide hunt fish?'` {
		t.Errorf("other state: %s", got)
	}
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if got := selfCommand(); got != exe {
		t.Errorf("not in PATH: %s, want %s", got, exe)
	}
	if err := os.Symlink(exe, filepath.Join(dir, "astralvessel")); err != nil {
		t.Fatal(err)
	}
	if got := selfCommand(); got != "astralvessel" {
		t.Errorf("in PATH: %s", got)
	}
}

// The question comes from the arguments, stdin ("-"), a file ("@FILE") or
// --file.
func TestAskQuestionSources(t *testing.T) {
	agent := &fakeAgent{}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	qfile := filepath.Join(t.TempDir(), "q.txt")
	if err := os.WriteFile(qfile, []byte("From a file?\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := stdin
	t.Cleanup(func() { stdin = old })
	for _, args := range [][]string{{"-"}, {"@" + qfile}, {"--file", qfile}, {"--file", "-"}} {
		stdin = strings.NewReader("  From stdin?\n")
		var out, errb bytes.Buffer
		if code := dispatch(append([]string{"ask", "--state", state}, args...), &out, &errb); code != 0 {
			t.Fatalf("ask %v: %d %s", args, code, errb.String())
		}
	}
	agent.mu.Lock()
	got := strings.Join(agent.questions, "|")
	agent.mu.Unlock()
	if got != "From stdin?|From a file?|From a file?|From stdin?" {
		t.Errorf("questions sent: %q", got)
	}
	for _, c := range []struct {
		args []string
		in   string
		code int
		want string
	}{
		{[]string{"-"}, " \n", 1, "the question in stdin is empty"},
		{[]string{"@" + qfile + ".missing"}, "", 1, "no such file"},
		{[]string{"--file", qfile, "and", "words"}, "", 1, "not both"},
		{[]string{"--new", "--conversation", "x", "hi"}, "", 2, "exclude each other"},
	} {
		stdin = strings.NewReader(c.in)
		var out, errb bytes.Buffer
		if code := dispatch(append([]string{"ask", "--state", state}, c.args...), &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("ask %v: %d %q, want %d %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

// A wrong agent name lists the agents the key may call and leaves no
// history behind.
func TestAskUnknownAgent(t *testing.T) {
	agent := &fakeAgent{}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	var out, errb bytes.Buffer
	code := dispatch([]string{"ask", "--state", state, "--agent", "nope", "hi"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), `unknown agent "nope"`) || !strings.Contains(errb.String(), "this key may call: birds") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "history")); len(entries) != 0 {
		t.Errorf("history left behind: %v", entries)
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.questions) != 0 {
		t.Errorf("the question was sent: %v", agent.questions)
	}
}

// A stack.json whose stack is gone: say the stack is not running and how to
// start it.
func TestAskStackNotRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	state := t.TempDir()
	keyFile := filepath.Join(state, "app.key")
	if err := os.WriteFile(keyFile, []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"url": "http://" + addr, "agents": []string{"birds"}, "app_key_file": keyFile, "user": "local"})
	if err := os.WriteFile(filepath.Join(state, "stack.json"), info, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := dispatch([]string{"ask", "--state", state, "hi"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "is not running at http://"+addr) || !strings.Contains(errb.String(), "astralvessel up") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	code = dispatch([]string{"ask", "--state", t.TempDir(), "--url", "http://" + addr, "--key", "k", "hi"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "nothing listens at http://"+addr) {
		t.Errorf("--url: exit %d, stderr %q", code, errb.String())
	}
}

// Ctrl-C cancels the task, shows nothing of the stream after it, ends the
// answer's line and says "cancelled"; the history stays as it was.
func TestAskCtrlC(t *testing.T) {
	agent := &fakeAgent{slow: true, started: make(chan struct{})}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- dispatch([]string{"ask", "--state", state, "slowly"}, &out, &errb) }()
	select {
	case <-agent.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not start")
	}
	time.Sleep(50 * time.Millisecond) // let a delta or two reach stdout
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("ask did not end after Ctrl-C")
	}
	o, e := out.String(), errb.String()
	if code != 130 || !strings.HasPrefix(o, "word ") || !strings.HasSuffix(o, "\n") || strings.Contains(o, "AFTER-CANCEL") {
		t.Errorf("exit %d, stdout %q", code, o)
	}
	if !strings.Contains(e, "cancelling…") || !strings.HasSuffix(e, "\ncancelled\n") {
		t.Errorf("stderr %q", e)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "history")); len(entries) != 0 {
		t.Errorf("history after a cancelled first turn: %v", entries)
	}
}

// syncBuffer is a bytes.Buffer safe for the writes of two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAskApproval: a turn that pauses shows each pending call at the
// terminal and sends the answers typed there (edit the first, deny the
// second with a reason); the resumed turn's answer and history are kept.
func TestAskApproval(t *testing.T) {
	agent := &fakeAgent{approval: true}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	stdin = strings.NewReader("maybe\ne\n{\"command\":\"ls x\"}\nd\nnot now\n")
	t.Cleanup(func() { stdin = os.Stdin })
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "clean", "up"}, &out, &errb); code != 0 {
		t.Fatalf("ask: code %d, stderr %s", code, errb.String())
	}
	for _, want := range []string{"waits for approval of 2 tool call(s)", "[1/2] bash (tools:execute)", `{"command":"rm -r x"}`, "please answer", "[e]dit"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
	if out.String() != "Ospreys.\n" {
		t.Errorf("stdout %q", out.String())
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.decisions) != 1 {
		t.Fatalf("decisions %v", agent.decisions)
	}
	d := agent.decisions[0]
	list, _ := d["decisions"].([]any)
	if d["approval_id"] != "ap1" || len(list) != 2 {
		t.Fatalf("decision part %v", d)
	}
	first, second := list[0].(map[string]any), list[1].(map[string]any)
	if first["decision"] != "edit" || first["arguments"].(map[string]any)["command"] != "ls x" ||
		second["decision"] != "deny" || second["reason"] != "not now" {
		t.Fatalf("decisions %v", list)
	}
}

// TestAskApprovalInputEnds: with no answer at the terminal every call is
// denied: nothing runs without a yes.
func TestAskApprovalInputEnds(t *testing.T) {
	agent := &fakeAgent{approval: true}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	stdin = strings.NewReader("")
	t.Cleanup(func() { stdin = os.Stdin })
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "clean", "up"}, &out, &errb); code != 0 {
		t.Fatalf("ask: code %d, stderr %s", code, errb.String())
	}
	agent.mu.Lock()
	defer agent.mu.Unlock()
	list, _ := agent.decisions[0]["decisions"].([]any)
	for _, d := range list {
		if d.(map[string]any)["decision"] != "deny" {
			t.Fatalf("decisions %v", list)
		}
	}
}
