package modelproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestTaskIDLoggedNeverForwarded: the egress logs the task id the vessel
// sends and the upstream (a real loopback server recording headers) never
// sees it; the request series move, and no series names the task.
func TestTaskIDLoggedNeverForwarded(t *testing.T) {
	var mu sync.Mutex
	var seen []http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		_, _ = io.WriteString(w, "{}")
	}))
	defer up.Close()
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true,
		Logger: zap.New(core), Metrics: NewMetrics(reg)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	send := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/chat/completions", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(telemetry.TaskIDHeader, "task-9c1e")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(testToken); code != http.StatusOK {
		t.Fatalf("forwarded: %d", code)
	}
	if code := send("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", code)
	}
	mu.Lock()
	if len(seen) != 1 {
		t.Fatalf("upstream saw %d requests", len(seen))
	}
	for name := range seen[0] {
		if strings.EqualFold(name, telemetry.TaskIDHeader) {
			t.Errorf("the upstream received %s", name)
		}
	}
	mu.Unlock()
	// The line is written once the handler returns, which can be just
	// after the client has read the answer: wait for it.
	var lines []observer.LoggedEntry
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if lines = logs.FilterMessage("model request").All(); len(lines) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %d", len(lines))
	}
	for _, l := range lines {
		if l.ContextMap()["task"] != "task-9c1e" {
			t.Errorf("line without the task: %v", l.ContextMap())
		}
	}
	hs := httptest.NewServer(telemetry.Handler(reg))
	defer hs.Close()
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := string(b)
	for _, want := range []string{
		`egress_model_requests_total{class="2xx",route="default",source="forwarded"} 1`,
		`egress_model_requests_total{class="4xx",route="unknown",source="refused"} 1`,
		`egress_model_upstream_duration_seconds_count{class="2xx"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	if strings.Contains(out, "task-9c1e") {
		t.Error("a series carries the task id")
	}
}
