package a2aserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

// bindings are the protocol bindings every agent card declares.
var bindings = []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC}

// cardClient resolves agent's card over HTTP and builds an a2a-go client
// that can speak only binding, from the card's supportedInterfaces.
func (h *harness) cardClient(agent string, binding a2a.TransportProtocol) *a2aclient.Client {
	h.t.Helper()
	card, err := agentcard.NewResolver(h.httpc).Resolve(context.Background(), h.url+"/agents/"+agent)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.cardClientWith(card, binding)
}

// cardClientWith builds an a2a-go client that speaks only binding, from
// card, with interceptors.
func (h *harness) cardClientWith(card *a2a.AgentCard, binding a2a.TransportProtocol, icp ...a2aclient.CallInterceptor) *a2aclient.Client {
	h.t.Helper()
	opts := []a2aclient.FactoryOption{a2aclient.WithDefaultsDisabled(), a2aclient.WithCallInterceptors(icp...)}
	switch binding {
	case a2a.TransportProtocolJSONRPC:
		opts = append(opts, a2aclient.WithJSONRPCTransport(h.httpc))
	case a2a.TransportProtocolHTTPJSON:
		opts = append(opts, a2aclient.WithRESTTransport(h.httpc))
	case a2a.TransportProtocolGRPC:
		opts = append(opts, a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
	default:
		h.t.Fatalf("no client for binding %s", binding)
	}
	cl, err := a2aclient.NewFromCard(context.Background(), card, opts...)
	if err != nil {
		h.t.Fatalf("%s client from the card: %v", binding, err)
	}
	return cl
}

// frameShape is what must match between bindings for one frame: its kind,
// task state, vessel event type and artifact name.
func frameShape(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return "task:" + e.Status.State.String()
	case *a2a.TaskStatusUpdateEvent:
		typ, _ := eventOf(e)["type"].(string)
		return "status:" + e.Status.State.String() + ":" + typ
	case *a2a.TaskArtifactUpdateEvent:
		return fmt.Sprintf("artifact:%s:%v", e.Artifact.Name, e.Append)
	default:
		return fmt.Sprintf("%T", ev)
	}
}

// TestCardDeclaresBindings: the card lists JSON-RPC first, then HTTP+JSON
// under the agent's URL, then gRPC at the vessel's gRPC address with the
// agent id as tenant.
func TestCardDeclaresBindings(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	card, err := agentcard.NewResolver(h.httpc).Resolve(context.Background(), h.url+"/agents/field-guide")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range card.SupportedInterfaces {
		got = append(got, string(i.ProtocolBinding)+" "+i.URL+" "+string(i.ProtocolVersion))
	}
	want := []string{"JSONRPC " + h.url + "/agents/field-guide 1.0", "HTTP+JSON " + h.url + "/agents/field-guide" + a2aserver.RESTPath + " 1.0",
		"GRPC " + h.grpcAddr + " 1.0"}
	if g := card.SupportedInterfaces[len(card.SupportedInterfaces)-1]; g.Tenant != "field-guide" {
		t.Errorf("GRPC interface tenant %q, want the agent id", g.Tenant)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("interfaces %q, want %q", got, want)
	}
}

// TestEveryBindingFromCard drives SendMessage, SendStreamingMessage,
// GetTask, ListTasks, CancelTask and SubscribeToTask with a2a-go's client
// over each declared binding, and checks that a streamed turn has the same
// frames, in the same order, on each.
func TestEveryBindingFromCard(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	var shapes [][]string
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			h.t = t
			cl := h.cardClient("field-guide", b)
			alice := as(h.keyApp1, "alice")

			res, err := cl.SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("hi " + string(b))})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("SendMessage: %#v", res)
			}

			var evs []a2a.Event
			for ev, err := range cl.SendStreamingMessage(alice, &a2a.SendMessageRequest{Message: textMsg("Which birds hunt fish? #script:tool")}) {
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, ev)
			}
			var shape []string
			for _, ev := range evs {
				shape = append(shape, frameShape(ev))
			}
			shapes = append(shapes, shape)
			if state, data := lastEvent(t, evs); state != a2a.TaskStateCompleted || data["status"] != "ok" {
				t.Fatalf("stream final: %s %v", state, data)
			}

			got, err := cl.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("GetTask: %v %#v", err, got)
			}
			list, err := cl.ListTasks(alice, &a2a.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(list.Tasks, func(x *a2a.Task) bool { return x.ID == task.ID }) {
				t.Fatalf("ListTasks lacks %s: %d tasks", task.ID, len(list.Tasks))
			}
			if other, err := cl.ListTasks(as(h.keyApp1, "bob"), &a2a.ListTasksRequest{}); err != nil || len(other.Tasks) != 0 {
				t.Fatalf("bob lists %v %v", other, err)
			}

			// SubscribeToTask follows a running turn to its end.
			id := firstTaskID(t, cl, alice, "#script:slowtext")
			var last a2a.Event
			n := 0
			for ev, err := range cl.SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: id}) {
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					if _, ok := ev.(*a2a.Task); !ok {
						t.Fatalf("first subscribed frame %T", ev)
					}
				}
				n++
				last = ev
			}
			if state, _ := lastEvent(t, []a2a.Event{last}); state != a2a.TaskStateCompleted {
				t.Fatalf("subscribed final: %s", state)
			}

			// CancelTask ends a running turn.
			id = firstTaskID(t, cl, alice, "#script:slowtext")
			if _, err := cl.CancelTask(as(h.keyApp1, "bob"), &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("bob cancels: %v", err)
			}
			ct, err := cl.CancelTask(alice, &a2a.CancelTaskRequest{ID: id})
			if err != nil || ct.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("CancelTask: %v %#v", err, ct)
			}
			if _, err := cl.CancelTask(alice, &a2a.CancelTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Fatalf("cancel again: %v", err)
			}
		})
	}
	for i := 1; i < len(shapes); i++ {
		if !slices.Equal(shapes[0], shapes[i]) {
			t.Fatalf("frames differ:\n%s %q\n%s %q", bindings[0], shapes[0], bindings[i], shapes[i])
		}
	}
}

// firstTaskID starts a streamed turn and returns its task id once the
// first frame arrived, leaving the turn running.
func firstTaskID(t *testing.T, cl *a2aclient.Client, ctx context.Context, text string) a2a.TaskID {
	t.Helper()
	for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMsg(text)}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			return task.ID
		}
	}
	t.Fatal("no task frame")
	return ""
}

// TestRESTRefusalsMatchJSONRPC: every refusal the vessel makes before the
// SDK (authentication, grants, readiness) has the same HTTP status on both
// bindings; on HTTP+JSON the body is a google.rpc.Status with an ErrorInfo,
// and a2a-go's client reads it as the matching A2A error.
func TestRESTRefusalsMatchJSONRPC(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	cases := []struct {
		name, agent       string
		hdr               map[string]string
		status            int
		code, reason, dom string
		clientErr         error
	}{
		{"no key", "field-guide", nil, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", a2a.ProtocolDomain, a2a.ErrUnauthenticated},
		{"bad key", "field-guide", appHdr("wrong", "alice"), 401, "UNAUTHENTICATED", "UNAUTHENTICATED", a2a.ProtocolDomain, a2a.ErrUnauthenticated},
		{"no user", "field-guide", map[string]string{"Authorization": "Bearer " + h.keyApp1}, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", a2a.ProtocolDomain, a2a.ErrUnauthenticated},
		{"ungranted agent", "reader", appHdr(h.keyApp1, "alice"), 403, "PERMISSION_DENIED", "UNAUTHORIZED", a2a.ProtocolDomain, a2a.ErrUnauthorized},
		{"sandbox down", "broken", appHdr(h.keyApp2, "alice"), 503, "UNAVAILABLE", "AGENT_UNAVAILABLE", a2aserver.ErrorDomain, nil},
	}
	restSend := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, c := range cases {
		rpcStatus, _, _ := h.rawPost("/agents/"+c.agent, sendBody, c.hdr)
		status, hdr, body := h.rawPost("/agents/"+c.agent+a2aserver.RESTPath+"/message:send", restSend, c.hdr)
		if status != c.status || rpcStatus != c.status {
			t.Errorf("%s: REST %d, JSON-RPC %d, want %d", c.name, status, rpcStatus, c.status)
		}
		checkStatusBody(t, c.name, body, c.status, c.code, c.reason, c.dom)
		if c.status == 503 && hdr.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", c.name)
		}
		if c.status == 401 && hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate", c.name)
		}
		if c.clientErr == nil {
			continue
		}
		ctx := context.Background()
		if c.hdr != nil {
			params := a2aclient.ServiceParams{}
			for k, v := range c.hdr {
				params[k] = []string{v}
			}
			ctx = a2aclient.AttachServiceParams(ctx, params)
		}
		if _, err := h.cardClient(c.agent, a2a.TransportProtocolHTTPJSON).SendMessage(ctx, &a2a.SendMessageRequest{Message: textMsg("hi")}); !errors.Is(err, c.clientErr) {
			t.Errorf("%s: client error %v, want %v", c.name, err, c.clientErr)
		}
	}
	// Unknown agent.
	status, _, body := h.rawPost("/agents/nobody"+a2aserver.RESTPath+"/message:send", restSend, appHdr(h.keyApp1, "alice"))
	if status != 404 {
		t.Errorf("unknown agent: %d %s", status, body)
	}
	checkStatusBody(t, "unknown agent", body, 404, "NOT_FOUND", "AGENT_NOT_FOUND", a2aserver.ErrorDomain)
	// Errors of the A2A layer come from the SDK with their HTTP status.
	alice := appHdr(h.keyApp1, "alice")
	status, _, body = h.get("/agents/field-guide"+a2aserver.RESTPath+"/tasks/no-such-task", alice)
	if status != 404 {
		t.Errorf("unknown task: %d %s", status, body)
	}
	checkStatusBody(t, "unknown task", body, 404, "NOT_FOUND", "TASK_NOT_FOUND", a2a.ProtocolDomain)
	v03 := appHdr(h.keyApp1, "alice")
	v03["A2A-Version"] = "0.3"
	status, _, body = h.rawPost("/agents/field-guide"+a2aserver.RESTPath+"/message:send", restSend, v03)
	checkStatusBody(t, "version 0.3", body, status, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", a2a.ProtocolDomain)
	if status != 400 {
		t.Errorf("version 0.3: %d %s", status, body)
	}
	status, _, body = h.rawPost("/agents/field-guide"+a2aserver.RESTPath+"/message:send?A2A-Version=0.3", restSend, alice)
	if status != 400 || !strings.Contains(string(body), "VERSION_NOT_SUPPORTED") {
		t.Errorf("version 0.3 as a query parameter: %d %s", status, body)
	}
	status, _, body = h.rawPost("/agents/field-guide"+a2aserver.RESTPath+"/message:send", `{"message":`, alice)
	checkStatusBody(t, "malformed", body, status, "INVALID_ARGUMENT", "PARSE_ERROR", a2a.ProtocolDomain)
	// Another owner's task is not found on REST either.
	cl := h.cardClient("field-guide", a2a.TransportProtocolHTTPJSON)
	res, err := cl.SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("mine")})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	if _, err := cl.GetTask(as(h.keyApp1, "bob"), &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob reads alice's task: %v", err)
	}
	// A finished task is not cancelable: 409 Conflict, FAILED_PRECONDITION.
	status, _, body = h.rawPost("/agents/field-guide"+a2aserver.RESTPath+"/tasks/"+string(id)+":cancel", ``, alice)
	if status != http.StatusConflict {
		t.Errorf("cancel a finished task: %d %s", status, body)
	}
	checkStatusBody(t, "not cancelable", body, 409, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", a2a.ProtocolDomain)
	for _, err := range cl.SubscribeToTask(as(h.keyApp1, "alice"), &a2a.SubscribeToTaskRequest{ID: id}) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("subscribe to a finished task: %v", err)
		}
		break
	}
}

// checkStatusBody checks a google.rpc.Status body with one ErrorInfo.
func checkStatusBody(t *testing.T, name string, body []byte, status int, code, reason, domain string) {
	t.Helper()
	var v struct {
		Error struct {
			Code    int
			Status  string
			Message string
			Details []struct {
				Type   string `json:"@type"`
				Reason string
				Domain string
			}
		}
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: %v: %s", name, err, body)
		return
	}
	e := v.Error
	i := slices.IndexFunc(e.Details, func(d struct {
		Type   string `json:"@type"`
		Reason string
		Domain string
	}) bool {
		return d.Type == "type.googleapis.com/google.rpc.ErrorInfo"
	})
	if e.Code != status || e.Status != code || e.Message == "" || i < 0 || e.Details[i].Reason != reason || e.Details[i].Domain != domain {
		t.Errorf("%s: %s", name, body)
	}
}

// TestRESTBodyTimeout: a REST caller that holds its body open gets 408,
// as on JSON-RPC, as a google.rpc.Status.
func TestRESTBodyTimeout(t *testing.T) {
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.BodyTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /agents/field-guide%s/message:send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Vessel-User: alice\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"message\":", a2aserver.RESTPath, h.keyApp1)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	checkStatusBody(t, "408", b, 408, "DEADLINE_EXCEEDED", "REQUEST_BODY_TIMEOUT", a2aserver.ErrorDomain)
}

// TestRESTBodyLimit: HTTP+JSON bodies have JSON-RPC's limit and 413.
func TestRESTBodyLimit(t *testing.T) {
	h := newHarness(t)
	pre, post := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"`, `"}]}}`
	big := pre + strings.Repeat("a", a2aserver.MaxBodyBytes) + post
	status, _, body := h.rawPost("/agents/field-guide"+a2aserver.RESTPath+"/message:send", big, appHdr(h.keyApp1, "alice"))
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("413: %d %s", status, body)
	}
	checkStatusBody(t, "413", body, 413, "RESOURCE_EXHAUSTED", "REQUEST_TOO_LARGE", a2aserver.ErrorDomain)
	exact := pre + strings.Repeat("a", a2aserver.MaxBodyBytes-len(pre)-len(post)) + post
	if status, _, body := h.rawPost("/agents/field-guide"+a2aserver.RESTPath+"/message:send", exact, appHdr(h.keyApp1, "alice")); status != 200 || !strings.Contains(string(body), `{"task":`) {
		// Served (the turn itself refuses so long a text).
		t.Fatalf("body of exactly the limit: %d %.300s", status, body)
	}
}
