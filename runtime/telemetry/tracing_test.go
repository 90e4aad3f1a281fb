package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/grpc/stats"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestReadTracingConfig(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		on       bool
		protocol string
		err      string
	}{
		{env: nil},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true, protocol: "grpc"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "OTLP", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, on: true, protocol: "grpc"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER "zipkin": want otlp or none`},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL "http/json": want grpc or http/protobuf`},
		// A protocol alone does not turn tracing on.
		{env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "bogus"}},
	} {
		c, err := ReadTracingConfig(envOf(tc.env))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: error %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || c.On != tc.on || c.Protocol != tc.protocol {
			t.Errorf("%v: %+v, %v; want on=%v protocol=%q", tc.env, c, err, tc.on, tc.protocol)
		}
	}
}

// TestStartTracingExports: with the standard variables pointing at a real
// OTLP receiver on loopback, spans arrive over each protocol under the
// configured service name, the propagator sends traceparent and no
// baggage, and an incoming traceparent becomes the parent.
func TestStartTracingExports(t *testing.T) {
	srv, err := otlpsink.Serve(otlpsink.New(nil), "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(proto, func(t *testing.T) {
			endpoint := "http://" + srv.HTTPAddr.String()
			if proto == "grpc" {
				endpoint = "http://" + srv.GRPCAddr.String()
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			t.Setenv("OTEL_SERVICE_NAME", "svc-"+strings.ReplaceAll(proto, "/", "-"))
			tr, err := StartTracing(context.Background(), "default-name", zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			if !TracingOn() {
				t.Fatal("tracing is not on")
			}
			h := http.Header{}
			h.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			h.Set("baggage", "user=secret")
			ctx := ExtractHTTP(context.Background(), h)
			_, span := Tracer("test").Start(ctx, "work-"+proto)
			out := http.Header{}
			InjectHTTP(trace.ContextWithSpan(ctx, span), out)
			span.End()
			if got := out.Get("traceparent"); !strings.HasPrefix(got, "00-0af7651916cd43dd8448eb211c80319c-") {
				t.Errorf("traceparent sent: %q", got)
			}
			if out.Get("baggage") != "" {
				t.Errorf("baggage propagated: %q", out.Get("baggage"))
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			spans, err := srv.Sink.Wait(wctx, func(s []otlpsink.Span) bool {
				for _, sp := range s {
					if sp.Name == "work-"+proto {
						return true
					}
				}
				return false
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range spans {
				if sp.Name != "work-"+proto {
					continue
				}
				if sp.Service != "svc-"+strings.ReplaceAll(proto, "/", "-") || sp.TraceID != "0af7651916cd43dd8448eb211c80319c" || sp.ParentID != "b7ad6b7169203331" {
					t.Errorf("span %+v", sp)
				}
			}
		})
	}
}

func TestTracingOffChangesNothing(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(k, "")
	}
	before := otel.GetTracerProvider()
	tr, err := StartTracing(context.Background(), "x", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != before {
		t.Error("the tracer provider changed")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestStripTraceHeaders(t *testing.T) {
	h := http.Header{}
	for _, k := range []string{"Traceparent", "Tracestate", "Baggage", "X-Other"} {
		h.Set(k, "v")
	}
	StripTraceHeaders(h)
	if len(h) != 1 || h.Get("X-Other") != "v" {
		t.Errorf("after strip: %v", h)
	}
}

func TestSinkRefusesBadRequests(t *testing.T) {
	s := otlpsink.New(nil)
	for _, tc := range []struct {
		method, path, ct, body string
		want                   int
	}{
		{"GET", "/v1/traces", "application/x-protobuf", "", http.StatusNotFound},
		{"POST", "/v1/metrics", "application/x-protobuf", "", http.StatusNotFound},
		{"POST", "/v1/traces", "text/plain", "x", http.StatusUnsupportedMediaType},
		{"POST", "/v1/traces", "application/x-protobuf", "\xff\xff\xff", http.StatusBadRequest},
		{"POST", "/v1/traces", "application/json", "{", http.StatusBadRequest},
		{"POST", "/v1/traces", "application/json", "{}", http.StatusOK},
	} {
		r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		r.Header.Set("Content-Type", tc.ct)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s %s %s: %d, want %d", tc.method, tc.path, tc.ct, w.Code, tc.want)
		}
	}
}

func TestTracedRPC(t *testing.T) {
	for m, want := range map[string]bool{
		"/astralvessel.sandbox.v1.RunService/Run":       true,
		"/astralvessel.sandbox.v1.RunService/EndTurn":   true,
		"/astralvessel.sandbox.v1.RunService/Status":    false,
		"/astralvessel.sandbox.v1.RunService/ListTurns": false,
	} {
		if got := tracedRPC(&stats.RPCTagInfo{FullMethodName: m}); got != want {
			t.Errorf("%s: traced %v, want %v", m, got, want)
		}
	}
}
