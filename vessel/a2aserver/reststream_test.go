package a2aserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

// TestRESTPreStreamErrorStatus (A2A 1.0 §11.6): on HTTP+JSON an error
// known before a stream starts is the HTTP status with a google.rpc.Status
// body, not HTTP 200 and one SSE error frame: a subscription to a finished
// task is 400 UNSUPPORTED_OPERATION, to an unknown task 404, over POST and
// GET; a live stream is still a 200 event stream.
func TestRESTPreStreamErrorStatus(t *testing.T) {
	h := newHarness(t)
	alice := appHdr(h.keyApp1, "alice")
	cl := h.client("field-guide")
	res, err := cl.SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	done := string(res.(*a2a.Task).ID)
	base := "/agents/field-guide" + a2aserver.RESTPath
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for _, c := range []struct {
			id, status, reason string
			code               int
		}{
			{done, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", http.StatusBadRequest},
			{"no-such-task", "NOT_FOUND", "TASK_NOT_FOUND", http.StatusNotFound},
		} {
			req, _ := http.NewRequest(method, h.url+base+"/tasks/"+c.id+":subscribe", nil)
			req.Header.Set("Accept", "text/event-stream")
			for k, v := range alice {
				req.Header.Set(k, v)
			}
			resp, err := h.httpc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.code || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s subscribe %s: %d %s %s", method, c.reason, resp.StatusCode, resp.Header.Get("Content-Type"), body)
				continue
			}
			checkStatusBody(t, method+" "+c.reason, body, c.code, c.status, c.reason, a2a.ProtocolDomain)
		}
	}
	status, hdr, body := h.rawPost(base+"/message:stream",
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice)
	if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(body), "TASK_STATE_COMPLETED") {
		t.Fatalf("a live stream: %d %s %s", status, hdr.Get("Content-Type"), body)
	}
}
