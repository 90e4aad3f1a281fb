// Package telemetry is the logging and metrics set-up the vessel, sandboxd
// and the egress share: one zap logger per process with a settable level,
// log/slog bridged into it, one Prometheus registry served on a listener of
// its own, and the names under which a turn's task id travels between the
// services (see docs/operations.md).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// TaskIDHeader is the HTTP header carrying a turn's task id from the
// vessel to the egress (model calls and web tools). The egress logs it and
// never sends it upstream.
const TaskIDHeader = "X-Vessel-Task-Id"

// AgentHeader is the HTTP header naming the agent on the vessel's model
// calls, so the egress can count tokens by agent. Like TaskIDHeader it is
// for the egress only and never sent upstream.
const AgentHeader = "X-Vessel-Agent"

// OwnerHeader names the task owner on the vessel's model calls
// (percent-encoded, url.PathEscape), so the egress can hold the owner's
// daily token budget. Like TaskIDHeader it is for the egress only and
// never sent upstream.
const OwnerHeader = "X-Vessel-Owner"

// TaskIDMetadata is the gRPC metadata key carrying a turn's task id from
// the vessel to sandboxd.
const TaskIDMetadata = "x-vessel-task-id"

// MaxTaskIDLen bounds a task id taken from a header or metadata before it
// is logged; a longer value is cut.
const MaxTaskIDLen = 128

// Log field names every service uses for a turn.
const (
	FieldTask    = "task"
	FieldContext = "context"
	FieldAgent   = "agent"
	FieldOwner   = "owner"
)

// CleanTaskID makes a task id received from another process safe to log:
// printable ASCII only, at most MaxTaskIDLen bytes. An id with any other
// byte is replaced by "invalid".
func CleanTaskID(s string) string {
	if len(s) > MaxTaskIDLen {
		s = s[:MaxTaskIDLen]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return "invalid"
		}
	}
	return s
}

// ParseLevel reads a level name: debug, info, warn, error (case-insensitive);
// empty means info.
func ParseLevel(s string) (zapcore.Level, error) {
	if strings.TrimSpace(s) == "" {
		return zapcore.InfoLevel, nil
	}
	l, err := zapcore.ParseLevel(strings.ToLower(strings.TrimSpace(s)))
	if err != nil || l > zapcore.ErrorLevel {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// NewLogger builds the process's JSON logger on stderr at level (see
// ParseLevel), with ISO 8601 times, and makes slog.Default write through
// it, so libraries logging with log/slog (the task store, a2a-go) end up
// in the same stream with the same level. The returned level may be
// changed later (a flag read after the logger was needed).
func NewLogger(level string) (*zap.Logger, zap.AtomicLevel, error) {
	l, err := ParseLevel(level)
	if err != nil {
		return nil, zap.AtomicLevel{}, err
	}
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(l)
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	log, err := cfg.Build()
	if err != nil {
		return nil, zap.AtomicLevel{}, fmt.Errorf("logger: %w", err)
	}
	slog.SetDefault(Slog(log))
	return log, cfg.Level, nil
}

// Slog is a log/slog logger writing through log's core.
func Slog(log *zap.Logger) *slog.Logger {
	return slog.New(zapslog.NewHandler(log.Core(), zapslog.WithCaller(false)))
}

// NewRegistry is a process's one metrics registry, with the Go runtime and
// process collectors already in it.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg in the Prometheus text format.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

// MetricsServer serves /metrics on a listener of its own.
type MetricsServer struct {
	ln  net.Listener
	srv *http.Server
	mux *http.ServeMux
}

// Handle serves h at pattern on the metrics listener beside /metrics (the
// vessel's operator API); it may be called while serving.
func (m *MetricsServer) Handle(pattern string, h http.Handler) { m.mux.Handle(pattern, h) }

// ServeMetrics listens on addr and serves reg at /metrics until Close. An
// empty addr serves nothing and returns nil, nil: metrics are off unless the
// operator names an address.
func ServeMetrics(addr string, reg *prometheus.Registry, log *zap.Logger) (*MetricsServer, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(reg))
	m := &MetricsServer{ln: ln, mux: mux, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}}
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics listener stopped", zap.Error(err))
		}
	}()
	log.Info("metrics listening", zap.String("addr", ln.Addr().String()))
	return m, nil
}

// Addr is the address the metrics are served on.
func (m *MetricsServer) Addr() net.Addr { return m.ln.Addr() }

// Close stops serving; a nil server is fine.
func (m *MetricsServer) Close() error {
	if m == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("metrics listener: %w", err)
	}
	return nil
}

// DurationBuckets are the histogram buckets (seconds) for turn, call and
// upstream durations: 5 ms to about 10 minutes.
var DurationBuckets = prometheus.ExponentialBuckets(0.005, 2.5, 14)

// FastBuckets are the buckets (seconds) for short operations such as a
// task store write: 0.1 ms to about 10 s.
var FastBuckets = prometheus.ExponentialBuckets(0.0001, 3, 11)

type taskKey struct{}

// WithTaskID is ctx carrying a turn's task id, for the clients that send it
// on (TaskIDHeader, TaskIDMetadata).
func WithTaskID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, taskKey{}, id)
}

type ownerKey struct{}

// WithOwner returns ctx carrying a turn's task owner, for the model
// client to name on its requests (OwnerHeader).
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerFrom is the owner WithOwner put in ctx, or "".
func OwnerFrom(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}

// TaskIDFrom is the task id WithTaskID put in ctx, or "".
func TaskIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(taskKey{}).(string)
	return id
}
