package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// loadCase reads a replay file: its "# source:" header lines name where
// the stream comes from and are not sent.
func loadCase(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "providers", name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("# source: ")) {
		t.Fatalf("%s does not name its source", name)
	}
	for bytes.HasPrefix(b, []byte("# ")) {
		b = b[bytes.IndexByte(b, '\n')+1:]
	}
	return b
}

// replay serves a recorded stream on loopback and counts requests.
func replay(t *testing.T, body []byte) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		ct := "text/event-stream"
		if bytes.HasPrefix(body, []byte("{")) {
			ct = "application/json" // a server that ignored stream:true
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// call is one tool call of a case's answer.
type call struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Extra     string `json:"extra,omitempty"` // the call's provider fields
}

// replayCase is one replay file and the exact outcome it must give, as
// testdata/providers/expect.json has it (conformance's
// TestLocalStackProviderReplays reads the same file).
type replayCase struct {
	File       string `json:"file"`
	Text       string `json:"text,omitempty"`
	Reasoning  string `json:"reasoning,omitempty"`
	Calls      []call `json:"calls,omitempty"`
	Incomplete string `json:"incomplete,omitempty"` // the IncompleteError reason, if any
	Error      string `json:"error,omitempty"`      // a substring of the *Error's message, if any
	In         int    `json:"in,omitempty"`
	Out        int    `json:"out,omitempty"`
	Extra      string `json:"extra,omitempty"` // the assistant message's provider fields
	// Provider: the route's provider profile ("": auto).
	Provider string `json:"provider,omitempty"`
	// SendBack: a route's send_back override (nil: none).
	SendBack *[]string `json:"send_back,omitempty"`
}

// expectations is testdata/providers/expect.json: cases, every file of the
// corpus under auto (TestReplayCorpusListed keeps the two in step), and
// profiles, corpus files read under a route's provider profile.
type expectations struct {
	Cases    []replayCase `json:"cases"`
	Profiles []replayCase `json:"profiles"`
}

func loadExpectations(t *testing.T) *expectations {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "providers", "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expectations
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("expect.json: %v", err)
	}
	return &e
}

// TestReplayProviders replays each provider's recorded stream through a
// real HTTP server and checks the exact outcome: the answer, the tool
// calls, the status and reason, the tokens, and what the next request of
// the turn sends back.
func TestReplayProviders(t *testing.T) {
	for _, c := range loadExpectations(t).Cases {
		t.Run(c.File, func(t *testing.T) { runReplay(t, c) })
	}
}

// runReplay replays one case and checks its outcome.
func runReplay(t *testing.T, c replayCase) {
	t.Helper()
	srv, n := replay(t, loadCase(t, c.File))
	var h rec
	resp, err := (&Client{BaseURL: srv.URL, Backoff: 1, Profile: c.profile()}).Complete(context.Background(), req(), &h)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d requests: a provider's answer is never retried", got)
	}
	if h.text.String() != c.Text {
		t.Fatalf("text streamed %q, want %q", h.text.String(), c.Text)
	}
	if h.reasoning.String() != c.Reasoning {
		t.Fatalf("reasoning %q, want %q", h.reasoning.String(), c.Reasoning)
	}
	var me *Error
	var ie *IncompleteError
	switch {
	case c.Error != "":
		if !errors.As(err, &me) || !strings.Contains(me.Message, c.Error) {
			t.Fatalf("err %v, want a model error with %q", err, c.Error)
		}
		if me.Usage.PromptTokens != c.In || me.Usage.CompletionTokens != c.Out {
			t.Fatalf("usage %+v, want %d/%d", me.Usage, c.In, c.Out)
		}
		return
	case c.Incomplete != "":
		if !errors.As(err, &ie) || ie.Reason != c.Incomplete {
			t.Fatalf("err %v, want incomplete %s", err, c.Incomplete)
		}
	case err != nil:
		t.Fatal(err)
	}
	if resp.Usage.PromptTokens != c.In || resp.Usage.CompletionTokens != c.Out {
		t.Fatalf("usage %+v, want %d/%d", resp.Usage, c.In, c.Out)
	}
	if got := resp.Content + resp.Refusal; got != c.Text {
		t.Fatalf("answer %q, want %q", got, c.Text)
	}
	if string(resp.Extra) != c.Extra {
		t.Fatalf("provider fields %s, want %s", resp.Extra, c.Extra)
	}
	var got []call
	for _, tc := range resp.ToolCalls {
		got = append(got, call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments, Extra: string(tc.Extra)})
	}
	if len(got) != len(c.Calls) || len(got) > 0 && !equalCalls(got, c.Calls) {
		t.Fatalf("calls %+v, want %+v", got, c.Calls)
	}
	checkSentBack(t, c, resp)
}

// checkSentBack checks that the next request of the turn sends the provider
// fields back unchanged.
func checkSentBack(t *testing.T, c replayCase, resp *Response) {
	t.Helper()
	// The next request of the turn sends the fields back unchanged.
	next := req()
	next.Messages = append(next.Messages, transcript.Message{Role: "assistant", Content: transcript.Text(resp.Content),
		ToolCalls: resp.ToolCalls, Extra: resp.Extra})
	body, err := encodeRequest(next)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body.bytes(), &sent); err != nil {
		t.Fatalf("next request %s: %v", body.bytes(), err)
	}
	last := string(sent.Messages[len(sent.Messages)-1])
	if c.Extra == "" && strings.Contains(last, `"reasoning`) {
		t.Fatalf("reasoning sent back where the provider refuses it: %s", last)
	}
	for _, want := range append([]string{strings.Trim(c.Extra, "{}")}, extrasOf(c.Calls)...) {
		if !strings.Contains(last, want) {
			t.Fatalf("next request's assistant message %s lacks %s", last, want)
		}
	}
}

// profile is the case's profile: its provider's, with its sendBack
// override; nil for auto.
func (c *replayCase) profile() *routes.Provider {
	if c.Provider == "" && c.SendBack == nil {
		return nil
	}
	p := routes.ProfileOf(c.Provider)
	if c.SendBack != nil {
		p.SendBack, p.CallSendBack, p.Detect = *c.SendBack, *c.SendBack, false
	}
	return p
}

func equalCalls(a, b []call) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func extrasOf(calls []call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, strings.Trim(c.Extra, "{}"))
	}
	return out
}

// TestReplayCorpusListed: every file of the corpus has its expectations in
// expect.json's cases (and profiles name only corpus files), and says
// whether it is a recorded sample, an edited one or constructed.
func TestReplayCorpusListed(t *testing.T) {
	e := loadExpectations(t)
	listed := map[string]bool{}
	for _, c := range e.Cases {
		if listed[c.File] {
			t.Errorf("%s listed twice", c.File)
		}
		listed[c.File] = true
	}
	for _, c := range e.Profiles {
		if !listed[c.File] {
			t.Errorf("profiles name %s, not a case of the corpus", c.File)
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "providers", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name, _ := filepath.Rel(filepath.Join("testdata", "providers"), f)
		name = filepath.ToSlash(name)
		if !listed[name] {
			t.Errorf("%s has no expectations in expect.json's cases", name)
		}
		delete(listed, name)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^# source: (RECORDED|EDITED|CONSTRUCTED) `).Match(b) {
			t.Errorf("%s: the source line does not say RECORDED, EDITED or CONSTRUCTED", name)
		}
	}
	for name := range listed {
		t.Errorf("%s is listed but not in the corpus", name)
	}
}

// TestReplayProfiles replays expect.json's profiles: what a route's
// provider profile (routes.Providers) changes against auto, and what it
// keeps.
func TestReplayProfiles(t *testing.T) {
	for _, c := range loadExpectations(t).Profiles {
		name := c.Provider + "/" + c.File
		if c.SendBack != nil {
			name = c.Provider + "+send_back=" + strings.Join(*c.SendBack, ",") + "/" + c.File
		}
		t.Run(name, func(t *testing.T) { runReplay(t, c) })
	}
}
