package loop

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// scope names the instrumentation in the spans this package makes.
const scope = "github.com/astraldeep/astralvessel-go/vessel/loop"

// GenAI semantic convention keys used on the spans.
const (
	attrModel        = attribute.Key("gen_ai.request.model")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	attrToolName     = attribute.Key("gen_ai.tool.name")
	attrToolCallID   = attribute.Key("gen_ai.tool.call.id")
	attrStep         = attribute.Key("vessel.step")
)

// startModelSpan is the span of one model call (nil while tracing is off).
func startModelSpan(ctx context.Context, modelName string, step int) (context.Context, trace.Span) {
	if !telemetry.TracingOn() {
		return ctx, nil
	}
	return telemetry.Tracer(scope).Start(ctx, "chat "+modelName, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrModel.String(modelName), attrStep.Int(step+1)))
}

func endModelSpan(span trace.Span, resp *model.Response, err error) {
	if span == nil {
		return
	}
	if resp != nil {
		span.SetAttributes(attrInputTokens.Int(resp.Usage.PromptTokens), attrOutputTokens.Int(resp.Usage.CompletionTokens))
	}
	if err != nil {
		span.SetStatus(codes.Error, shortErr(err))
	}
	span.End()
}

// startToolSpan is the span of one tool call (nil while tracing is off).
// The arguments are never an attribute: they may hold what the user wrote.
func startToolSpan(ctx context.Context, name, callID string) (context.Context, trace.Span) {
	if !telemetry.TracingOn() {
		return ctx, nil
	}
	return telemetry.Tracer(scope).Start(ctx, "execute_tool "+name,
		trace.WithAttributes(attrToolName.String(name), attrToolCallID.String(callID)))
}

func endToolSpan(span trace.Span, res *tools.Result, err error) {
	if span == nil {
		return
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, shortErr(err))
	case res != nil && res.IsError:
		span.SetStatus(codes.Error, "the tool reported an error")
	}
	if res != nil && res.ExitCode != nil {
		span.SetAttributes(attribute.Int("process.exit.code", *res.ExitCode))
	}
	span.End()
}
