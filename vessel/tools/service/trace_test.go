package service

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// TestServiceCallSpan: with tracing on, a service call is a client span
// of the turn's trace naming the tool and the service's host (not the
// arguments, the owner or the service's headers) and the service gets
// traceparent to continue it.
func TestServiceCallSpan(t *testing.T) {
	const traceID = "abf92f3577b34da6a3ce929d0e0e4736"
	var mu sync.Mutex
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		got = r.Header.Get("traceparent")
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rcv := tracetest.Start(t, "vessel")
	tool, err := New(agentWith(srv.URL), lookup, &Client{HTTP: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("traceparent", "00-"+traceID+"-60f067aa0ba902b7-01")
	ctx := telemetry.ExtractHTTP(context.Background(), h)
	if res, err := tool.Run(ctx, turn(), tools.Call{Arguments: `{"id":"secret-id-42"}`}); err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	mu.Lock()
	if !strings.HasPrefix(got, "00-"+traceID+"-") {
		t.Errorf("the service got traceparent %q", got)
	}
	mu.Unlock()
	spans := rcv.Wait(t, func(s []otlpsink.Span) bool { return len(otlpsink.Trace(s, traceID)) >= 1 })
	sp := otlpsink.Trace(spans, traceID)[0]
	if sp.Name != "service POST lookup" || sp.Attributes["vessel.tool"] != "lookup" || sp.Attributes["http.response.status_code"] != "200" {
		t.Errorf("span %+v", sp)
	}
	for k, v := range sp.Attributes {
		if strings.Contains(v, "secret-id-42") || strings.Contains(v, "alice") || strings.Contains(v, "s3cret") {
			t.Errorf("span carries %s=%s", k, v)
		}
	}
}
