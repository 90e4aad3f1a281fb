package a2aserver

import (
	"context"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
)

// TestRefusedSubmitStartsNoTurn: when the SDK does not take the submitted
// task (the yield returns false), no turn counts as started or active, so
// vessel_active_turns does not drift upwards.
func TestRefusedSubmitStartsNoTurn(t *testing.T) {
	m := NewMetrics(prometheus.NewRegistry())
	e := &executor{log: zap.NewNop(), met: m.forAgent("field-guide", "scripted")}
	ec := &a2asrv.ExecutorContext{TaskID: "t1", ContextID: "c1",
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}
	n := 0
	for range e.Execute(context.Background(), ec) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("%d events before the refusal, want the submitted task", n)
	}
	if got := testutil.ToFloat64(m.activeTurns.WithLabelValues("field-guide")); got != 0 {
		t.Fatalf("vessel_active_turns %v after a refused submit, want 0", got)
	}
	if got := testutil.ToFloat64(m.turnsStarted.WithLabelValues("field-guide")); got != 0 {
		t.Fatalf("turns started %v, want 0", got)
	}
}
