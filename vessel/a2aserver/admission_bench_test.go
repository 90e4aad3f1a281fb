package a2aserver

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// BenchmarkAdmitTurn is what [limits] add to one streamed turn: the rate
// and in-flight check, the stream and turn caps, the executor's claim and
// release, and the request's end (docs/performance.md, "Admission").
func BenchmarkAdmitTurn(b *testing.B) {
	s := &Server{cfg: Config{Metrics: NewMetrics(prometheus.NewRegistry())}, log: zap.NewNop(),
		adm: admission.New(settings.Limits{RequestsPerSecondPerApp: 1e9, RequestBurstPerApp: 1_000_000}, nil)}
	p := &auth.Principal{Owner: "app/alice", Kind: auth.KindApp, AppID: "app"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		endReq, err := s.AdmitRequest(p, "agent")
		if err != nil {
			b.Fatal(err)
		}
		tctx, endMethod, err := s.AdmitMethod(ctx, p, "agent", "SendStreamingMessage")
		if err != nil {
			b.Fatal(err)
		}
		held := ticketFrom(tctx).Claim()
		held.Release()
		endMethod()
		endReq()
	}
}

// BenchmarkAdmitRefused is the cost of one refused request of a flood.
func BenchmarkAdmitRefused(b *testing.B) {
	s := &Server{cfg: Config{Metrics: NewMetrics(prometheus.NewRegistry())}, log: zap.NewNop(),
		adm: admission.New(settings.Limits{MaxTurnsPerOwner: 1, RequestsPerSecondPerApp: 1e9, RequestBurstPerApp: 1_000_000}, nil)}
	p := &auth.Principal{Owner: "app/alice", Kind: auth.KindApp, AppID: "app"}
	_, hold, err := s.AdmitMethod(context.Background(), p, "agent", "SendMessage")
	if err != nil {
		b.Fatal(err)
	}
	defer hold()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.AdmitMethod(context.Background(), p, "agent", "SendMessage"); err == nil {
			b.Fatal("admitted over the cap")
		}
	}
}
