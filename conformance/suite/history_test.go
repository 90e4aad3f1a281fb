package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStoredTaskHoldsNoHistory runs the check's GetTask through a server
// answering with a stored task, clean or holding what must never be kept.
func TestStoredTaskHoldsNoHistory(t *testing.T) {
	const user = `{"messageId":"m","role":"ROLE_USER","parts":[{"text":"Thanks."}]}`
	const answer = `{"artifactId":"a","name":"answer","parts":[{"text":"ok","mediaType":"text/markdown"}]}`
	task := func(history, artifacts string) string {
		return `{"id":"T","contextId":"C","status":{"state":"TASK_STATE_COMPLETED"},"history":[` + history + `],"artifacts":[` + artifacts + `]}`
	}
	cases := map[string]struct {
		task string
		bad  string // substring of the error, "" for none
	}{
		"clean":             {task(user, answer), ""},
		"transcript part":   {task(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"Thanks."},{"raw":"e30=","mediaType":"application/vnd.astralvessel.transcript+json"}]}`, answer), "other than text"},
		"history as data":   {task(`{"messageId":"m","role":"ROLE_USER","parts":[{"data":{"version":1,"messages":[]}}]}`, answer), "other than text"},
		"assistant message": {task(user+`,{"messageId":"n","role":"ROLE_AGENT","parts":[{"text":"earlier reply"}]}`, answer), "ROLE_AGENT"},
		"transcript artifact": {task(user, answer+`,{"artifactId":"t","name":"transcript","parts":[{"raw":"e30="}]}`),
			`"transcript" artifact`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Method string `json:"method"`
				}
				_ = json.NewDecoder(r.Body).Decode(&req)
				if req.Method != "GetTask" {
					http.Error(w, "unexpected "+req.Method, http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"1","result":%s}`, c.task)
			}))
			defer srv.Close()
			e := testEnv(srv.URL)
			status, m, err := e.rpc(context.Background(), "a", "GetTask", obj{"id": "T"}, e.me, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = storedTaskHoldsNoHistory(status, m)
			if c.bad == "" {
				if err != nil {
					t.Fatalf("clean task refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.bad)
			}
		})
	}
}
