package webproxy

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

const scope = "github.com/astraldeep/astralvessel-go/egress/webproxy"

// decisionSpan records one decision as a server span, the child of the
// trace context the vessel sent (nothing while tracing is off): method,
// host, port, verdict, reason and the turn's task id; for an allowed
// CONNECT it covers the decision and the dial, not the tunnel's life.
func decisionSpan(d *decision, verdict string, err error) {
	if !telemetry.TracingOn() || d.parent == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String("http.request.method", d.method),
		attribute.String("server.address", safeHostLog(d)), attribute.Int("server.port", int(d.port)),
		attribute.String("vessel.decision", verdict), attribute.String("vessel.reason", d.reason)}
	if d.task != "" {
		attrs = append(attrs, telemetry.AttrTask.String(d.task))
	}
	_, span := telemetry.Tracer(scope).Start(d.parent, "egress "+d.method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(d.began), trace.WithAttributes(attrs...))
	if verdict != "allow" {
		span.SetStatus(codes.Error, d.reason)
	}
	if err != nil {
		span.SetStatus(codes.Error, d.reason)
	}
	span.End()
}
