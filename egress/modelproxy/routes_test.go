package modelproxy

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// seen is what a loopback upstream received.
type seen struct {
	path, query string
	header      http.Header
}

// routeUpstream is a real loopback upstream that records each request and
// answers with a small completion reporting usage; a request carrying
// "echo-key" gets a 401 echoing its credentials, as some providers do.
func routeUpstream(t *testing.T) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var got []seen
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, seen{path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone()})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("echo-key") != "" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"bad key `+r.Header.Get("Api-Key")+r.Header.Get("Authorization")+`"}}`)
			return
		}
		_, _ = io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":2}}`)
	}))
	t.Cleanup(up.Close)
	return up, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

func routeReq(t *testing.T, url, route string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set(telemetry.AgentHeader, "alpha")
	if route != "" {
		req.Header.Set(routes.RouteHeader, route)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestRoutes: one egress, four upstreams on loopback. Azure classic gets
// its api-version query and the api-key header; Azure v1 a bearer key of
// its own; a keyless local server no credentials at all; the default route
// keeps its bearer key. No request carries another route's key, the
// caller's credentials or the route header; an unknown route is refused
// before anything is sent.
func TestRoutes(t *testing.T) {
	up, got := routeUpstream(t)
	const azKey, v1Key = "az-KEY-classic-0001", "az-KEY-v1-0002"
	reg := prometheus.NewRegistry()
	met := NewMetrics(reg)
	apath := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(apath, "egress", "test", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true, Metrics: met, Audit: aw,
		Routes: []Route{
			{Name: "azure", Key: azKey, Route: routes.ModelRoute{URL: up.URL + "/openai/deployments/gpt-4o?api-version=2024-10-21",
				KeyEnv: "AZ", Auth: routes.AuthAPIKey, AllowHTTP: true, Headers: map[string]string{"X-Team": "birds"}}},
			{Name: "azv1", Key: v1Key, Route: routes.ModelRoute{URL: up.URL + "/openai/v1/", KeyEnv: "AZV1", AllowHTTP: true}},
			{Name: "local", Route: routes.ModelRoute{URL: up.URL + "/ollama/v1", AllowHTTP: true, Query: map[string]string{"mode": "fast"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()

	for _, tc := range []struct {
		route, path, query string
		want               map[string]string // header: value ("" = absent)
	}{
		{"azure", "/openai/deployments/gpt-4o/chat/completions", "api-version=2024-10-21",
			map[string]string{"Api-Key": azKey, "Authorization": "", "X-Team": "birds"}},
		{"azv1", "/openai/v1/chat/completions", "", map[string]string{"Authorization": "Bearer " + v1Key, "Api-Key": "", "X-Team": ""}},
		{"local", "/ollama/v1/chat/completions", "mode=fast", map[string]string{"Authorization": "", "Api-Key": ""}},
		{"", "/v1/chat/completions", "", map[string]string{"Authorization": "Bearer " + testKey, "Api-Key": ""}},
		{"default", "/v1/chat/completions", "", map[string]string{"Authorization": "Bearer " + testKey}},
	} {
		n := len(got())
		// A caller's own api-key never travels on.
		resp, body := routeReq(t, s.URL+"/v1/chat/completions", tc.route, map[string]string{"Api-Key": "callers-own"})
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"hi"`) {
			t.Fatalf("route %q: %d %s", tc.route, resp.StatusCode, body)
		}
		all := got()
		if len(all) != n+1 {
			t.Fatalf("route %q: %d upstream requests", tc.route, len(all)-n)
		}
		r := all[n]
		if r.path != tc.path || r.query != tc.query {
			t.Errorf("route %q: upstream got %s?%s, want %s?%s", tc.route, r.path, r.query, tc.path, tc.query)
		}
		for k, v := range tc.want {
			if r.header.Get(k) != v {
				t.Errorf("route %q: upstream header %s = %q, want %q", tc.route, k, r.header.Get(k), v)
			}
		}
		for _, k := range []string{routes.RouteHeader, telemetry.AgentHeader} {
			if r.header.Get(k) != "" {
				t.Errorf("route %q: %s forwarded", tc.route, k)
			}
		}
	}

	// The caller's query is kept; the route's api-version wins over one it sends.
	n := len(got())
	if resp, body := routeReq(t, s.URL+"/v1/chat/completions?api-version=1999&x=1", "azure", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if q := got()[n].query; q != "api-version=2024-10-21&x=1" {
		t.Errorf("query %q", q)
	}

	// A key an upstream echoes is scrubbed, whichever route it belongs to.
	resp, body := routeReq(t, s.URL+"/v1/chat/completions?echo-key=1", "azure", nil)
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, azKey) || !strings.Contains(body, "[redacted]") {
		t.Errorf("echoed key: %d %s", resp.StatusCode, body)
	}

	n = len(got())
	resp, body = routeReq(t, s.URL+"/v1/chat/completions", "nowhere", nil)
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != http.StatusBadRequest || e.Error.Code != "unknown_route" ||
		!strings.Contains(e.Error.Message, `route "nowhere"`) || !strings.Contains(e.Error.Message, "azure, azv1, default, local") {
		t.Errorf("unknown route: %d %s", resp.StatusCode, body)
	}
	if len(got()) != n {
		t.Error("an unknown route's request was forwarded")
	}

	// Tokens and requests are counted by route.
	for _, c := range []struct {
		route string
		want  float64
	}{{"azure", 7 * 2}, {"azv1", 7}, {"local", 7}, {"default", 7 * 2}} {
		if v := testutil.ToFloat64(met.tokens.WithLabelValues("alpha", "in", c.route)); v != c.want {
			t.Errorf("tokens in, route %s = %v, want %v", c.route, v, c.want)
		}
	}
	if v := testutil.ToFloat64(met.requests.WithLabelValues("4xx", "refused", "unknown")); v != 1 {
		t.Errorf("unknown-route refusals = %v", v)
	}
	s.Close()
	_ = aw.Close()
	checkRoutesAudit(t, apath, azKey, v1Key, testKey)
}

// checkRoutesAudit reads TestRoutes' audit log: its events count by route
// three to azure, one each to azv1 and local, two to the default and one
// refused as unknown, and none of the keys appears anywhere in the file.
func checkRoutesAudit(t *testing.T, apath string, keys ...string) {
	t.Helper()
	evs, err := audit.ReadFile(apath)
	if err != nil {
		t.Fatal(err)
	}
	routes := map[any]int{}
	for _, ev := range evs {
		routes[ev.Unmapped["route"]]++
	}
	if routes["azure"] != 3 || routes["azv1"] != 1 || routes["local"] != 1 || routes["default"] != 2 || routes["unknown"] != 1 {
		t.Errorf("audit routes %v", routes)
	}
	b, _ := os.ReadFile(apath)
	for _, k := range keys {
		if strings.Contains(string(b), k) {
			t.Errorf("audit holds a key")
		}
	}
}

// TestRoutesRefused: the egress refuses at start what validate refuses
// (the same routes.ResolveRoute), plus a route whose key variable is empty.
func TestRoutesRefused(t *testing.T) {
	for name, c := range map[string]struct {
		r    Route
		want string
	}{
		"no key":        {Route{Name: "az", Route: routes.ModelRoute{URL: "https://a.test/v1", KeyEnv: "AZ", Auth: routes.AuthAPIKey}}, "AZ is empty"},
		"auth header":   {Route{Name: "az", Key: "k", Route: routes.ModelRoute{URL: "https://a.test/v1", KeyEnv: "AZ", Headers: map[string]string{"Authorization": "x"}}}, "headers.Authorization"},
		"hop header":    {Route{Name: "az", Route: routes.ModelRoute{URL: "https://a.test/v1", Headers: map[string]string{"Transfer-Encoding": "x"}}}, "hop-by-hop"},
		"plain http":    {Route{Name: "az", Route: routes.ModelRoute{URL: "http://a.test/v1"}}, "plain HTTP"},
		"reserved name": {Route{Name: "default", Route: routes.ModelRoute{URL: "https://a.test/v1"}}, "upstream_url"},
		"bad auth":      {Route{Name: "az", Key: "k", Route: routes.ModelRoute{URL: "https://a.test/v1", KeyEnv: "AZ", Auth: "basic"}}, "unknown auth"},
	} {
		_, err := New(Config{Upstream: "https://m.test/v1", Token: testToken, Routes: []Route{c.r}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// Azure classic as the default route: query and api-key.
	if _, err := New(Config{Upstream: "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21", Key: "k",
		UpstreamAuth: routes.AuthAPIKey, Token: testToken}); err != nil {
		t.Errorf("azure classic default route: %v", err)
	}
	if _, err := New(Config{Upstream: "https://r.test/v1", UpstreamAuth: routes.AuthAPIKey, Token: testToken}); err == nil {
		t.Error("api-key auth without a key accepted")
	}
}
