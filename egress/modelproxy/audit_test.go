package modelproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestAuditModelRequests: a forwarded model request writes an Open
// Network Activity event naming the upstream host, a refused one (wrong
// token) a Refuse event with the reason; both carry the task id.
func TestAuditModelRequests(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "{}") }))
	defer up.Close()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	aw, err := audit.Open(path, "egress", "test", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Config{Upstream: up.URL + "/v1", Key: testKey, Token: testToken, AllowHTTP: true, Audit: aw})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	for _, tok := range []string{testToken, "wrong"} {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/chat/completions", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set(telemetry.TaskIDHeader, "task-m1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	s.Close() // waits for the handlers: a forwarded request's event follows its answer
	_ = aw.Close()
	evs, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	// The refusal is written before its answer, the forwarded request's
	// event after: find each by its activity.
	if evs[0].ActivityID == audit.NetworkRefuse {
		evs[0], evs[1] = evs[1], evs[0]
	}
	for i, want := range []int{audit.NetworkOpen, audit.NetworkRefuse} {
		e := evs[i]
		if e.ActivityID != want || e.Metadata.CorrelationUID != "task-m1" || e.DstEndpoint.Hostname != "127.0.0.1" || e.Unmapped["kind"] != "model" {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	b, _ := os.ReadFile(path)
	if evs[1].StatusCode != "bad or missing egress token" || strings.Contains(string(b), testKey) || strings.Contains(string(b), testToken) {
		t.Errorf("the refusal's reason, or a secret: %s", b)
	}
}
