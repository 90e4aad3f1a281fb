package a2aserver

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/auth/jwt"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/model"
)

// Metrics are the vessel's Prometheus series (docs/operations.md lists
// them). Labels are bounded: agent ids, model names and tool names come
// from the deployment, statuses and reasons from fixed lists; no task id,
// context id or owner is ever a label.
type Metrics struct {
	turnsStarted  *prometheus.CounterVec
	turnsFinished *prometheus.CounterVec
	turnDuration  *prometheus.HistogramVec
	firstEvent    *prometheus.HistogramVec
	steps         *prometheus.CounterVec
	tokens        *prometheus.CounterVec
	toolCalls     *prometheus.CounterVec
	toolDuration  *prometheus.HistogramVec
	modelDuration *prometheus.HistogramVec
	modelErrors   *prometheus.CounterVec
	activeTurns   *prometheus.GaugeVec
	streams       *prometheus.GaugeVec
	storeDuration *prometheus.HistogramVec
	authFailures  *prometheus.CounterVec
	refused       *prometheus.CounterVec
	endRetries    *prometheus.CounterVec
	endFailures   *prometheus.CounterVec
	pushOutcomes  *prometheus.CounterVec
	// agentReady and agentUnavailable: readiness as /health shows it.
	agentReady       *prometheus.GaugeVec
	agentUnavailable *prometheus.GaugeVec
}

// NewMetrics registers the vessel's series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		turnsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_turns_started_total",
			Help: "Turns started, by agent."}, []string{"agent"}),
		turnsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_turns_finished_total",
			Help: "Turns finished, by agent and status (turn.finished's status, or rejected)."}, []string{"agent", "status"}),
		turnDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vessel_turn_duration_seconds",
			Help: "Wall-clock time of a turn, by agent and status.", Buckets: telemetry.DurationBuckets}, []string{"agent", "status"}),
		firstEvent: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vessel_turn_first_token_seconds",
			Help: "Time from a turn's start to its first streamed model token, by agent.", Buckets: telemetry.DurationBuckets}, []string{"agent"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_turn_steps_total",
			Help: "Model calls (steps) made by turns, by agent."}, []string{"agent"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_model_tokens_total",
			Help: "Tokens the model reported, by agent, model and direction (in: prompt, out: completion)."}, []string{"agent", "model", "direction"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_tool_calls_total",
			Help: "Tool calls, by agent, tool and outcome (ok, error, failed, stopped, unknown_tool)."}, []string{"agent", "tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vessel_tool_call_duration_seconds",
			Help: "Wall-clock time of a tool call, by agent and tool.", Buckets: telemetry.DurationBuckets}, []string{"agent", "tool"}),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vessel_model_call_duration_seconds",
			Help: "Time of one model call (request to end of stream), by agent and model.", Buckets: telemetry.DurationBuckets}, []string{"agent", "model"}),
		modelErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_model_errors_total",
			Help: "Model calls that failed, by agent, model and kind (error, output_limit, stopped)."}, []string{"agent", "model", "kind"}),
		activeTurns: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vessel_active_turns",
			Help: "Turns running now, by agent."}, []string{"agent"}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vessel_active_streams",
			Help: "Event streams open now (SendStreamingMessage, SubscribeToTask), by agent."}, []string{"agent"}),
		storeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "vessel_store_operation_duration_seconds",
			Help: "Time of one task store operation, by operation (create, update, get, list) and outcome (ok, error).", Buckets: telemetry.FastBuckets},
			[]string{"op", "outcome"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_auth_failures_total",
			Help: "Requests refused authentication, by reason (" + strings.Join(authReasons, ", ") + ")."}, []string{"reason"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_admission_refused_total",
			Help: "Requests refused with 429 by a [limits] entry, by limit (its key)."}, []string{"limit"}),
		endRetries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_turn_end_retries_total",
			Help: "Attempts to end a turn's sandbox workspace made again after one failed, by agent."}, []string{"agent"}),
		endFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_turn_end_failures_total",
			Help: "Turns whose sandbox workspace could not be ended (left to the sweep), by agent."}, []string{"agent"}),
		pushOutcomes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vessel_push_deliveries_total",
			Help: "Push notification delivery attempts by outcome (delivered, retry, dead, dropped)."}, []string{"outcome"}),
		agentReady: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vessel_agent_ready",
			Help: "1 while the agent takes new turns, 0 while it is out of service (/health says why)."}, []string{"agent"}),
		agentUnavailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vessel_agent_unavailable",
			Help: "1 for the cause an agent is out of service (" + strings.Join(unavailableCauses, ", ") + "), 0 for the others."},
			[]string{"agent", "cause"}),
	}
	reg.MustRegister(m.refused, m.turnsStarted, m.turnsFinished, m.turnDuration, m.firstEvent, m.steps, m.tokens, m.toolCalls,
		m.toolDuration, m.modelDuration, m.modelErrors, m.activeTurns, m.streams, m.storeDuration, m.authFailures,
		m.endRetries, m.endFailures, m.pushOutcomes, m.agentReady, m.agentUnavailable)
	return m
}

// PushDelivery counts one push notification delivery attempt by its
// outcome (the outbox's Observe).
func (m *Metrics) PushDelivery(outcome string) { m.pushOutcomes.WithLabelValues(outcome).Inc() }

// Auth failure reasons, the label values of vessel_auth_failures_total.
const (
	AuthMissing       = "missing_credentials"
	AuthUnknown       = "unknown_credentials"
	AuthInvalidToken  = "invalid_token"
	AuthBadUserHeader = "bad_user_header"
	AuthOther         = "other"
)

var authReasons = []string{AuthMissing, AuthUnknown, AuthInvalidToken, AuthBadUserHeader, AuthOther}

// authReason classifies a refusal for the metric and the log line.
func authReason(err error) string {
	switch msg := err.Error(); {
	case errors.Is(err, jwt.ErrInvalidToken):
		return AuthInvalidToken
	case strings.HasSuffix(msg, "missing bearer token"):
		return AuthMissing
	case strings.HasSuffix(msg, "unknown key or token"):
		return AuthUnknown
	case strings.Contains(msg, auth.UserHeader):
		return AuthBadUserHeader
	default:
		return AuthOther
	}
}

// agentMetrics are one agent's series, resolved once.
type agentMetrics struct {
	m             *Metrics
	agent, model  string
	started       prometheus.Counter
	first         prometheus.Observer
	steps         prometheus.Counter
	tokensIn      prometheus.Counter
	tokensOut     prometheus.Counter
	active        prometheus.Gauge
	modelDuration prometheus.Observer
}

func (m *Metrics) forAgent(agent, modelName string) *agentMetrics {
	return &agentMetrics{m: m, agent: agent, model: modelName,
		started:       m.turnsStarted.WithLabelValues(agent),
		first:         m.firstEvent.WithLabelValues(agent),
		steps:         m.steps.WithLabelValues(agent),
		tokensIn:      m.tokens.WithLabelValues(agent, modelName, "in"),
		tokensOut:     m.tokens.WithLabelValues(agent, modelName, "out"),
		active:        m.activeTurns.WithLabelValues(agent),
		modelDuration: m.modelDuration.WithLabelValues(agent, modelName),
	}
}

func (am *agentMetrics) turnStarted() {
	am.started.Inc()
	am.active.Inc()
}

// turnFinished records a finished turn; res is nil for a rejected one.
func (am *agentMetrics) turnFinished(status string, res *loop.Result) {
	am.active.Dec()
	am.m.turnsFinished.WithLabelValues(am.agent, status).Inc()
	if res == nil {
		return
	}
	am.m.turnDuration.WithLabelValues(am.agent, status).Observe(res.Total.Seconds())
	if res.FirstToken > 0 {
		am.first.Observe(res.FirstToken.Seconds())
	}
	am.steps.Add(float64(res.Steps))
	am.tokensIn.Add(float64(res.PromptTokens))
	am.tokensOut.Add(float64(res.CompletionTokens))
}

// ModelCall implements loop.Observer.
func (am *agentMetrics) ModelCall(d time.Duration, err error) {
	am.modelDuration.Observe(d.Seconds())
	if err == nil {
		return
	}
	kind := "error"
	switch {
	case errors.Is(err, model.ErrOutputLimit):
		kind = "output_limit"
	case errors.Is(err, model.ErrIncomplete):
		kind = "incomplete"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		kind = "stopped"
	}
	am.m.modelErrors.WithLabelValues(am.agent, am.model, kind).Inc()
}

// ToolCall implements loop.Observer.
func (am *agentMetrics) ToolCall(tool, outcome string, d time.Duration) {
	am.m.toolCalls.WithLabelValues(am.agent, tool, outcome).Inc()
	if outcome != loop.OutcomeUnknownTool {
		am.m.toolDuration.WithLabelValues(am.agent, tool).Observe(d.Seconds())
	}
}

// timedStore times every task store operation.
type timedStore struct {
	taskstore.Store
	h *prometheus.HistogramVec
}

func (t *timedStore) observe(op string, t0 time.Time, err error) {
	outcome := "ok"
	if err != nil && !errors.Is(err, a2a.ErrTaskNotFound) && !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
		outcome = "error"
	}
	t.h.WithLabelValues(op, outcome).Observe(time.Since(t0).Seconds())
}

func (t *timedStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	t0 := time.Now()
	v, err := t.Store.Create(ctx, task)
	t.observe("create", t0, err)
	return v, err
}

func (t *timedStore) Update(ctx context.Context, up *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	t0 := time.Now()
	v, err := t.Store.Update(ctx, up)
	t.observe("update", t0, err)
	return v, err
}

func (t *timedStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	t0 := time.Now()
	st, err := t.Store.Get(ctx, id)
	t.observe("get", t0, err)
	return st, err
}

func (t *timedStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	t0 := time.Now()
	r, err := t.Store.List(ctx, req)
	t.observe("list", t0, err)
	return r, err
}

// countedStreams counts the event streams a handler has open.
type countedStreams struct {
	a2asrv.RequestHandler
	g prometheus.Gauge
}

func (c *countedStreams) count(seq iter.Seq2[a2a.Event, error]) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		c.g.Inc()
		defer c.g.Dec()
		seq(yield)
	}
}

func (c *countedStreams) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return c.count(c.RequestHandler.SendStreamingMessage(ctx, req))
}

func (c *countedStreams) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return c.count(c.RequestHandler.SubscribeToTask(ctx, req))
}
