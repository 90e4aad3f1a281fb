package modelproxy

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

const scope = "github.com/astraldeep/astralvessel-go/egress/modelproxy"

// startSpan is the server span of one model request, the child of the
// vessel's traceparent: the path and the turn's task id, never a header
// or the body. The headers themselves never go upstream (rewrite).
func startSpan(r *http.Request) (context.Context, trace.Span) {
	ctx := telemetry.ExtractHTTP(r.Context(), r.Header)
	attrs := []attribute.KeyValue{attribute.String("http.request.method", r.Method), attribute.String("url.path", truncate(r.URL.Path, 200))}
	if id := r.Header.Get(telemetry.TaskIDHeader); id != "" {
		attrs = append(attrs, telemetry.AttrTask.String(telemetry.CleanTaskID(id)))
	}
	return telemetry.Tracer(scope).Start(ctx, "egress model "+r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

func endSpan(span trace.Span, status int) {
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 400 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
	span.End()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
