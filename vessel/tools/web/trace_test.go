package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
)

// TestFetchCarriesTheTraceToTheEgress: with tracing on, a fetch is a
// client span of the turn's trace (host only, no path or query) and sends
// traceparent to the egress, on a plain-HTTP request and on a CONNECT;
// with tracing off it sends none.
func TestFetchCarriesTheTraceToTheEgress(t *testing.T) {
	const traceID = "9bf92f3577b34da6a3ce929d0e0e4736"
	e := newEnv(t, nil)
	e.mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello")
	})
	if _, err := e.client.Fetch(context.Background(), "http://site.test/page?q=secret-query"); err != nil {
		t.Fatal(err)
	}
	rcv := tracetest.Start(t, "vessel")
	h := http.Header{}
	h.Set("traceparent", "00-"+traceID+"-50f067aa0ba902b7-01")
	ctx := telemetry.ExtractHTTP(context.Background(), h)
	if _, err := e.client.Fetch(ctx, "http://site.test/page?q=secret-query"); err != nil {
		t.Fatal(err)
	}
	_, _ = e.client.Fetch(ctx, "https://metadata.test/private-path") // refused at CONNECT
	e.proxy.mu.Lock()
	got := slices.Clone(e.proxy.traces)
	e.proxy.mu.Unlock()
	if len(got) != 3 || got[0] != "" || !strings.HasPrefix(got[1], "00-"+traceID+"-") || !strings.HasPrefix(got[2], "00-"+traceID+"-") {
		t.Fatalf("traceparent the egress saw: %q (requests %v)", got, e.proxy.requests())
	}
	spans := rcv.Wait(t, func(s []otlpsink.Span) bool { return len(otlpsink.Trace(s, traceID)) >= 2 })
	for _, sp := range otlpsink.Trace(spans, traceID) {
		if sp.Name != "webfetch GET" || sp.Kind != "SPAN_KIND_CLIENT" {
			t.Errorf("span %+v", sp)
		}
		for k, v := range sp.Attributes {
			if strings.Contains(v, "secret-query") || strings.Contains(v, "private-path") {
				t.Errorf("span carries the URL's path or query: %s=%s", k, v)
			}
		}
	}
}
