package loop

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// benchModel asks for one tool call, then answers; like model.Client it
// writes the trace context into its request's headers.
type benchModel struct{}

func (benchModel) Complete(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	telemetry.InjectHTTP(ctx, http.Header{})
	if req.Messages[len(req.Messages)-1].Role == "tool" {
		h.Text("Ospreys.")
		return &model.Response{Content: "Ospreys.", Usage: model.Usage{PromptTokens: 100, CompletionTokens: 10}}, nil
	}
	return &model.Response{ToolCalls: []transcript.ToolCall{
		{ID: "c1", Type: "function", Function: transcript.FunctionCall{Name: "species", Arguments: "{}"}},
	}, Usage: model.Usage{PromptTokens: 80, CompletionTokens: 5}}, nil
}

type benchTool struct{}

func (benchTool) Def() model.ToolDef {
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: "species"}}
}
func (benchTool) Scope() string { return "tools:read" }
func (benchTool) Run(context.Context, *tools.Turn, tools.Call) (*tools.Result, error) {
	return &tools.Result{Output: "Osprey"}, nil
}

// BenchmarkTurnTracing is one turn of the loop as the bench turn has it
// (two model calls, one tool call) with the turn span the executor adds,
// tracing off and on (spans batched and exported over OTLP/HTTP to a
// receiver on loopback). The difference is what tracing adds to a turn
// in the vessel's own code (docs/performance.md); the gRPC and HTTP
// instrumentation of the calls themselves comes on top when on.
func BenchmarkTurnTracing(b *testing.B) {
	run := func(b *testing.B) {
		cfg := &Config{Model: benchModel{}, Prompt: func() (string, error) { return "p", nil }, CoalesceDelay: time.Hour}
		in := &Input{Turn: &tools.Turn{ID: "t1"}, Text: "Which birds hunt fish?", Tools: []tools.Tool{benchTool{}}}
		b.ReportAllocs()
		for b.Loop() {
			ctx := context.Background()
			var span trace.Span
			if telemetry.TracingOn() {
				ctx, span = telemetry.Tracer("bench").Start(ctx, "turn")
			}
			if res := Run(ctx, cfg, in, func(Event) bool { return true }); res.Status != StatusOK {
				b.Fatalf("%+v", res)
			}
			if span != nil {
				span.End()
			}
		}
	}
	b.Run("off", run)
	b.Run("on", func(b *testing.B) {
		tracetest.Start(b, "vessel")
		run(b)
	})
}
