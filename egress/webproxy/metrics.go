package webproxy

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// Metrics are the web proxy's series (docs/operations.md).
type Metrics struct {
	decisions   *prometheus.CounterVec
	connect     prometheus.Histogram
	upstream    prometheus.Histogram
	bytes       *prometheus.CounterVec
	openTunnels prometheus.Gauge
}

// NewMetrics registers the proxy's series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "egress_proxy_decisions_total",
			Help: "Web proxy decisions, by decision (allow, deny) and reason (the policy's reason or failure kind)."}, []string{"decision", "reason"}),
		connect: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "egress_proxy_connect_duration_seconds",
			Help: "Time to connect to a checked upstream address.", Buckets: telemetry.FastBuckets}),
		upstream: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "egress_proxy_upstream_duration_seconds",
			Help: "Time from forwarding a plain-HTTP request to the origin's response headers.", Buckets: telemetry.DurationBuckets}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "egress_proxy_bytes_total",
			Help: "Bytes relayed, by kind (tunnel: both directions of CONNECT tunnels, each direction counted when it ends; http: response bodies of plain-HTTP requests)."}, []string{"kind"}),
		openTunnels: prometheus.NewGauge(prometheus.GaugeOpts{Name: "egress_proxy_open_tunnels",
			Help: "CONNECT tunnels open now."}),
	}
	reg.MustRegister(m.decisions, m.connect, m.upstream, m.bytes, m.openTunnels)
	return m
}
