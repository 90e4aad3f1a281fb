package modelproxy

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// Metrics are the model passthrough's series (docs/operations.md).
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	tokens   *prometheus.CounterVec
	refusals *prometheus.CounterVec
	cuts     *prometheus.CounterVec
}

// NewMetrics registers the passthrough's series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "egress_model_requests_total",
			Help: "Model passthrough requests, by answer class (2xx, 4xx, 5xx) and whether it was forwarded (forwarded: sent upstream, an unreachable upstream included; refused: answered by the egress without forwarding) and route (a configured route's name, unknown before one is known)."}, []string{"class", "source", "route"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "egress_model_upstream_duration_seconds",
			Help:    "Time of a forwarded model request, from its arrival to the end of the upstream's answer, by answer class.",
			Buckets: telemetry.DurationBuckets}, []string{"class"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "egress_model_tokens_total",
			Help: "Tokens the upstream reported on forwarded model answers, by the agent the vessel named (X-Vessel-Agent; unknown, invalid or other past the bound) and direction (in: prompt, out: completion) and route."}, []string{"agent", "direction", "route"}),
	}
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "egress_budget_refusals_total",
		Help: "Model requests refused before forwarding because a token budget ([budgets]) was spent, by the scope whose ceiling was reached (turn, owner, agent)."}, []string{"scope"})
	m.cuts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "egress_budget_cuts_total",
		Help: "Streamed model answers cut because the usage they reported went past a token budget ([budgets]), by scope (turn, owner, agent)."}, []string{"scope"})
	for _, sc := range []string{ScopeTurn, ScopeOwner, ScopeAgent} {
		m.refusals.WithLabelValues(sc)
		m.cuts.WithLabelValues(sc)
	}
	reg.MustRegister(m.requests, m.duration, m.tokens, m.refusals, m.cuts)
	return m
}

func statusClass(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code/100) + "xx"
}
