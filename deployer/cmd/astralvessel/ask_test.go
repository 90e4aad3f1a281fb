package main

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// fakeAgent answers every turn with reasoning, a text delta, a transcript
// and an answer, and records the history it was sent.
type fakeAgent struct {
	mu      sync.Mutex
	history []int
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
		f.mu.Unlock()
		env, _ := client.EncodeEnvelope([]client.Message{client.UserMessage(text), client.AssistantMessage("Ospreys.")})
		tr := a2a.NewArtifactEvent(ec, &a2a.Part{Content: a2a.Raw(env), MediaType: client.TranscriptMediaType})
		tr.Artifact.Name, tr.LastChunk = "transcript", true
		ans := a2a.NewArtifactEvent(ec, &a2a.Part{Content: a2a.Text("Ospreys."), MediaType: client.MarkdownMediaType})
		ans.Artifact.Name, ans.LastChunk = "answer", true
		for _, ev := range []a2a.Event{
			a2a.NewSubmittedTask(ec, ec.Message),
			status(ec, a2a.TaskStateWorking, "turn.started", map[string]any{}),
			status(ec, a2a.TaskStateWorking, "reasoning.delta", map[string]any{"text": "thinking"}),
			status(ec, a2a.TaskStateWorking, "text.delta", map[string]any{"text": "Ospreys."}),
			tr, ans,
			status(ec, a2a.TaskStateCompleted, "turn.finished", map[string]any{"status": "ok"}),
		} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (f *fakeAgent) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(status(ec, a2a.TaskStateCanceled, "turn.finished", map[string]any{"status": "cancelled"}), nil)
	}
}

func TestAskKeepsTheConversation(t *testing.T) {
	agent := &fakeAgent{}
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("X-Vessel-User") != "local" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/v1/agents" {
			_ = json.NewEncoder(w).Encode(map[string]any{"agents": []any{map[string]any{"id": "birds"}}})
			return
		}
		rpc.ServeHTTP(w, r)
	}))
	defer srv.Close()

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
