package a2aserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
)

const opToken = "operator-token-0123456789abcdef0123"

func opCall(t *testing.T, c *http.Client, method, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// The operator lists the turns running here and cancels one of them; the
// API refuses callers without the operator token.
func TestOperatorTurnsAndCancel(t *testing.T) {
	h := newHarness(t)
	oh, err := h.srv.OperatorHandler(opToken)
	if err != nil {
		t.Fatal(err)
	}
	op := httptest.NewServer(oh)
	defer op.Close()
	if _, err := h.srv.OperatorHandler("short"); err == nil {
		t.Error("a short operator token was accepted")
	}
	a := post(h.httpc, h.url+"/agents/"+h.agentID, sleepSend(1), appHdr(h.keyApp1, "alice"))
	if a.status != 200 {
		t.Fatalf("send: %d %s", a.status, a.body)
	}
	id := taskIDOf(t, a.body)
	waitFor(t, "the turn to run", func() bool { _, _, n := h.sandbox.stats(); return n == 1 })
	for _, tok := range []string{"", "wrong", opToken + "x"} {
		if code, _ := opCall(t, op.Client(), "GET", op.URL+"/v1/operator/turns", tok); code != http.StatusUnauthorized {
			t.Errorf("token %q: %d", tok, code)
		}
		if code, _ := opCall(t, op.Client(), "POST", op.URL+"/v1/operator/turns/"+id+"/cancel", tok); code != http.StatusUnauthorized {
			t.Errorf("cancel with token %q: %d", tok, code)
		}
	}
	code, b := opCall(t, op.Client(), "GET", op.URL+"/v1/operator/turns", opToken)
	var list struct{ Turns []a2aserver.TurnInfo }
	if code != 200 || json.Unmarshal(b, &list) != nil || len(list.Turns) != 1 {
		t.Fatalf("list: %d %s", code, b)
	}
	if tu := list.Turns[0]; tu.Task != id || tu.Agent != h.agentID || tu.Owner != "app1/alice" || tu.State != "working" || tu.Started.IsZero() || tu.Context == "" {
		t.Errorf("turn %+v", tu)
	}
	code, b = opCall(t, op.Client(), "POST", op.URL+"/v1/operator/turns/"+id+"/cancel", opToken)
	if code != 200 || !strings.Contains(string(b), "TASK_STATE_CANCELED") {
		t.Fatalf("cancel: %d %s", code, b)
	}
	waitFor(t, "the list to empty", func() bool { return len(h.srv.Turns()) == 0 })
	waitFor(t, "the turn's admission place", func() bool { n, _, _, _ := h.srv.Admission().Counts(""); return n == 0 })
	g := post(h.httpc, h.url+"/agents/"+h.agentID, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+id+`"}}`, appHdr(h.keyApp1, "alice"))
	if !strings.Contains(string(g.body), "TASK_STATE_CANCELED") {
		t.Errorf("the owner sees %s", g.body)
	}
	if code, _ := opCall(t, op.Client(), "POST", op.URL+"/v1/operator/turns/"+id+"/cancel", opToken); code != http.StatusNotFound {
		t.Errorf("cancel of an ended turn: %d", code)
	}
	if code, b := opCall(t, op.Client(), "GET", op.URL+"/v1/operator/turns", opToken); code != 200 || !strings.Contains(string(b), `"turns":[]`) {
		t.Errorf("empty list: %d %s", code, b)
	}
}
