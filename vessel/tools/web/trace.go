package web

import (
	"context"
	"net/http"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/astraldeep/astralvessel-go/deployer/telemetry"
)

// scope names the instrumentation in the spans this package makes.
const scope = "github.com/astraldeep/astralvessel-go/vessel/tools/web"

// startSpan is a client span for one request to u (nil while tracing is
// off). Only the scheme and host are attributes: a path or query may hold
// what the user asked for.
func startSpan(ctx context.Context, name string, u *url.URL) (context.Context, trace.Span) {
	if !telemetry.TracingOn() {
		return ctx, nil
	}
	return telemetry.Tracer(scope).Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("url.scheme", u.Scheme), attribute.String("server.address", u.Hostname())))
}

func endSpan(span trace.Span, resp *http.Response, err error) {
	if span == nil {
		return
	}
	if resp != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	}
	if err != nil {
		span.SetStatus(codes.Error, "request failed")
	}
	span.End()
}
