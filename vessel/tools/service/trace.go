package service

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
const scope = "github.com/astraldeep/astralvessel-go/vessel/tools/service"

// startSpan is the client span of one service call (nil while tracing is
// off): the tool, the service's host and the answer's status; never the
// arguments or the headers.
func startSpan(ctx context.Context, tool string, u *url.URL) (context.Context, trace.Span) {
	if !telemetry.TracingOn() {
		return ctx, nil
	}
	return telemetry.Tracer(scope).Start(ctx, "service POST "+tool, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(telemetry.AttrTool.String(tool), attribute.String("server.address", u.Hostname())))
}

func endSpan(span trace.Span, resp *http.Response, err error) {
	if span == nil {
		return
	}
	if resp != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
		if resp.StatusCode >= 400 {
			span.SetStatus(codes.Error, resp.Status)
		}
	}
	if err != nil {
		span.SetStatus(codes.Error, "request failed")
	}
	span.End()
}
