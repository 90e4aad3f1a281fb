package a2aserver_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/usage"
)

// TestModelCallsNameTheTurn: a turn's model calls name its task, agent
// and owner to the egress, which holds the token budgets by them.
func TestModelCallsNameTheTurn(t *testing.T) {
	h := newHarness(t)
	res, err := h.client("field-guide").SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hello there")})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("result: %#v", res)
	}
	hdr, _ := h.modelHeaders.Load().(http.Header)
	owner, err := url.PathUnescape(hdr.Get(telemetry.OwnerHeader))
	if err != nil || owner == "" || hdr.Get(telemetry.TaskIDHeader) != string(task.ID) || hdr.Get(telemetry.AgentHeader) != "field-guide" {
		t.Fatalf("model request headers: %v (owner %q, %v)", hdr, owner, err)
	}
	if _, user := usage.SplitOwner(owner); user != "alice" {
		t.Errorf("owner named %q, want the app's user alice", owner)
	}
}
