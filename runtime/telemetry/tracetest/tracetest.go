// Package tracetest turns tracing on in a test process against a real OTLP
// receiver (otlpsink) on loopback, through the same OTEL_* variables an
// operator sets.
package tracetest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
)

// Receiver is a running sink and the process's tracing pointed at it.
type Receiver struct {
	Sink    *otlpsink.Sink
	Server  *otlpsink.Server
	tracing *telemetry.Tracing
}

// Start serves a sink on loopback (gRPC and HTTP), sets the OTEL_*
// variables to export to it over OTLP/HTTP as service, and starts tracing;
// the test's cleanup stops both. Tests using it must not run in parallel.
func Start(t testing.TB, service string) *Receiver {
	t.Helper()
	srv, err := otlpsink.Serve(otlpsink.New(nil), "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for k, v := range Env(srv) {
		t.Setenv(k, v)
	}
	t.Setenv("OTEL_SERVICE_NAME", service)
	tr, err := telemetry.StartTracing(context.Background(), service, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return &Receiver{Sink: srv.Sink, Server: srv, tracing: tr}
}

// Env is the variables that send a process's spans to srv over OTLP/HTTP,
// with a short batch delay.
func Env(srv *otlpsink.Server) map[string]string {
	return map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + srv.HTTPAddr.String(),
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_BSP_SCHEDULE_DELAY":     "100",
	}
}

// Stop sends the spans not yet exported and turns tracing off again.
func (r *Receiver) Stop(t testing.TB) {
	t.Helper()
	if err := r.tracing.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// Flush sends this process's ended spans and returns every span the sink
// holds.
func (r *Receiver) Flush(t testing.TB) []otlpsink.Span {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.tracing.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return r.Sink.Spans()
}

// Wait returns the sink's spans once ok holds, failing the test after 20 s.
func (r *Receiver) Wait(t testing.TB, ok func([]otlpsink.Span) bool) []otlpsink.Span {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	spans, err := r.Sink.Wait(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	return spans
}
