package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLocalStackTwoRoutes starts the local stack with two model routes:
// the default one (the scripted model on loopback, bearer key) and an
// Azure-classic-style route served by a loopback front that insists on
// the deployment path, ?api-version= and the api-key header before passing
// the request on to the scripted model. field-guide uses the default
// route, field-guide-reader the classic one; both answer, each request
// reaches only its own route, and the classic route's key is in the
// egress's environment alone. Runs only with VESSEL_E2E_LOCAL=1.
func TestLocalStackTwoRoutes(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	key1, key2 := marked(t, "sk-default-"), marked(t, "az-classic-")

	modelAddr := startModel(t, bin)

	// The Azure-classic front: refuses anything but its own shape, then
	// hands the request to the scripted model's /v1/chat/completions.
	var served, refused atomic.Int64
	target, _ := url.Parse("http://" + modelAddr)
	pass := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openai/deployments/guide/chat/completions" || r.URL.Query().Get("api-version") != "2024-10-21" ||
			r.Header.Get("Api-Key") != key2 || r.Header.Get("Authorization") != "" || r.Header.Get("X-Vessel-Route") != "" {
			refused.Add(1)
			http.Error(w, `{"error":{"message":"wrong request shape"}}`, http.StatusUnauthorized)
			return
		}
		served.Add(1)
		r.URL.Path, r.URL.RawQuery = "/v1/chat/completions", ""
		r.Header.Del("Api-Key")
		pass.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	dep, env := upstreamDeployment(t, func(text string) string {
		text = strings.Replace(text, "id = \"field-guide-reader\"\n", "id = \"field-guide-reader\"\nmodel_route = \"classic\"\n", 1)
		return text + "\n[models.classic]\nurl = \"" + front.URL + "/openai/deployments/guide?api-version=2024-10-21\"\n" +
			"key = \"env:CLASSIC_MODEL_KEY\"\nauth = \"api-key\"\nallow_http = true\n"
	})
	env = append(env, "VESSEL_UPSTREAM_MODEL_URL=http://"+modelAddr+"/v1", "VESSEL_MODEL_KEY="+key1, "CLASSIC_MODEL_KEY="+key2)
	info := startUp(t, bin, env, dep)

	for _, c := range []struct {
		agent    string
		viaFront bool
	}{{"field-guide", false}, {"field-guide-reader", true}, {"field-guide", false}} {
		before := served.Load()
		msgID := "m-" + c.agent + strconv.FormatInt(before, 10)
		code, b := postJSONRPC(t, info, c.agent, "routes", msgID, "hello from "+c.agent)
		if code != http.StatusOK || !strings.Contains(string(b), "TASK_STATE_COMPLETED") || !strings.Contains(string(b), "hello from "+c.agent) {
			t.Fatalf("%s: HTTP %d %.600s", c.agent, code, b)
		}
		if got := served.Load() > before; got != c.viaFront {
			t.Errorf("%s: went through the classic route: %v, want %v", c.agent, got, c.viaFront)
		}
	}
	t.Logf("classic route served %d requests; stack at %s", served.Load(), info.URL)
	if n := refused.Load(); n != 0 {
		t.Errorf("the classic front refused %d requests of the wrong shape", n)
	}

	holders := map[string]bool{}
	for _, pid := range children(t, info.pid) {
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(environ, []byte(key2)) {
			holders[procName(pid)] = true
		}
	}
	if !holders["egress"] {
		t.Fatal("the egress does not hold the classic route's key; the check proves nothing")
	}
	for name := range holders {
		if name != "egress" {
			t.Errorf("the %s process holds the classic route's key", name)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(info.state, "logs", "*"))
	for _, f := range append(logs, info.log) {
		if c, err := os.ReadFile(f); err == nil && (bytes.Contains(c, []byte(key2)) || bytes.Contains(c, []byte(key1))) {
			t.Errorf("a model key is in %s", f)
		}
	}
}

// marked is a random key with a recognisable prefix.
func marked(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}
