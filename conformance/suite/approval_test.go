package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// approvalREST is a fake HTTP+JSON interface at /agents/a/v1 that pauses a
// turn on one call and takes one decision on it. A refusal of an unknown
// call comes with refuseStatus (A2A 1.0 says 400 for invalid params).
func approvalREST(t *testing.T, refuseStatus int) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	decided := false
	refuse := func(w http.ResponseWriter, status int, reason, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":%d,"status":"X","message":%q,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":%q,"domain":"a2a-protocol.org"}]}}`, status, msg, reason)
	}
	task := func(state string, parts string) string {
		return fmt.Sprintf(`{"task":{"id":"T","contextId":"C","status":{"state":%q,"message":{"messageId":"m","role":"ROLE_AGENT","parts":[%s]}}}}`, state, parts)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/agents/a/v1/message:send" {
			refuse(w, http.StatusNotFound, "METHOD_NOT_FOUND", "no such path "+r.URL.Path)
			return
		}
		var body struct {
			Message struct {
				TaskID string `json:"taskId"`
				Parts  []struct {
					Data struct {
						Decisions []struct {
							CallID string `json:"call_id"`
						} `json:"decisions"`
					} `json:"data"`
				} `json:"parts"`
			} `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			refuse(w, http.StatusBadRequest, "PARSE_ERROR", err.Error())
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if body.Message.TaskID == "" {
			if r.Header.Get(approveHeader) != "all" {
				_, _ = w.Write([]byte(task(stateCompleted, `{"text":"no tool"}`)))
				return
			}
			_, _ = w.Write([]byte(task(stateInputRequired, `{"data":{"type":"approval.required","approval_id":"ap1","expires_at":"2026-12-02T15:00:00Z","timeout_seconds":300,"on_timeout":"deny","calls":[{"call_id":"c1","tool":"read_file","scope":"tools:read","reason":"all","arguments":"{}","editable":false}]}}`)))
			return
		}
		if r.Header.Get("X-Vessel-User") != "u" {
			refuse(w, http.StatusNotFound, "TASK_NOT_FOUND", "task not found")
			return
		}
		for _, p := range body.Message.Parts {
			for _, d := range p.Data.Decisions {
				if d.CallID != "c1" {
					refuse(w, refuseStatus, "INVALID_PARAMS", "call "+d.CallID+" does not wait on approval ap1")
					return
				}
			}
		}
		if decided {
			refuse(w, http.StatusBadRequest, "INVALID_PARAMS", "approval ap1 was already decided")
			return
		}
		decided = true
		_, _ = w.Write([]byte(task(stateCompleted, `{"text":"done"}`)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runApproval(t *testing.T, url string) map[string]Result {
	t.Helper()
	e := testEnv(url)
	e.cfg.OtherUser = "u-other"
	e.binding, e.restSuffix = bindingREST, "/v1"
	got := map[string]Result{}
	e.out = func(r Result) { got[r.Name] = r }
	checkApproval(context.Background(), e, &reporter{e: e, name: "approval", prefix: bindingREST + " "})
	return got
}

// TestApprovalOverREST: the approval checks speak HTTP+JSON and read its
// refusals (google.rpc.Status with their A2A 1.0 HTTP statuses).
func TestApprovalOverREST(t *testing.T) {
	got := runApproval(t, approvalREST(t, http.StatusBadRequest).URL)
	if len(got) != 5 {
		t.Fatalf("%d results: %v", len(got), got)
	}
	for name, r := range got {
		if !strings.HasPrefix(name, "HTTP+JSON approval: ") || r.Status != "PASS" {
			t.Errorf("%s", r)
		}
	}
}

// TestApprovalRESTWrongStatus: a refusal with the right reason but not
// its HTTP status fails the check.
func TestApprovalRESTWrongStatus(t *testing.T) {
	got := runApproval(t, approvalREST(t, http.StatusConflict).URL)
	r := got["HTTP+JSON approval: an unknown call is refused"]
	if r.Status != "FAIL" || !strings.Contains(r.Detail, "HTTP 409") {
		t.Errorf("%s", r)
	}
}
