package server

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc/metadata"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/tools"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
)

// Metrics are sandboxd's series (docs/operations.md). Labels are bounded:
// tool names are the agent's (any other is "unknown"), exit classes and
// stop reasons come from fixed lists.
type Metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	stops    *prometheus.CounterVec
	spawn    prometheus.Histogram
}

// RegisterTier registers sandboxd_tier_info, 1 for the isolation tier
// sandboxd runs in: dashboards tell a gvisor sandbox from a confined one.
func RegisterTier(reg prometheus.Registerer, tier string) {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sandboxd_tier_info",
		Help: "1 for the isolation tier sandboxd checked at start (confined or gvisor)."}, []string{"tier"})
	g.WithLabelValues(tier).Set(1)
	reg.MustRegister(g)
}

// NewMetrics registers sandboxd's series with reg; turns and workspace
// usage are read from wm at each scrape.
func NewMetrics(reg prometheus.Registerer, wm *workspace.Manager) *Metrics {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandboxd_calls_total",
			Help: "Tool calls, by tool and exit class (ok, nonzero, stopped, error)."}, []string{"tool", "exit"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sandboxd_call_duration_seconds",
			Help: "Wall-clock time of a tool call, workspace and spawn included, by tool.", Buckets: telemetry.DurationBuckets}, []string{"tool"}),
		stops: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sandboxd_call_stops_total",
			Help: "Calls stopped before they ended, by reason (disk_limit, process_limit, timeout, cancelled, other)."}, []string{"reason"}),
	}
	m.spawn = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sandboxd_spawn_duration_seconds",
		Help: "Time to start the confined process of a shell or command call (its pipes and the confined child's creation), until sandboxd has its pid.", Buckets: telemetry.FastBuckets})
	reg.MustRegister(m.calls, m.duration, m.stops, m.spawn)
	if wm != nil {
		reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sandboxd_active_turns",
				Help: "Turns that hold a workspace now."}, func() float64 { return float64(len(wm.List())) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sandboxd_workspace_bytes",
				Help: "Disk the turns' workspaces hold now, as the quotas count it (allocated blocks and inodes)."}, func() float64 {
				var n int64
				for _, t := range wm.List() {
					n += t.Usage
				}
				return float64(n)
			}),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sandboxd_workspace_inodes",
				Help: "Distinct inodes the turns' workspaces hold now, as the last quota check counted them."}, func() float64 {
				var n int64
				for _, t := range wm.List() {
					n += t.Inodes
				}
				return float64(n)
			}),
		)
	}
	return m
}

var stopReasons = []string{workspace.ReasonDiskLimit, workspace.ReasonProcessLimit, "timeout", "cancelled"}

// exitClass sorts a call's end into ok, nonzero, stopped or error.
func exitClass(e *sandboxv1.Exit) string {
	switch {
	case e.GetError() != "":
		return "error"
	case e.GetStopped() != "":
		return "stopped"
	case e.GetCode() != 0:
		return "nonzero"
	default:
		return "ok"
	}
}

// toolLabel is tool when the agent has it, else "unknown".
func (s *Server) toolLabel(tool string) string {
	switch tool {
	case tools.Read, tools.List, tools.Glob, tools.Grep, tools.Bash:
		return tool
	}
	if name, ok := strings.CutPrefix(tool, servePrefix); ok && s.cfg.Tools.StdioMCP(name) != nil {
		return tool
	}
	if m := s.cfg.Tools; m != nil {
		for _, t := range m.Declared {
			if t.Name == tool && len(t.Command) > 0 {
				return tool
			}
		}
	}
	return "unknown"
}

// observe counts a finished call and writes its log line.
func (s *Server) observe(ctx context.Context, req *sandboxv1.RunRequest, exit *sandboxv1.Exit, d time.Duration) {
	tool, class := s.toolLabel(req.GetTool()), exitClass(exit)
	s.met.calls.WithLabelValues(tool, class).Inc()
	s.met.duration.WithLabelValues(tool).Observe(d.Seconds())
	if st := exit.GetStopped(); st != "" {
		reason := "other"
		if slices.Contains(stopReasons, st) {
			reason = st
		}
		s.met.stops.WithLabelValues(reason).Inc()
	}
	fields := []zap.Field{zap.String(telemetry.FieldTask, taskID(ctx)), zap.String("turn", req.GetTurnId()),
		zap.String("call_id", req.GetCallId()), zap.String("tool", tool), zap.String("exit", class),
		zap.Int32("code", exit.GetCode()), zap.Float64("ms", float64(d.Microseconds())/1000)}
	if st := exit.GetStopped(); st != "" {
		fields = append(fields, zap.String("stopped", st))
	}
	if e := exit.GetError(); e != "" {
		fields = append(fields, zap.String("error", e))
	}
	s.log.Info("call", fields...)
}

// taskID is the task id the vessel sent with the call (x-vessel-task-id),
// made safe to log; "" when none came.
func taskID(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(telemetry.TaskIDMetadata); len(v) > 0 {
		return telemetry.CleanTaskID(v[0])
	}
	return ""
}

// procInfo is what the confined start tells the call's audit event: the
// process's pid (its process group) and the uid it ran as.
type procInfo struct {
	pid, uid int
}

type procKey struct{}

// audit writes the call's Process Activity event.
func (s *Server) audit(ctx context.Context, req *sandboxv1.RunRequest, exit *sandboxv1.Exit, pi *procInfo, start, end time.Time) {
	if s.cfg.Audit == nil {
		return
	}
	c := &audit.ProcessCall{Tool: s.toolLabel(req.GetTool()), CallID: truncate(req.GetCallId(), 128), Turn: truncate(req.GetTurnId(), 128),
		Task: taskID(ctx), Owner: truncate(req.GetOwner(), 300), Agent: s.cfg.Agent, Pid: pi.pid, Start: start, End: end,
		Exit: exitClass(exit), Code: exit.GetCode(), Stopped: exit.GetStopped(), Error: exit.GetError()}
	if pi.uid > 0 {
		c.UID = uint32(pi.uid)
	}
	if err := s.cfg.Audit.Emit(audit.ProcessActivity(c)); err != nil {
		s.log.Warn("audit event not written", zap.Error(err))
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
