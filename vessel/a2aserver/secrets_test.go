package a2aserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Distinct planted secrets, one per refusal path, so that a leak names its
// path.
const (
	plantPushToken  = "planted-push-token-1a2b3c"
	plantPushCred   = "planted-push-cred-4d5e6f"
	plantURLPass    = "planted-url-pass-7a8b9c"
	plantCreateTok  = "planted-create-token-0d1e2f"
	plantBadKey     = "planted-bad-app-key-3a4b5c"
	plantBadJWT     = "eyJhbGciOiJFUzI1NiJ9.planted-jwt-6d7e8f.c2ln"
	plantDupKey     = "planted-dup-key-9a0b1c"
	plantHookToken  = "planted-hook-token-2d3e4f"
	plantHookCred   = "planted-hook-cred-5a6b7c"
	plantModelKey   = "planted-model-key-8d9e0f"
	plantReasonEcho = "planted-reason-echo" // the webhook's own reason phrase
)

var planted = []string{plantPushToken, plantPushCred, plantURLPass, plantCreateTok, plantBadKey, plantBadJWT,
	plantDupKey, plantHookToken, plantHookCred, plantModelKey}

// TestNoSecretInLogsOrAnswers plants a distinct secret in every refusal
// path the vessel has (a push config refused on SendMessage and on
// CreateTaskPushConfig, with token, credentials and a URL password; an
// unknown app key; a malformed JWT; two Authorization headers; a webhook
// that refuses its token and echoes it in its reason phrase; a model that
// refuses its key and echoes it in its error) and greps every answer and
// every log line of the vessel (its own, the SDK's, the outbox's) for any
// of them.
func TestNoSecretInLogsOrAnswers(t *testing.T) {
	// A webhook that refuses every delivery, echoing the token it got in
	// its status line and its body.
	hookHits := make(chan string, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get(outbox.TokenHeader) + " " + r.Header.Get("Authorization")
		hookHits <- tok
		c, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		body := "refused " + tok
		fmt.Fprintf(bw, "HTTP/1.1 401 %s %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", plantReasonEcho, tok, len(body), body)
		_ = bw.Flush()
	}))
	t.Cleanup(hook.Close)
	// A model that refuses its key, echoing it as providers do.
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Debug-Key", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
	}))
	t.Cleanup(model.Close)

	raw, err := cardsign.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cardsign.ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	so := func(c *a2aserver.Config) {
		c.CardKeys = keys
		c.Outbox = openOutbox(t, c, keys, func(oc *outbox.Config) { oc.Log = c.Logger })
	}
	h := newHarnessConfig(t, so, func(d *settings.Deployment) {
		d.Apps[0].PushURLs = []string{hook.URL + "/hooks/"}
		for i := range d.Agents {
			if d.Agents[i].ID == "reader" {
				d.Agents[i].Manifest.Model.BaseURL = model.URL + "/v1"
				d.Agents[i].Manifest.Model.APIKey = plantModelKey
			}
		}
	})
	var answers []string
	post := func(path, body string, hdr map[string]string) {
		t.Helper()
		st, rh, b := h.rawPost(path, body, hdr)
		answers = append(answers, fmt.Sprint(st, rh, string(b)))
	}
	app1 := map[string]string{"Authorization": "Bearer " + h.keyApp1, "X-Vessel-User": "alice"}
	rpc := "/agents/" + h.agentID

	// 1. Refused push configs on SendMessage: outside the grant, with a
	// URL password, and too long a token (which still must not echo).
	for i, pc := range []string{
		`{"url":"http://127.0.0.1:9/elsewhere","token":"` + plantPushToken + `","authentication":{"scheme":"Bearer","credentials":"` + plantPushCred + `"}}`,
		`{"url":"` + strings.Replace(hook.URL, "http://", "http://u:"+plantURLPass+"@", 1) + `/hooks/x","token":"` + plantPushToken + `"}`,
		`{"url":"` + hook.URL + `/hooks/x","token":"` + plantPushToken + strings.Repeat("x", a2aserver.MaxPushTokenBytes) + `"}`,
	} {
		post(rpc, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"taskPushNotificationConfig":%s}}}`, i, i, pc), app1)
	}
	// 2. Refused push config on CreateTaskPushConfig, on a task of alice's.
	task, err := h.send(as(h.keyApp1, "alice"), textMsg("hello"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.client(h.agentID).CreateTaskPushConfig(as(h.keyApp1, "alice"), &a2a.PushConfig{TaskID: task.ID,
		URL: "http://127.0.0.1:9/elsewhere", Token: plantCreateTok, Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: plantPushCred}})
	if err == nil {
		t.Fatal("a push config outside the grant was accepted")
	}
	answers = append(answers, err.Error())
	// 3. Bad credentials: an unknown app key, a malformed JWT, two
	// Authorization headers.
	msg := `{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	post(rpc, msg, map[string]string{"Authorization": "Bearer " + plantBadKey, "X-Vessel-User": "alice"})
	post(rpc, msg, map[string]string{"Authorization": "Bearer " + plantBadJWT})
	req, _ := http.NewRequest(http.MethodPost, h.url+rpc, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Authorization", "Bearer "+h.keyApp1)
	req.Header.Add("Authorization", "Bearer "+plantDupKey)
	req.Header.Set("X-Vessel-User", "alice")
	resp, err := h.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("two Authorization headers: %d %s", resp.StatusCode, b)
	}
	answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header, string(b)))
	// 4. A webhook that refuses its token (a granted config; the turn runs).
	_, err = h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("push me"),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: hook.URL + "/hooks/t", Token: plantHookToken,
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: plantHookCred}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := <-hookHits
	if !strings.Contains(got, plantHookToken) {
		t.Fatalf("the webhook got %q", got)
	}
	waitFor(t, "the refused delivery logged", func() bool {
		return len(h.logs.FilterMessageSnippet("push delivery").All()) > 0
	})
	// 5. A model that refuses its key.
	post("/agents/reader", msg, map[string]string{"Authorization": "Bearer " + h.keyApp2, "X-Vessel-User": "bob"})

	for _, a := range answers {
		for _, s := range append(planted, plantReasonEcho) {
			if strings.Contains(a, s) {
				t.Errorf("an answer holds %q: %s", s, a)
			}
		}
		if strings.Contains(a, "0xc0") || strings.Contains(a, "&{") {
			t.Errorf("an answer prints a Go value: %s", a)
		}
	}
	lines := 0
	for _, e := range h.logs.All() {
		j, _ := json.Marshal(e.ContextMap())
		line := e.Message + " " + string(j)
		lines++
		for _, s := range planted {
			if strings.Contains(line, s) {
				t.Errorf("a log line holds %q: %s", s, line)
			}
		}
	}
	if lines < 5 {
		t.Fatalf("only %d log lines: the refusals were not logged, the test proves nothing", lines)
	}
	// Each refusal path was taken: the answers name what was refused.
	joined := strings.Join(answers, "\n")
	for _, want := range []string{"push notification config refused", "outside the push_urls", "credentials in the URL", "token is", "more than one Authorization header"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no answer says %q:\n%s", want, joined)
		}
	}
}
