package suite

import (
	"net/http"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestRestRequest(t *testing.T) {
	for _, c := range []struct {
		method    string
		params    obj
		hm, path  string
		wantsBody bool
	}{
		{"SendMessage", obj{"message": obj{}}, http.MethodPost, "/message:send", true},
		{"SendStreamingMessage", obj{"message": obj{}}, http.MethodPost, "/message:stream", true},
		{"GetTask", obj{"id": "a/b"}, http.MethodGet, "/tasks/a%2Fb", false},
		{"GetTask", obj{"id": "t", "historyLength": 2}, http.MethodGet, "/tasks/t?historyLength=2", false},
		{"ListTasks", obj{"status": "TASK_STATE_WORKING", "pageSize": 100}, http.MethodGet, "/tasks?pageSize=100&status=TASK_STATE_WORKING", false},
		{"CancelTask", obj{"id": "t"}, http.MethodPost, "/tasks/t:cancel", false},
		{"SubscribeToTask", obj{"id": "t"}, http.MethodPost, "/tasks/t:subscribe", false},
	} {
		hm, path, body, err := restRequest(c.method, c.params)
		if err != nil || hm != c.hm || path != c.path || (body != nil) != c.wantsBody {
			t.Errorf("%s: %s %s %s %v", c.method, hm, path, body, err)
		}
	}
	if _, _, _, err := restRequest("tasks/resubscribe", obj{}); err == nil {
		t.Error("a 0.3 method mapped to HTTP+JSON")
	}
}

func TestRestStatusError(t *testing.T) {
	eo, err := restStatusError([]byte(`{"error":{"code":404,"status":"NOT_FOUND","message":"task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`))
	if err != nil || eo["code"] != float64(-32001) || eo["reason"] != "TASK_NOT_FOUND" || eo["httpCode"] != float64(404) {
		t.Fatalf("%v %v", eo, err)
	}
	for _, bad := range []string{`{"error":"plain"}`, `{"error":{"code":404,"message":"x"}}`, `not json`} {
		if _, err := restStatusError([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	e := &env{binding: bindingREST}
	for code, want := range map[int]int{-32001: 404, -32002: 409, -32004: 400, -32602: 400, -32603: 500} {
		if got := e.errorStatus(code); got != want {
			t.Errorf("REST status of %d: %d, want %d", code, got, want)
		}
	}
	if (&env{}).errorStatus(-32001) != 200 {
		t.Error("JSON-RPC errors are not HTTP 200")
	}
}

// TestGRPCRequest: the checks' JSON params become the A2A 1.0 request
// messages, with the tenant set; unknown methods and fields are refused.
func TestGRPCRequest(t *testing.T) {
	m, err := grpcRequest("SendMessage", obj{"message": obj{"messageId": "m1", "role": "ROLE_USER", "contextId": "c",
		"parts": []any{obj{"text": "hi"}, obj{"raw": "aGk=", "mediaType": "application/x"}}},
		"configuration": obj{"acceptedOutputModes": []any{"text/markdown"}}}, "birds")
	if err != nil {
		t.Fatal(err)
	}
	req := m.(*a2apb.SendMessageRequest)
	if req.GetTenant() != "birds" || req.GetMessage().GetRole() != a2apb.Role_ROLE_USER || req.GetMessage().GetParts()[0].GetText() != "hi" ||
		string(req.GetMessage().GetParts()[1].GetRaw()) != "hi" || req.GetConfiguration().GetAcceptedOutputModes()[0] != "text/markdown" {
		t.Fatalf("%v", req)
	}
	m, err = grpcRequest("ListTasks", obj{"status": "TASK_STATE_WORKING", "pageSize": 100, "contextId": "c"}, "birds")
	if err != nil {
		t.Fatal(err)
	}
	if l := m.(*a2apb.ListTasksRequest); l.GetStatus() != a2apb.TaskState_TASK_STATE_WORKING || l.GetPageSize() != 100 || l.GetTenant() != "birds" {
		t.Fatalf("%v", l)
	}
	if _, err := grpcRequest("tasks/resubscribe", obj{}, "birds"); err == nil {
		t.Error("a 0.3 method mapped to gRPC")
	}
	if _, err := grpcRequest("GetTask", obj{"id": "t", "bogus": 1}, "birds"); err == nil {
		t.Error("an unknown field accepted")
	}
}

// TestGRPCStatusError: a status reads as the JSON-RPC-like error of its
// reason; a code that does not go with the reason, or no ErrorInfo, fails.
func TestGRPCStatusError(t *testing.T) {
	withInfo := func(c codes.Code, reason string) error {
		st, _ := status.New(c, "m").WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: "a2a-protocol.org"})
		return st.Err()
	}
	eo, err := grpcStatusError(withInfo(codes.NotFound, "TASK_NOT_FOUND"))
	if err != nil || eo["code"] != float64(-32001) || eo["reason"] != "TASK_NOT_FOUND" {
		t.Fatalf("%v %v", eo, err)
	}
	if _, err := grpcStatusError(withInfo(codes.Internal, "TASK_NOT_FOUND")); err == nil {
		t.Error("a wrong code accepted")
	}
	if _, err := grpcStatusError(status.Error(codes.NotFound, "x")); err == nil {
		t.Error("a status without ErrorInfo accepted")
	}
	if (&env{binding: bindingGRPC}).errorStatus(-32001) != 200 {
		t.Error("gRPC errors are not reported as 200")
	}
}
