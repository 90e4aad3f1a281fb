package a2aserver

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
)

// scope names the instrumentation in the spans this package makes.
const scope = "github.com/astraldeep/astralvessel-go/vessel/a2aserver"

// startTurnSpan is the span of one stretch of a turn (its start, or its
// resumption after a pause), nil while tracing is off. Its parent is the
// trace context the application sent with the request (traceparent), if
// any. It names the task, the context and the agent; never the owner.
func startTurnSpan(ctx context.Context, ec *a2asrv.ExecutorContext, agent string, resumed bool) (context.Context, trace.Span) {
	if !telemetry.TracingOn() {
		return ctx, nil
	}
	name := "turn"
	if resumed {
		name = "turn resume"
	}
	return telemetry.Tracer(scope).Start(ctx, name, trace.WithAttributes(telemetry.AttrTask.String(string(ec.TaskID)),
		telemetry.AttrContext.String(ec.ContextID), telemetry.AttrAgent.String(agent)))
}

func endTurnSpan(span trace.Span, res *loop.Result) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.String("vessel.status", res.Status), attribute.Int("vessel.steps", res.Steps),
		attribute.Int("gen_ai.usage.input_tokens", res.PromptTokens), attribute.Int("gen_ai.usage.output_tokens", res.CompletionTokens))
	switch res.Status {
	case loop.StatusOK, loop.StatusStepLimit, loop.StatusPaused, loop.StatusCancelled:
	default:
		span.SetStatus(codes.Error, res.Status)
	}
	span.End()
}
