package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
)

// TestCallContinuesTheVesselsTrace: with tracing on, a call carrying the
// vessel's traceparent metadata is a server span of that trace (otelgrpc)
// with sandboxd's own call span under it, naming task, agent, tool, call
// and exit class, exported over OTLP to a real receiver; never the owner
// or the arguments.
func TestCallContinuesTheVesselsTrace(t *testing.T) {
	const traceID, parent = "5bf92f3577b34da6a3ce929d0e0e4736", "10f067aa0ba902b7"
	rcv := tracetest.Start(t, "sandboxd")
	e := newEnv(t, envOpts{})
	ctx := metadata.AppendToOutgoingContext(context.Background(), telemetry.TaskIDMetadata, "task-tr1",
		"traceparent", "00-"+traceID+"-"+parent+"-01")
	if _, err := e.run(ctx, call{turn: "turn-tr1", owner: "app/owner-z9", tool: "bash", args: `{"command":"echo secret-arg"}`}); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Wait(t, func(s []otlpsink.Span) bool {
		n := 0
		for _, sp := range s {
			if sp.TraceID == traceID {
				n++
			}
		}
		return n >= 2
	})
	var server, run *otlpsink.Span
	for _, sp := range otlpsink.Trace(spans, traceID) {
		switch {
		case sp.Name == "astralvessel.sandbox.v1.RunService/Run":
			server = &sp
		case sp.Name == "sandbox run bash":
			run = &sp
		}
		for k, v := range sp.Attributes {
			if strings.Contains(v, "owner-z9") || strings.Contains(v, "secret-arg") {
				t.Errorf("span %s carries %s=%s", sp.Name, k, v)
			}
		}
	}
	if server == nil || run == nil {
		t.Fatalf("spans of the trace: %+v", otlpsink.Trace(spans, traceID))
	}
	if server.ParentID != parent || server.Kind != "SPAN_KIND_SERVER" || server.Service != "sandboxd" {
		t.Errorf("server span %+v", server)
	}
	a := run.Attributes
	if run.ParentID != server.SpanID || a["vessel.task_id"] != "task-tr1" || a["vessel.tool"] != "bash" || a["vessel.exit"] != "ok" || a["vessel.agent"] == "" {
		t.Errorf("call span %+v", run)
	}
}
