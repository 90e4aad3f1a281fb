package modelproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
)

// TestTraceContinuedNeverForwarded: the model provider (a loopback server
// recording headers) never receives traceparent, tracestate or baggage,
// with tracing off or on; on, each request is a server span under the
// vessel's traceparent naming the task, exported to a real OTLP receiver,
// a refused one marked as an error.
func TestTraceContinuedNeverForwarded(t *testing.T) {
	const traceID, parent = "7bf92f3577b34da6a3ce929d0e0e4736", "30f067aa0ba902b7"
	var mu sync.Mutex
	var seen []http.Header
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		_, _ = io.WriteString(w, "{}")
	}))
	defer up.Close()
	h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	defer s.Close()
	send := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/chat/completions", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(telemetry.TaskIDHeader, "task-m1")
		req.Header.Set("traceparent", "00-"+traceID+"-"+parent+"-01")
		req.Header.Set("tracestate", "vendor=x")
		req.Header.Set("baggage", "user=alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(testToken); code != http.StatusOK {
		t.Fatalf("tracing off: %d", code)
	}
	rcv := tracetest.Start(t, "egress")
	if code := send(testToken); code != http.StatusOK {
		t.Fatalf("tracing on: %d", code)
	}
	if code := send("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", code)
	}
	mu.Lock()
	for i, hd := range seen {
		for _, k := range []string{"traceparent", "tracestate", "baggage"} {
			if v := hd.Get(k); v != "" {
				t.Errorf("upstream request %d carried %s: %q", i, k, v)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("upstream saw %d requests, want 2", len(seen))
	}
	mu.Unlock()
	spans := rcv.Wait(t, func(s []otlpsink.Span) bool { return len(otlpsink.Trace(s, traceID)) >= 2 })
	var ok, refused int
	for _, sp := range otlpsink.Trace(spans, traceID) {
		if sp.ParentID != parent || sp.Name != "egress model POST" || sp.Attributes["vessel.task_id"] != "task-m1" {
			t.Errorf("span %+v", sp)
		}
		switch sp.Attributes["http.response.status_code"] {
		case "200":
			ok++
		case "401":
			if sp.Status == "STATUS_CODE_ERROR" {
				refused++
			}
		}
	}
	if ok != 1 || refused != 1 {
		t.Errorf("spans: %d ok, %d refused: %+v", ok, refused, spans)
	}
}
