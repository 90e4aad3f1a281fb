package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func newTestClient(t *testing.T, fv *fakeVessel, agent string) *Client {
	t.Helper()
	c, err := New(fv.srv.URL, agent, Options{AppKey: testKey, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkFirstTurnResult checks the Result of TestTurnFrameOrderAndResult's
// turn: its ids (taskID is the stream's), text, reasoning, answer and its
// component, then the rest (checkFirstTurnRecords).
func checkFirstTurnResult(t *testing.T, r *Result, taskID string) {
	t.Helper()
	if r.TaskID == "" || r.ContextID != "conv-1" || taskID != r.TaskID {
		t.Errorf("ids: task %q context %q", r.TaskID, r.ContextID)
	}
	if r.Text != "The osprey hunts fish." || r.Reasoning != "thinking" {
		t.Errorf("text %q reasoning %q", r.Text, r.Reasoning)
	}
	if r.Answer == nil || r.Answer.Markdown != "The **osprey** hunts fish." || len(r.Answer.Components) != 1 {
		t.Fatalf("answer %+v", r.Answer)
	}
	if comp := r.Answer.Components[0].(map[string]any); comp["n"] != 3 {
		t.Errorf("component number not turned back into an int: %#v", comp["n"])
	}
	checkFirstTurnRecords(t, r)
}

// checkFirstTurnRecords checks the rest of that Result: the transcript,
// the file, the finish, the tool and Markdown.
func checkFirstTurnRecords(t *testing.T, r *Result) {
	t.Helper()
	if len(r.Messages) != 4 || r.Messages[3].Role() != "assistant" || !strings.Contains(r.Messages[3].Text(), "history=2") {
		t.Errorf("transcript %v", r.Messages)
	}
	if len(r.Files) != 1 || r.Files[0].Name != "map.png" || r.Files[0].MediaType != "image/png" || r.Files[0].CallID != "c1" || string(r.Files[0].Data[1:]) != "PNG" {
		t.Errorf("files %+v", r.Files)
	}
	f := r.Finished
	if f == nil || f.Status != "ok" || f.State != string(a2a.TaskStateCompleted) || f.PromptTokens != 12 || f.CompletionTokens != 7 || f.Steps != 2 || f.Elapsed.Milliseconds() != 1500 {
		t.Errorf("finished %+v", f)
	}
	if len(r.Tools) != 1 || !r.Tools[0].OK || r.Tools[0].Preview != "osprey" || r.Tools[0].ExitCode == nil || *r.Tools[0].ExitCode != 0 {
		t.Errorf("tools %+v", r.Tools)
	}
	if r.Markdown() != r.Answer.Markdown {
		t.Errorf("Markdown() = %q", r.Markdown())
	}
}

func TestTurnFrameOrderAndResult(t *testing.T) {
	fv := newFakeVessel(t)
	c := newTestClient(t, fv, "birds")
	s := c.Turn(t.Context(), TurnRequest{Text: "Which birds hunt fish?", History: []Message{UserMessage("hi"), AssistantMessage("hello")}, ContextID: "conv-1"})
	var kinds []string
	for ev, err := range s.Events() {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		kinds = append(kinds, fmt.Sprintf("%T", ev))
	}
	want := []string{"client.TurnStarted", "client.TurnStarted", "client.ReasoningDelta", "client.ToolStarted", "client.ToolFinished",
		"client.FileAttached", "client.TextDelta", "client.TextDelta", "client.Unknown", "client.TranscriptChunk",
		"client.File", "client.Answer", "client.TurnFinished"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("events\n got %v\nwant %v", kinds, want)
	}
	r := s.Result()
	checkFirstTurnResult(t, r, s.TaskID())

	fv.mu.Lock()
	h := fv.hdrs[len(fv.hdrs)-1]
	fv.mu.Unlock()
	if h.Get("A2A-Version") != "1.0" || h.Get("X-Vessel-User") != "alice" || h.Get("Accept") != "text/event-stream" {
		t.Errorf("headers %v", h)
	}
	fv.exec.mu.Lock()
	msg := fv.exec.seen[len(fv.exec.seen)-1]
	fv.exec.mu.Unlock()
	var gotTranscript bool
	for _, p := range msg.Parts {
		if p.MediaType == TranscriptMediaType {
			if _, ok := p.Content.(a2a.Raw); !ok {
				t.Errorf("transcript sent as %T, want raw", p.Content)
			}
			gotTranscript = true
		}
	}
	if !gotTranscript {
		t.Error("no transcript part sent")
	}

	// The returned transcript is accepted as the next turn's history.
	r2, err := c.Ask(t.Context(), TurnRequest{Text: "And which eat insects?", History: r.Messages, ContextID: r.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r2.Messages[3].Text(), "history=4") {
		t.Errorf("second turn saw wrong history: %v", r2.Messages)
	}
}

func TestAcceptedOutputModes(t *testing.T) {
	req, err := buildRequest(TurnRequest{Text: "x", AcceptFiles: []string{"csv", ".PNG", "application/pdf"}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(req.Config.AcceptedOutputModes, ",")
	if got != "text/markdown,application/vnd.astral.primitives+json,application/vnd.astralvessel.transcript+json,text/csv,image/png,application/pdf" {
		t.Errorf("modes %s", got)
	}
	req, _ = buildRequest(TurnRequest{Text: "x", AcceptFiles: []string{}, NoTranscript: true})
	if got := strings.Join(req.Config.AcceptedOutputModes, ","); got != "text/markdown,application/vnd.astral.primitives+json,application/vnd.astralvessel.no-files" {
		t.Errorf("modes %s", got)
	}
	if _, err := buildRequest(TurnRequest{}); err == nil {
		t.Error("empty turn accepted")
	}
	req, _ = buildRequest(TurnRequest{Data: SkillCall("birds", "q?")})
	if _, ok := req.Message.Parts[0].Content.(a2a.Data); !ok {
		t.Errorf("skill call part %T", req.Message.Parts[0].Content)
	}
}

func TestSendGetAndOwnerErrors(t *testing.T) {
	fv := newFakeVessel(t)
	c := newTestClient(t, fv, "birds")
	r, err := c.Send(t.Context(), TurnRequest{Text: "Which birds hunt fish?"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != string(a2a.TaskStateCompleted) || r.Answer == nil || r.Answer.Markdown != "The **osprey** hunts fish." {
		t.Fatalf("send result %+v", r)
	}
	if r.Finished == nil || r.Finished.Status != "ok" || r.Finished.PromptTokens != 12 {
		t.Errorf("finished %+v", r.Finished)
	}
	g, err := c.Get(t.Context(), r.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if g.Answer == nil || g.Answer.Markdown != r.Answer.Markdown {
		t.Errorf("get lost the answer: %+v", g.Answer)
	}
	_, err = c.Get(t.Context(), "no-such-task")
	if !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("unknown task: %v", err)
	}
}

func TestRejected(t *testing.T) {
	fv := newFakeVessel(t)
	c := newTestClient(t, fv, "birds")
	r, err := c.Ask(t.Context(), TurnRequest{Data: map[string]any{"method": "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Finished == nil || r.Finished.Status != "rejected" || r.Finished.Reason != "the message has no text" || r.State != string(a2a.TaskStateRejected) {
		t.Errorf("finished %+v", r.Finished)
	}
}

func TestCancel(t *testing.T) {
	fv := newFakeVessel(t)
	c := newTestClient(t, fv, "birds")
	s := c.Turn(t.Context(), TurnRequest{Text: "slow"})
	done := make(chan *Result, 1)
	working := make(chan struct{})
	go func() {
		id := <-fv.exec.started
		// Cancel once the stream has seen the task working, so the SDK has
		// registered the running execution the cancel must reach.
		<-working
		r, err := c.Cancel(context.Background(), string(id))
		if err != nil {
			t.Errorf("cancel: %v", err)
		}
		done <- r
	}()
	for ev, err := range s.Events() {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if ts, ok := ev.(TurnStarted); ok && ts.Data != nil {
			close(working)
		}
	}
	r := s.Result()
	if r.Finished == nil || r.Finished.Status != "cancelled" || r.State != string(a2a.TaskStateCanceled) {
		t.Errorf("stream result %+v", r.Finished)
	}
	cr := <-done
	if cr == nil || cr.State != string(a2a.TaskStateCanceled) {
		t.Errorf("cancel result %+v", cr)
	}
}

func TestHTTPErrors(t *testing.T) {
	fv := newFakeVessel(t)
	bad, err := New(fv.srv.URL, "birds", Options{AppKey: "wrong", User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Ask(t.Context(), TurnRequest{Text: "hi"})
	var he *HTTPError
	if !errors.Is(err, ErrUnauthorized) || !errors.As(err, &he) || he.Code != -32001 {
		t.Errorf("bad key: %v", err)
	}
	_, err = bad.Send(t.Context(), TurnRequest{Text: "hi"})
	if !errors.Is(err, ErrUnauthorized) {
		t.Errorf("bad key (send): %v", err)
	}
	_, err = newTestClient(t, fv, "secret").Ask(t.Context(), TurnRequest{Text: "hi"})
	if !errors.Is(err, ErrForbidden) {
		t.Errorf("ungranted: %v", err)
	}
	_, err = newTestClient(t, fv, "down").Get(t.Context(), "x")
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &he) || he.RetryAfter != "5" {
		t.Errorf("not ready: %v", err)
	}
	_, err = newTestClient(t, fv, "birds").Ask(t.Context(), TurnRequest{Text: strings.Repeat("x", 5000)})
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &he) || he.Message != "request too large" {
		t.Errorf("too large: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	for _, o := range []Options{{}, {AppKey: "k"}, {AppKey: "k", Token: "t", User: "u"}} {
		if _, err := New("http://x", "a", o); err == nil {
			t.Errorf("accepted %+v", o)
		}
	}
	if _, err := New("ftp://x", "a", Options{Token: "t"}); err == nil {
		t.Error("accepted ftp URL")
	}
	if _, err := New("http://x", "", Options{Token: "t"}); err == nil {
		t.Error("accepted empty agent")
	}
}

func TestNormalize(t *testing.T) {
	v := Normalize(map[string]any{"a": 1.0, "b": 1.5, "c": []any{2.0, map[string]any{"d": -3.0}}, "e": 1e300})
	m := v.(map[string]any)
	if m["a"] != 1 || m["b"] != 1.5 || m["c"].([]any)[0] != 2 || m["c"].([]any)[1].(map[string]any)["d"] != -3 || m["e"] != 1e300 {
		t.Errorf("normalize %#v", m)
	}
}
