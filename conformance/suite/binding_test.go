package suite

import (
	"net/http"
	"testing"
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
