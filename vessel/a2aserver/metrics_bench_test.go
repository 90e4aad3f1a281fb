package a2aserver

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/vessel/loop"
)

// BenchmarkTurnMetrics is what the metrics add to one turn like
// TestBenchTurn's (two model calls, one tool call, three task store
// operations), measured alone because the whole turn's figure moves more
// with the machine's load than this costs (docs/performance.md).
func BenchmarkTurnMetrics(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry())
	am := m.forAgent("field-guide", "scripted")
	ts := &timedStore{h: m.storeDuration}
	res := &loop.Result{Status: loop.StatusOK, Steps: 2, PromptTokens: 120, CompletionTokens: 30,
		Total: 3 * time.Millisecond, FirstToken: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		am.turnStarted()
		am.ModelCall(time.Millisecond, nil)
		am.ToolCall("species", loop.OutcomeOK, time.Millisecond)
		am.ModelCall(time.Millisecond, nil)
		t0 := time.Now()
		ts.observe("create", t0, nil)
		ts.observe("update", t0, nil)
		ts.observe("update", t0, nil)
		am.turnFinished(res.Status, res)
	}
}
