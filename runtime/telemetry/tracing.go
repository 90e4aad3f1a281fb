package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// Span attribute keys every service uses for a turn. The owner is never a
// span attribute (traces are often kept longer and shown wider than logs).
const (
	AttrTask    = attribute.Key("vessel.task_id")
	AttrContext = attribute.Key("vessel.context_id")
	AttrAgent   = attribute.Key("vessel.agent")
	AttrTool    = attribute.Key("vessel.tool")
	AttrCallID  = attribute.Key("vessel.call_id")
)

// TraceHeaders are the W3C trace context and baggage headers. The egress
// removes them from everything it sends upstream: the model provider and
// web origins never learn the deployment's trace ids.
var TraceHeaders = []string{"traceparent", "tracestate", "baggage"}

// StripTraceHeaders removes TraceHeaders from h.
func StripTraceHeaders(h http.Header) {
	for _, k := range TraceHeaders {
		h.Del(k)
	}
}

var tracingOn atomic.Bool

// TracingOn reports whether StartTracing turned tracing on in this process.
func TracingOn() bool { return tracingOn.Load() }

// Tracing is a process's tracer provider; Shutdown flushes it.
type Tracing struct {
	tp *sdktrace.TracerProvider
}

// TracingConfig is what StartTracing read from the standard OTEL_*
// variables.
type TracingConfig struct {
	On       bool
	Protocol string // "grpc" or "http/protobuf"
}

// ReadTracingConfig reads the standard variables (getenv is os.Getenv in
// production): tracing is on when OTEL_TRACES_EXPORTER is "otlp", or when
// it is unset and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; OTEL_SDK_DISABLED=true and
// OTEL_TRACES_EXPORTER=none turn it off. Any other exporter or protocol is
// an error.
func ReadTracingConfig(getenv func(string) string) (TracingConfig, error) {
	var c TracingConfig
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return c, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "none":
		return c, nil
	case "otlp":
		c.On = true
	case "":
		c.On = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return c, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp or none", exp)
	}
	if !c.On {
		return c, nil
	}
	p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if p == "" {
		p = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch p {
	case "", "http/protobuf":
		c.Protocol = "http/protobuf"
	case "grpc":
		c.Protocol = "grpc"
	default:
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: want grpc or http/protobuf", p)
	}
	return c, nil
}

// StartTracing sets the process's tracing up from the standard OTEL_*
// variables (ReadTracingConfig). Off, it changes nothing and returns a
// Tracing whose Shutdown does nothing: no span is recorded and no trace
// header is sent. On, it installs an OTLP exporter (endpoint, headers,
// timeout, sampler and batching from the same variables), the W3C trace
// context propagator (not baggage), and a resource named service unless
// OTEL_SERVICE_NAME says otherwise. Export errors are logged as warnings.
func StartTracing(ctx context.Context, service string, log *zap.Logger) (*Tracing, error) {
	c, err := ReadTracingConfig(os.Getenv)
	if err != nil || !c.On {
		return &Tracing{}, err
	}
	var exp sdktrace.SpanExporter
	if c.Protocol == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("trace exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", zap.Error(err)) }))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	tracingOn.Store(true)
	log.Info("tracing on", zap.String("protocol", c.Protocol),
		zap.String("service", res.Set().Encoded(attribute.DefaultEncoder())))
	return &Tracing{tp: tp}, nil
}

// Shutdown sends the spans not yet exported, stops the exporter and turns
// tracing off again (no span, no trace header); a Tracing that is off (or
// nil) does nothing.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.tp == nil {
		return nil
	}
	tracingOn.Store(false)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	otel.SetTracerProvider(tracenoop.NewTracerProvider())
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing shutdown: %w", err)
	}
	return nil
}

// Stop is Shutdown within 5 s, a failure logged as a warning: what a
// service does on its way out.
func (t *Tracing) Stop(log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		log.Warn("tracing", zap.Error(err))
	}
}

// Flush sends the spans ended so far; a Tracing that is off does nothing.
func (t *Tracing) Flush(ctx context.Context) error {
	if t == nil || t.tp == nil {
		return nil
	}
	if err := t.tp.ForceFlush(ctx); err != nil {
		return fmt.Errorf("tracing flush: %w", err)
	}
	return nil
}

// Tracer is the named tracer of the process's current provider (a no-op
// one while tracing is off). Take it when a span starts, not once at
// start-up: a tracer taken before StartTracing keeps the provider it got.
func Tracer(name string) trace.Tracer { return otel.GetTracerProvider().Tracer(name) }

// StartClientSpan is a client span named name of the instrumentation
// scope, with attrs, under ctx; nil (and ctx unchanged) while tracing is
// off.
func StartClientSpan(ctx context.Context, scope, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !TracingOn() {
		return ctx, nil
	}
	return Tracer(scope).Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// EndHTTPSpan ends the client span of one HTTP request (nil does nothing):
// the answer's status code, an error status for a failed request or an
// answer of 400 or more.
func EndHTTPSpan(span trace.Span, resp *http.Response, err error) {
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

// ExtractHTTP is ctx with the trace context h carries as the remote parent
// (nothing while tracing is off).
func ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	if !TracingOn() {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
}

// InjectHTTP writes ctx's trace context into h (nothing while tracing is
// off).
func InjectHTTP(ctx context.Context, h http.Header) {
	if TracingOn() {
		otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// tracedRPC is which gRPC methods get spans: the calls about a turn
// (Run, EndTurn), not the readiness polls (Status, ListTurns), which would
// start a trace of their own every few seconds.
func tracedRPC(info *stats.RPCTagInfo) bool {
	m := info.FullMethodName
	return !strings.HasSuffix(m, "/Status") && !strings.HasSuffix(m, "/ListTurns")
}

// GRPCClientOptions are the dial options that send the trace context to a
// gRPC server (a client span per call about a turn), empty while tracing
// is off.
func GRPCClientOptions() []grpc.DialOption {
	if !TracingOn() {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithFilter(tracedRPC)))}
}

// GRPCServerOptions are the server options that continue a caller's trace
// (a server span per call about a turn), empty while tracing is off.
func GRPCServerOptions() []grpc.ServerOption {
	if !TracingOn() {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithFilter(tracedRPC)))}
}
