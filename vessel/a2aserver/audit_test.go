package a2aserver_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

// openAudit opens an audit log in a fresh folder, closed when the test ends.
func openAudit(t *testing.T) (string, *audit.Writer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, "vessel", "test", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return path, w
}

// waitAuditEvents reads the audit log at path until it holds want events
// (bounded: 100 tries 20 ms apart) and fails unless it then holds exactly
// want.
func waitAuditEvents(t *testing.T, path string, want int) []*audit.Event {
	t.Helper()
	var got []*audit.Event
	var err error
	for i := 0; ; i++ {
		if got, err = audit.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		if len(got) >= want || i == 100 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != want {
		t.Fatalf("%d events, want %d", len(got), want)
	}
	return got
}

// TestAuditAPIActivity: each A2A call writes one OCSF API Activity event
// to a real file: a streamed turn (Create, its task as correlation_uid and
// resource, the caller as actor), a GetTask on it (Read), a refused key and
// a missing one (Failure, unauthenticated actor, the reason), another
// owner's task (Failure, TASK_NOT_FOUND).
func TestAuditAPIActivity(t *testing.T) {
	path, w := openAudit(t)
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.Audit = w })
	evs, err := h.stream(as(h.keyApp1, "alice"), h.agentID, &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish? #script:tool")})
	if err != nil {
		t.Fatal(err)
	}
	task := evs[0].(*a2a.Task)
	if _, err := h.client(h.agentID).GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: task.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client(h.agentID).GetTask(as(h.keyApp1, "mallory"), &a2a.GetTaskRequest{ID: task.ID}); err == nil {
		t.Fatal("another owner read the task")
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`
	if code, _, _ := h.rawPost("/agents/"+h.agentID, body, map[string]string{"Authorization": "Bearer wrong-key"}); code != http.StatusUnauthorized {
		t.Fatalf("wrong key: %d", code)
	}
	h.rawPost("/agents/"+h.agentID, body, nil)

	// An event is written when its handler returns, which may be just
	// after the client has its answer: wait (bounded) for all five.
	got := waitAuditEvents(t, path, 5)
	for _, e := range got {
		if e.ClassUID != audit.ClassAPIActivity || e.CategoryUID != audit.CategoryApplication {
			t.Errorf("class %d category %d", e.ClassUID, e.CategoryUID)
		}
		if len(e.Resources) == 0 || e.Resources[0].Type != "agent" || e.Resources[0].UID != h.agentID {
			t.Errorf("resources %v", e.Resources)
		}
	}
	var send, read, other, wrong, missing *audit.Event
	for _, e := range got {
		switch {
		case e.API.Operation == "SendStreamingMessage":
			send = e
		case e.API.Operation == "GetTask" && e.Actor.User.Name == "app1/alice":
			read = e
		case e.API.Operation == "GetTask":
			other = e
		case e.API.Response.Error == a2aserver.AuthUnknown:
			wrong = e
		default:
			missing = e
		}
	}
	if send == nil || read == nil || other == nil || wrong == nil || missing == nil {
		t.Fatalf("events: %+v", got)
	}
	checkAuditAPIEvents(t, task.ID, send, read, other, wrong, missing)
}

// checkAuditAPIEvents checks TestAuditAPIActivity's five events: the
// streamed turn (Create, Success, task, caller), alice's GetTask (Read),
// mallory's (Failure, TASK_NOT_FOUND), and the wrong and missing keys
// (Failure, 401, the reason, unauthenticated).
func checkAuditAPIEvents(t *testing.T, task a2a.TaskID, send, read, other, wrong, missing *audit.Event) {
	t.Helper()
	if send.API.Operation != "SendStreamingMessage" || send.ActivityID != audit.APICreate || send.StatusID != audit.StatusSuccess ||
		send.Metadata.CorrelationUID != string(task) || send.Actor.User.Name != "app1/alice" || send.Actor.AppName != "app1" ||
		send.SrcEndpoint.IP == "" || send.TypeUID != 600301 {
		t.Errorf("the turn's event: %+v %+v %+v", send, send.API, send.Actor)
	}
	if read.API.Operation != "GetTask" || read.ActivityID != audit.APIRead || read.Metadata.CorrelationUID != string(task) || read.StatusID != audit.StatusSuccess {
		t.Errorf("GetTask: %+v %+v", read, read.API)
	}
	if other.StatusID != audit.StatusFailure || other.API.Response.Error != "TASK_NOT_FOUND" || other.Actor.User.Name != "app1/mallory" {
		t.Errorf("another owner's GetTask: %+v %+v", other, other.API.Response)
	}
	for _, c := range []struct {
		e      *audit.Event
		reason string
	}{{wrong, a2aserver.AuthUnknown}, {missing, a2aserver.AuthMissing}} {
		if c.e.StatusID != audit.StatusFailure || c.e.SeverityID != audit.SeverityMedium || c.e.API.Response.Code != 401 ||
			c.e.API.Response.Error != c.reason || c.e.Actor.User.Name != "unauthenticated" || c.e.API.Operation != "unknown" {
			t.Errorf("refused %s: %+v %+v", c.reason, c.e, c.e.API.Response)
		}
	}
}

// TestAuditGRPC: gRPC calls write the same API Activity events: a
// streamed turn (Create, its task, the caller, the agent from the tenant),
// another owner's GetTask (Failure, TASK_NOT_FOUND), a wrong key (401,
// the reason).
func TestAuditGRPC(t *testing.T) {
	path, w := openAudit(t)
	h := newHarnessConfig(t, func(c *a2aserver.Config) { selfCards(c); c.Audit = w })
	cl := h.cardClient(h.agentID, a2a.TransportProtocolGRPC)
	var task *a2a.Task
	for ev, err := range cl.SendStreamingMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish? #script:tool")}) {
		if err != nil {
			t.Fatal(err)
		}
		if tk, ok := ev.(*a2a.Task); ok && task == nil {
			task = tk
		}
	}
	if _, err := cl.GetTask(as(h.keyApp1, "mallory"), &a2a.GetTaskRequest{ID: task.ID}); err == nil {
		t.Fatal("another owner read the task")
	}
	if _, err := cl.GetTask(as("wrong-key", "alice"), &a2a.GetTaskRequest{ID: task.ID}); err == nil {
		t.Fatal("a wrong key was served")
	}
	got := waitAuditEvents(t, path, 3)
	var send, other, wrong *audit.Event
	for _, e := range got {
		if len(e.Resources) == 0 || e.Resources[0].UID != h.agentID {
			t.Errorf("resources %v", e.Resources)
		}
		switch {
		case e.API.Operation == "SendStreamingMessage":
			send = e
		case e.API.Operation == "GetTask":
			other = e
		default:
			wrong = e
		}
	}
	if send == nil || other == nil || wrong == nil {
		t.Fatalf("events: %+v", got)
	}
	if send.ActivityID != audit.APICreate || send.StatusID != audit.StatusSuccess || send.Metadata.CorrelationUID != string(task.ID) ||
		send.Actor.User.Name != "app1/alice" || send.SrcEndpoint.IP == "" || send.HTTPRequest.URL.Path != "/lf.a2a.v1.A2AService/SendStreamingMessage" {
		t.Errorf("the turn's event: %+v %+v %+v", send, send.API, send.HTTPRequest)
	}
	if other.StatusID != audit.StatusFailure || other.API.Response.Error != "TASK_NOT_FOUND" || other.API.Response.Code != 404 {
		t.Errorf("another owner's GetTask: %+v", other.API.Response)
	}
	if wrong.StatusID != audit.StatusFailure || wrong.API.Response.Code != 401 || wrong.API.Response.Error != a2aserver.AuthUnknown {
		t.Errorf("wrong key: %+v", wrong.API.Response)
	}
}
