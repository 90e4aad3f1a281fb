package server

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

const scope = "github.com/astraldeep/astralvessel-go/sandboxd/internal/server"

// startCallSpan is the span of one call inside sandboxd (nil while tracing
// is off), the child of the gRPC server span that continued the vessel's
// trace (traceparent metadata). It names the task, the agent, the tool and
// the call; never the arguments.
func (s *Server) startCallSpan(ctx context.Context, req *sandboxv1.RunRequest) (context.Context, trace.Span) {
	if !telemetry.TracingOn() {
		return ctx, nil
	}
	tool := s.toolLabel(req.GetTool())
	return telemetry.Tracer(scope).Start(ctx, "sandbox run "+tool, trace.WithAttributes(
		telemetry.AttrTask.String(taskID(ctx)), telemetry.AttrAgent.String(s.cfg.Agent),
		telemetry.AttrTool.String(tool), telemetry.AttrCallID.String(req.GetCallId())))
}

func endCallSpan(span trace.Span, exit *sandboxv1.Exit) {
	if span == nil {
		return
	}
	class := exitClass(exit)
	span.SetAttributes(attribute.String("vessel.exit", class), attribute.Int("process.exit.code", int(exit.GetCode())))
	if st := exit.GetStopped(); st != "" {
		span.SetAttributes(attribute.String("vessel.stopped", st))
	}
	if class == "error" || class == "stopped" {
		span.SetStatus(codes.Error, class)
	}
	span.End()
}
