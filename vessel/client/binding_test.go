package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func newBindingClient(t *testing.T, fv *fakeVessel, agent string, b Binding) *Client {
	t.Helper()
	c, err := New(fv.srv.URL, agent, Options{AppKey: testKey, User: "alice", Binding: b, GRPCAddress: fv.grpcAddr})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseBinding(t *testing.T) {
	for in, want := range map[string]Binding{"": BindingJSONRPC, "jsonrpc": BindingJSONRPC, "JSONRPC": BindingJSONRPC,
		"rest": BindingHTTPJSON, "HTTP+JSON": BindingHTTPJSON, "grpc": BindingGRPC, "GRPC": BindingGRPC} {
		if got, err := ParseBinding(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	if _, err := ParseBinding("soap"); err == nil {
		t.Error("soap accepted")
	}
	if _, err := New("http://x", "a", Options{Token: "t", Binding: BindingGRPC}); err == nil || !strings.Contains(err.Error(), "GRPCAddress") {
		t.Errorf("gRPC without an address: %v", err)
	}
	if _, err := New("http://x", "a", Options{Token: "t", Binding: "soap"}); err == nil {
		t.Error("an unknown binding accepted")
	}
}

// TestRESTBindingMatchesJSONRPC: over HTTP+JSON and gRPC a turn gives the
// same events as over JSON-RPC; Send, Get, Cancel work; A2A errors stay A2A
// errors (task not found), and the vessel's refusals are *HTTPError (on
// gRPC, read from the status and its ErrorInfo).
func TestRESTBindingMatchesJSONRPC(t *testing.T) {
	fv := newFakeVessel(t)
	var all [][]string
	for _, b := range []Binding{BindingJSONRPC, BindingHTTPJSON, BindingGRPC} {
		c := newBindingClient(t, fv, "birds", b)
		want := fv.srv.URL + "/agents/birds" + map[Binding]string{BindingHTTPJSON: RESTPath}[b]
		if b == BindingGRPC {
			want = fv.grpcAddr
		}
		if c.Endpoint() != want {
			t.Errorf("%s endpoint %s", b, c.Endpoint())
		}
		s := c.Turn(t.Context(), TurnRequest{Text: "Which birds hunt fish?", History: []Message{UserMessage("hi")}})
		var kinds []string
		for ev, err := range s.Events() {
			if err != nil {
				t.Fatalf("%s stream: %v", b, err)
			}
			kinds = append(kinds, fmt.Sprintf("%T", ev))
		}
		all = append(all, kinds)
		r, err := c.Send(t.Context(), TurnRequest{Text: "Which birds hunt fish?"})
		if err != nil || r.Answer == nil || r.Answer.Markdown != "The **osprey** hunts fish." {
			t.Fatalf("%s send: %v %+v", b, err, r)
		}
		if g, err := c.Get(t.Context(), r.TaskID); err != nil || g.TaskID != r.TaskID {
			t.Fatalf("%s get: %v", b, err)
		}
		if _, err := c.Get(t.Context(), "no-such-task"); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("%s unknown task: %v", b, err)
		}
		if _, err := c.Cancel(t.Context(), r.TaskID); !errors.Is(err, a2a.ErrTaskNotCancelable) {
			t.Errorf("%s cancel a finished task: %v", b, err)
		}
		var he *HTTPError
		bad, err := New(fv.srv.URL, "birds", Options{AppKey: "wrong", User: "alice", Binding: b, GRPCAddress: fv.grpcAddr})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bad.Send(t.Context(), TurnRequest{Text: "hi"}); !errors.Is(err, ErrUnauthorized) {
			t.Errorf("%s bad key: %v", b, err)
		}
		if _, err := newBindingClient(t, fv, "secret", b).Ask(t.Context(), TurnRequest{Text: "hi"}); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s ungranted: %v", b, err)
		}
		_, err = newBindingClient(t, fv, "down", b).Get(t.Context(), "x")
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &he) || (b != BindingGRPC && he.RetryAfter != "5") {
			t.Errorf("%s not ready: %v", b, err)
		}
		if b != BindingJSONRPC && (he.Reason != "AGENT_UNAVAILABLE" || he.Domain != "astralvessel" || he.Code != 0) {
			t.Errorf("REST not ready: %+v", he)
		}
		_, err = newBindingClient(t, fv, "birds", b).Ask(t.Context(), TurnRequest{Text: strings.Repeat("x", 5000)})
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s too large: %v", b, err)
		}
	}
	for i := 1; i < len(all); i++ {
		if !slices.Equal(all[0], all[i]) {
			t.Fatalf("events differ:\nJSON-RPC %v\nbinding %d %v", all[0], i, all[i])
		}
	}
}
