package a2aserver_test

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
)

const (
	appTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	appSpanID  = "00f067aa0ba902b7"
)

func byName(spans []otlpsink.Span, prefix string) []otlpsink.Span {
	var out []otlpsink.Span
	for _, sp := range spans {
		if strings.HasPrefix(sp.Name, prefix) {
			out = append(out, sp)
		}
	}
	return out
}

// TestTurnTrace: with tracing on, a turn is one trace exported over OTLP
// to a real receiver: the turn span is the child of the traceparent the
// application sent and names task, context and agent (not the owner); the
// model calls and the tool call are its children; the sandbox call carries
// the trace on in its traceparent metadata.
func TestTurnTrace(t *testing.T) {
	rcv := tracetest.Start(t, "vessel")
	h := newHarness(t)
	ctx := a2aclient.AttachServiceParams(as(h.keyApp1, "alice"), a2aclient.ServiceParams{
		"Authorization": {"Bearer " + h.keyApp1}, "X-Vessel-User": {"alice"},
		"Traceparent": {"00-" + appTraceID + "-" + appSpanID + "-01"}})
	msg := textMsg("Which birds hunt fish? #script:tool")
	msg.ContextID = "conv-trace"
	evs, err := h.stream(ctx, h.agentID, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task := evs[0].(*a2a.Task)
	spans := rcv.Wait(t, func(s []otlpsink.Span) bool { return len(byName(s, "turn")) > 0 })
	turns := byName(spans, "turn")
	if len(turns) != 1 {
		t.Fatalf("turn spans: %+v", turns)
	}
	turn := turns[0]
	if turn.TraceID != appTraceID || turn.ParentID != appSpanID || turn.Service != "vessel" {
		t.Errorf("turn span %+v: want trace %s, parent %s", turn, appTraceID, appSpanID)
	}
	a := turn.Attributes
	if a["vessel.task_id"] != string(task.ID) || a["vessel.context_id"] != "conv-trace" || a["vessel.agent"] != h.agentID ||
		a["vessel.status"] != "ok" {
		t.Errorf("turn attributes %v", a)
	}
	for _, sp := range spans {
		for k, v := range sp.Attributes {
			if strings.Contains(v, "alice") || strings.Contains(v, h.keyApp1) || strings.Contains(k, "owner") {
				t.Errorf("span %s carries the owner or the key: %s=%s", sp.Name, k, v)
			}
		}
	}
	models := byName(spans, "chat ")
	tools := byName(spans, "execute_tool species")
	if len(models) != 2 || len(tools) != 1 {
		t.Fatalf("model spans %d, tool spans %d; want 2 and 1: %+v", len(models), len(tools), spans)
	}
	for _, sp := range append(models, tools...) {
		if sp.TraceID != appTraceID || sp.ParentID != turn.SpanID {
			t.Errorf("span %s: trace %s parent %s; want the turn's child", sp.Name, sp.TraceID, sp.ParentID)
		}
	}
	if tools[0].Attributes["gen_ai.tool.call.id"] != "c1" {
		t.Errorf("tool span attributes %v", tools[0].Attributes)
	}
	grpcSpans := byName(spans, "astralvessel.sandbox.v1.RunService/Run")
	if len(grpcSpans) != 1 || grpcSpans[0].ParentID != tools[0].SpanID {
		t.Errorf("gRPC client spans %+v, want one under the tool span", grpcSpans)
	}
	h.sandbox.mu.Lock()
	tps := append([]string(nil), h.sandbox.traceparents...)
	h.sandbox.mu.Unlock()
	if len(tps) != 1 || !strings.HasPrefix(tps[0], "00-"+appTraceID+"-") {
		t.Errorf("sandbox traceparent metadata %v", tps)
	}
}

// TestNoTraceWhenOff: with tracing off an application's traceparent goes
// nowhere: the sandbox sees none.
func TestNoTraceWhenOff(t *testing.T) {
	h := newHarness(t)
	ctx := a2aclient.AttachServiceParams(as(h.keyApp1, "alice"), a2aclient.ServiceParams{
		"Authorization": {"Bearer " + h.keyApp1}, "X-Vessel-User": {"alice"},
		"Traceparent": {"00-" + appTraceID + "-" + appSpanID + "-01"}})
	if _, err := h.stream(ctx, h.agentID, &a2a.SendMessageRequest{Message: textMsg("birds #script:tool")}); err != nil {
		t.Fatal(err)
	}
	h.sandbox.mu.Lock()
	defer h.sandbox.mu.Unlock()
	if len(h.sandbox.traceparents) != 0 || len(h.sandbox.tasks) == 0 {
		t.Errorf("tracing off: sandbox saw traceparent %v (task ids %v)", h.sandbox.traceparents, h.sandbox.tasks)
	}
}
