package main

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLocalStackNoSecretInRefusals plants a distinct secret in each
// refusal path of the running local stack (a refused push config, an
// unknown app key, two Authorization headers, wrong and doubled proxy
// credentials at the egress web proxy, a wrong token at the egress model
// proxy) and greps every answer and every service's log for them. Like
// TestLocalStack it runs only with VESSEL_E2E_LOCAL=1.
func TestLocalStackNoSecretInRefusals(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	dep, _ := filepath.Abs("testdata/deployment.toml")
	info := startUp(t, bin, nil, "--scripted", dep)
	appKey, err := os.ReadFile(info.AppKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(appKey))
	planted := map[string]string{
		"push token": "planted-e2e-push-token-1a2b", "push credentials": "planted-e2e-push-cred-3c4d",
		"app key": "planted-e2e-app-key-5e6f", "second Authorization": "planted-e2e-dup-key-7a8b",
		"proxy token": "planted-e2e-proxy-token-9c0d", "second proxy token": "planted-e2e-proxy-dup-1e2f",
		"model token": "planted-e2e-model-token-3a4b",
	}
	var answers []string
	post := func(hdr http.Header, body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, info.URL+"/agents/"+info.Agents[0], strings.NewReader(body))
		req.Header = hdr
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header, string(b)))
	}
	msg := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}%s}}`
	push := fmt.Sprintf(`,"configuration":{"taskPushNotificationConfig":{"url":"http://127.0.0.1:9/hook","token":%q,"authentication":{"scheme":"Bearer","credentials":%q}}}`,
		planted["push token"], planted["push credentials"])
	post(http.Header{"Authorization": {"Bearer " + key}, "X-Vessel-User": {"audit"}}, fmt.Sprintf(msg, push))
	post(http.Header{"Authorization": {"Bearer " + planted["app key"]}, "X-Vessel-User": {"audit"}}, fmt.Sprintf(msg, ""))
	post(http.Header{"Authorization": {"Bearer " + key, "Bearer " + planted["second Authorization"]}, "X-Vessel-User": {"audit"}}, fmt.Sprintf(msg, ""))

	// The egress's addresses, as the vessel was given them.
	env := vesselEnv(t, info.pid)
	proxy, err := url.Parse(env["VESSEL_EGRESS_PROXY"])
	if err != nil || proxy.Host == "" {
		t.Fatalf("the vessel's VESSEL_EGRESS_PROXY %q", env["VESSEL_EGRESS_PROXY"])
	}
	basic := func(name, tok string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(name+":"+tok))
	}
	for _, auths := range [][]string{
		{basic("vessel", planted["proxy token"])},
		{basic("vessel", planted["proxy token"]), basic("vessel", planted["second proxy token"])},
	} {
		c, err := net.DialTimeout("tcp", proxy.Host, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT docs.example.test:443 HTTP/1.1\r\nHost: docs.example.test:443\r\n")
		for _, a := range auths {
			fmt.Fprintf(c, "Proxy-Authorization: %s\r\n", a)
		}
		fmt.Fprintf(c, "\r\n")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		c.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("the egress opened a tunnel for %d planted credential(s)", len(auths))
		}
		answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header))
	}
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(env["VESSEL_MODEL_BASE_URL"], "/")+"/chat/completions", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+planted["model token"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the egress's model proxy answered a planted token %d", resp.StatusCode)
	}
	answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header, string(b)))

	time.Sleep(time.Second) // the last log lines reach their files
	logs, _ := filepath.Glob(filepath.Join(info.state, "logs", "*"))
	if len(logs) < 3 {
		t.Fatalf("only %d service logs: %v", len(logs), logs)
	}
	texts := map[string]string{}
	for _, f := range append(logs, info.log) {
		c, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(c)
	}
	for i, a := range answers {
		texts["answer "+strconv.Itoa(i)] = a
	}
	// Each refusal was taken and logged: otherwise the grep proves nothing.
	all := strings.Join(func() []string {
		var l []string
		for _, x := range texts {
			l = append(l, x)
		}
		return l
	}(), "\n")
	for _, want := range []string{"push notification", "more than one Authorization header", "duplicate-credentials", `"reason":"unauthenticated"`, "authentication failed"} {
		if !strings.Contains(all, want) {
			t.Errorf("no answer or log says %q", want)
		}
	}
	for where, text := range texts {
		for what, s := range planted {
			if strings.Contains(text, s) {
				t.Errorf("the planted %s is in %s", what, where)
			}
		}
	}
}

// vesselEnv is the environment of the stack's vessel process.
func vesselEnv(t *testing.T, upPID int) map[string]string {
	t.Helper()
	for _, pid := range children(t, upPID) {
		if procName(pid) != "vessel" {
			continue
		}
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		env := map[string]string{}
		for kv := range strings.SplitSeq(string(raw), "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				env[k] = v
			}
		}
		return env
	}
	t.Fatal("no vessel process among the stack's children")
	return nil
}
