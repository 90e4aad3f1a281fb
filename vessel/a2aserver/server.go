// Package a2aserver serves every agent of a deployment over A2A 1.0
// (JSON-RPC, HTTP+JSON and gRPC, a2a-go v2.4.0) plus the vessel's HTTP endpoints: /health,
// /v1/agents, the agent cards and manifests. HTTP middleware in front of
// the SDK (admit, shared by both bindings) answers 401, 403, 429, 503, 408
// and 413 itself, in each binding's error shape.
package a2aserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/usage"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

// MaxBodyBytes is the largest request body accepted.
const MaxBodyBytes = 16_000_000

// AdmissionShareInterval is how often replicas on PostgreSQL exchange
// their turn counts for the [limits] caps.
const AdmissionShareInterval = time.Second

// DefaultDeadline applies when a manifest sets no deadline_seconds.
const DefaultDeadline = 300 * time.Second

// PrimitivesSchemaVersion is the AstralPrimitives schema the vessel emits.
const PrimitivesSchemaVersion = "0.12"

// SandboxStatuser is the part of the sandbox client readiness needs.
type SandboxStatuser interface {
	Status(ctx context.Context) (*sandboxv1.StatusResponse, error)
}

// AgentSandbox is an agent's sandbox: status for readiness, EndTurn for
// the loop, and the sandbox tools.
type AgentSandbox interface {
	SandboxStatuser
	tools.TurnEnder
}

// Config configures a Server.
type Config struct {
	Deployment *settings.Deployment
	// Reload re-reads the deployment from disk for the readiness check (an
	// edit that was not redeployed makes the agent unavailable); nil skips it.
	Reload func() (*settings.Deployment, error)
	// Fingerprint gives an agent's profile fingerprint; default
	// AgentFingerprint (the one the settings carry).
	Fingerprint func(d *settings.Deployment, agentID string) (string, error)
	// Sandboxes by agent id; SandboxTools gives each agent's sandbox tools.
	Sandboxes    map[string]AgentSandbox
	SandboxTools func(agent *settings.Agent) []tools.Tool
	// ToolFactories add tools beyond the sandbox's (web, service, present).
	ToolFactories []tools.Factory
	Auth          auth.Authenticator
	Store         store.Backend
	// Env resolves a manifest's api_key "env:NAME" (NAME or NAME_FILE, see
	// settings.Model.ResolveAPIKey); without Env, ModelKey stands for every
	// env: key. ModelKey is also used when a key resolves empty;
	// ModelBaseURL when a manifest sets no base_url.
	Env          func(name string) (string, bool)
	ModelKey     string
	ModelBaseURL string
	ModelHTTP    *http.Client
	// NewModel overrides the model client (tests); nil builds model.Client.
	NewModel func(agent *settings.Agent) loop.Modeler
	// CheckImage looks inside attached images (vessel/images).
	CheckImage func(mediaType string, data []byte) error
	// AnswerParts builds the answer artifact's parts; nil gives the
	// Markdown text plus a primitives data part when components exist.
	AnswerParts func(answer string, components []any) []*a2a.Part
	// NarrowTools removes tools a caller may not use on this call
	// (token scopes, X-Vessel-Scopes); nil narrows by Principal.Scopes.
	NarrowTools func(r *http.Request, p *auth.Principal, list []tools.Tool) ([]tools.Tool, error)
	Logger      *zap.Logger
	// Metrics receives the vessel's series (NewMetrics); nil keeps them in
	// a registry nobody reads.
	Metrics *Metrics
	// Usage receives one record per finished turn (docs/operations.md);
	// nil records nothing.
	Usage *usage.Recorder
	// Audit receives one OCSF API Activity event per A2A call
	// (docs/audit.md); nil writes none.
	Audit *audit.Writer
	// ReadyInterval is how often sandboxes are polled; default 3s.
	ReadyInterval time.Duration
	// UnreadyInterval is how often an agent out of service is checked
	// again; default 500ms.
	UnreadyInterval time.Duration
	// HealthChecks are the dependencies /health reports (the task store,
	// the egress), run with the readiness poll.
	HealthChecks []HealthCheck
	// TurnSweep is how often abandoned turns are ended on the sandboxes
	// (SweepTurns); default DefaultTurnSweep.
	TurnSweep time.Duration
	// MaxBody overrides MaxBodyBytes (tests).
	MaxBody int64
	// KeepAlive is the SSE keep-alive period; default 15s.
	KeepAlive time.Duration
	// BodyTimeout bounds how long an authenticated caller may take to send
	// its request body; default [vessel] request_body_timeout_seconds.
	BodyTimeout time.Duration
	// Now is the clock for card Last-Modified; default time.Now.
	Now func() time.Time
	// CardKeys, when set, sign every agent card (A2A 1.0 §8) and their
	// public halves are served at cardsig.JWKSPath.
	CardKeys *cardsign.Keys
	// Admission decides what callers may start (vessel/admission); nil
	// builds one from the deployment's [limits].
	Admission *admission.Controller
	// PublicURL, when set, is the base of the cards' interface URLs and of
	// /v1/agents card_url instead of the deployment's public_url (the local
	// stack serves on an address of its own).
	PublicURL string
	// GRPCAddress, when set, is the host:port of the vessel's gRPC listener
	// (GRPCServer) as callers reach it; each 1.0 card then declares a GRPC
	// interface there, with the agent id as its tenant.
	GRPCAddress string
	// Outbox, when set with a store that keeps push configs and enqueues
	// pushes with its status writes (store.PushBackend, store.PushQueuing:
	// both backends), turns push notifications on (docs/jobs.md); New
	// hands it to the store.
	Outbox *outbox.Outbox
}

// Server is the vessel's HTTP handler.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	agents  map[string]*agent
	order   []string
	base    string
	log     *zap.Logger
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	health  healthState
	started time.Time // for the JWKS Last-Modified
	adm     *admission.Controller
	// draining is set by Drain: no agent is ready again.
	draining atomic.Bool
}

type agent struct {
	conf    *settings.Agent
	card    *cardDoc
	cardV03 *cardDoc     // the 0.3-compatible card older AstralDeep builds read
	rpc     http.Handler // JSON-RPC (with 0.3 callers)
	rest    http.Handler // HTTP+JSON, paths without the agent prefix
	grpc    *a2agrpc.Handler
	sandbox AgentSandbox
	exec    *executor
	fp      string // fingerprint at start
	ready   atomic.Bool
	silent  atomic.Int32 // status checks in a row the sandbox did not answer
	why     atomic.Value // string: why not ready
}

// PublicBase is the base URL of card interface URLs.
func PublicBase(v settings.Vessel) string {
	if v.PublicURL != "" {
		return strings.TrimSuffix(v.PublicURL, "/")
	}
	host := v.FrontAddress
	if host == "" {
		host = "vessel"
	}
	port := v.Port
	if port == 0 {
		port = 8700
	}
	return fmt.Sprintf("http://%s:%d", host, port)
}

// AgentFingerprint is the fingerprint d's settings carry for the agent:
// what the translation computed from the deployment files.
func AgentFingerprint(d *settings.Deployment, agentID string) (string, error) {
	for i := range d.Agents {
		if a := &d.Agents[i]; a.ID == agentID {
			return a.Fingerprint, a.FingerprintErr
		}
	}
	return "", fmt.Errorf("fingerprint: no agent %q in the deployment", agentID)
}

// New builds the server; Start begins readiness polling.
func New(cfg Config) (*Server, error) {
	if cfg.Deployment == nil {
		return nil, errors.New("vessel: no deployment")
	}
	if cfg.Auth == nil || cfg.Store == nil {
		return nil, errors.New("vessel: an authenticator and a task store are required")
	}
	if cfg.Fingerprint == nil {
		cfg.Fingerprint = AgentFingerprint
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	if cfg.ReadyInterval <= 0 {
		cfg.ReadyInterval = 3 * time.Second
	}
	if cfg.UnreadyInterval <= 0 {
		cfg.UnreadyInterval = 500 * time.Millisecond
	}
	if cfg.TurnSweep <= 0 {
		cfg.TurnSweep = DefaultTurnSweep
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = MaxBodyBytes
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = time.Duration(cfg.Deployment.Vessel.RequestBodyTimeoutSecs) * time.Second
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = vesseldefaults.RequestBodyTimeoutSecs * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ModelHTTP == nil {
		// model.DialContext saves a copy buffer per call; with a dialer set,
		// HTTP/2 must be asked for to stay as it was without one.
		cfg.ModelHTTP = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second,
			DialContext: model.DialContext, ForceAttemptHTTP2: true}}
	}
	base := PublicBase(cfg.Deployment.Vessel)
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("vessel: public URL %q: want http(s)://host[:port][/path]", cfg.PublicURL)
		}
		base = strings.TrimSuffix(cfg.PublicURL, "/")
	}
	if cfg.Admission == nil {
		cfg.Admission = admission.New(cfg.Deployment.Limits, nil)
	}
	// A shared backend (PostgreSQL) counts every replica's turns against
	// the caps.
	if sh, ok := cfg.Store.(interface {
		ShareAdmission(snap func() map[string]int, interval time.Duration) func(key string) int
	}); ok {
		cfg.Admission.SetPeers(sh.ShareAdmission(cfg.Admission.Snapshot, AdmissionShareInterval))
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), agents: map[string]*agent{}, base: base,
		log: cfg.Logger, stop: make(chan struct{}), adm: cfg.Admission}
	started := cfg.Now()
	s.started = started
	// The store enqueues the pushes, in the transaction that writes each
	// status (docs/jobs.md); the SDK's sender sends nothing.
	if q, ok := cfg.Store.(store.PushQueuing); ok && cfg.Outbox != nil {
		q.SetPushQueue(cfg.Outbox)
	}
	for i := range cfg.Deployment.Agents {
		a := &cfg.Deployment.Agents[i]
		if a.Manifest == nil {
			return nil, fmt.Errorf("agent %s: no manifest loaded", a.ID)
		}
		ag, err := s.buildAgent(a, started)
		if err != nil {
			return nil, err
		}
		s.agents[a.ID] = ag
		s.order = append(s.order, a.ID)
	}
	s.routes()
	return s, nil
}

func (s *Server) buildAgent(a *settings.Agent, started time.Time) (*agent, error) {
	ag := &agent{conf: a, sandbox: s.cfg.Sandboxes[a.ID]}
	s.setReady(ag, "the sandbox has not reported yet")
	fp, err := s.cfg.Fingerprint(s.cfg.Deployment, a.ID)
	if err != nil {
		return nil, fmt.Errorf("agent %s: fingerprint: %w", a.ID, err)
	}
	ag.fp = fp
	pushes, _ := s.cfg.Store.(store.PushBackend)
	_, queuing := s.cfg.Store.(store.PushQueuing)
	pushOn := s.cfg.Outbox != nil && pushes != nil && queuing
	tokens := issuerTrusts(s.cfg.Deployment, a.ID)
	card := BuildCard(a, s.base)
	setPushCapability(card, pushOn)
	cardSecurity(card, tokens)
	if s.cfg.GRPCAddress != "" {
		card.SupportedInterfaces = append(card.SupportedInterfaces, grpcInterface(s.cfg.GRPCAddress, a.ID))
	}
	if ag.card, err = s.signedCardDoc(card, started); err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	var list []tools.Tool
	if s.cfg.SandboxTools != nil && ag.sandbox != nil {
		list = append(list, s.cfg.SandboxTools(a)...)
	}
	for _, f := range s.cfg.ToolFactories {
		more, err := f.Tools(a)
		if err != nil {
			return nil, fmt.Errorf("agent %s: tools: %w", a.ID, err)
		}
		list = append(list, more...)
	}
	set, err := tools.NewSet(list...)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	var mdl loop.Modeler
	if s.cfg.NewModel != nil {
		mdl = s.cfg.NewModel(a)
	} else {
		key := a.Manifest.Model.APIKey
		if s.cfg.Env != nil {
			if key, err = a.Manifest.Model.ResolveAPIKey(s.cfg.Env); err != nil {
				return nil, fmt.Errorf("agent %s: %w", a.ID, err)
			}
		}
		if key == "" || strings.HasPrefix(key, "env:") {
			key = s.cfg.ModelKey
		}
		base := a.Manifest.Model.BaseURL
		if base == "" {
			base = s.cfg.ModelBaseURL
		}
		mdl = &model.Client{BaseURL: base, APIKey: key, HTTP: s.cfg.ModelHTTP, Agent: a.ID, Route: a.ModelRoute,
			Profile:          a.Provider,
			FirstByteTimeout: time.Duration(a.Manifest.Model.FirstByteTimeoutSecs) * time.Second,
			IdleTimeout:      time.Duration(a.Manifest.Model.IdleTimeoutSecs) * time.Second}
	}
	deadline := DefaultDeadline
	if a.Manifest.DeadlineSecs > 0 {
		deadline = time.Duration(a.Manifest.DeadlineSecs) * time.Second
	}
	var ender tools.TurnEnder
	if ag.sandbox != nil {
		ender = &retryingEnder{inner: ag.sandbox, backoff: EndTurnBackoff,
			retries:  s.cfg.Metrics.endRetries.WithLabelValues(a.ID),
			failures: s.cfg.Metrics.endFailures.WithLabelValues(a.ID),
			log:      s.log.With(zap.String(telemetry.FieldAgent, a.ID))}
	}
	reqSettings, err := model.NewSettings(a.Manifest.Model.RequestSettings, a.TokenParam)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	shape, err := newAnswerShape(a.Manifest.Model.ResponseFormat)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	met := s.cfg.Metrics.forAgent(a.ID, a.Manifest.Model.Name)
	ag.exec = &executor{
		srv: s, agent: a, tools: set, deadline: deadline, log: s.log.With(zap.String(telemetry.FieldAgent, a.ID)), met: met, shape: shape,
		loopCfg: loop.Config{Model: mdl, ModelName: a.Manifest.Model.Name, ModelSettings: reqSettings, MaxSteps: a.Manifest.Model.MaxSteps, Observer: met,
			Prompt: func() (string, error) { return settings.ReadPrompt(a) }, Ender: ender, OutputFiles: a.Manifest.Output.Files,
			MaxAnswerBytes: int(a.Manifest.Model.MaxAnswerBytes), MaxArgumentsBytes: int(a.Manifest.Model.MaxToolArgumentsBytes)},
		imageOpt:  turn.Options{AcceptsImages: a.Manifest.Model.AcceptsImages, CheckImage: s.cfg.CheckImage},
		running:   map[string]*run{},
		waiting:   map[string]*pausedTurn{},
		cancelled: map[string]time.Time{},
		policy:    approval.FromSettings(a.Approval),
	}
	ts := taskstore.Store(&timedStore{Store: s.cfg.Store.Agent(a.ID), h: s.cfg.Metrics.storeDuration})
	var pushCfgs *checkedPushConfigs
	if pushOn {
		pushCfgs = &checkedPushConfigs{PushConfigStore: pushes.PushConfigs(a.ID), deployment: s.cfg.Deployment}
	}
	opts := []a2asrv.RequestHandlerOption{
		a2asrv.WithLogger(telemetry.Slog(s.log.With(zap.String(telemetry.FieldAgent, a.ID), zap.String("component", "a2a")))),
		a2asrv.WithTaskStore(ts),
		a2asrv.WithCallInterceptors(&interceptor{store: ts, maxArgs: int(a.Manifest.Model.MaxToolArgumentsBytes), push: pushCfgs}),
		a2asrv.WithCapabilityChecks(&a2a.AgentCapabilities{Streaming: true, PushNotifications: pushOn}),
		a2asrv.WithExecutionPanicHandler(func(r any) error {
			s.log.Error("executor panic", zap.String("agent", a.ID), zap.Any("panic", r))
			return fmt.Errorf("internal error")
		}),
	}
	if pushOn {
		opts = append(opts, a2asrv.WithPushNotifications(outbox.Configs(pushCfgs), outbox.Sender))
	}
	h := a2asrv.NewHandler(ag.exec, opts...)
	// A shared backend (PostgreSQL) routes CancelTask and SubscribeToTask to
	// the replica running the task.
	if w, ok := s.cfg.Store.(interface {
		WrapHandler(agentID string, h a2asrv.RequestHandler) a2asrv.RequestHandler
	}); ok {
		h = w.WrapHandler(a.ID, h)
	}
	if c, ok := s.cfg.Store.(store.CallCarrying); ok {
		c.CarryCalls(a.ID, callCarrier{exec: ag.exec, adm: s.adm, agent: a.ID})
	}
	// A timed-out pause sends itself its message behind the interceptors,
	// which would refuse it (it is no caller's decision).
	ag.exec.self = h
	if ih, ok := h.(*a2asrv.InterceptedHandler); ok {
		ag.exec.self = ih.Handler
	}
	h = &countedStreams{RequestHandler: h, g: s.cfg.Metrics.streams.WithLabelValues(a.ID)}
	// A2A 1.0, plus 0.3 method names and snake_case fields for older callers.
	ag.rpc = a2acompat.NewHandler(h, a2asrv.WithTransportKeepAlive(s.cfg.KeepAlive))
	ag.rest = a2asrv.NewRESTHandler(h, a2asrv.WithTransportKeepAlive(s.cfg.KeepAlive))
	ag.grpc = a2agrpc.NewHandler(h)
	card03 := BuildCard(a, s.base)
	setPushCapability(card03, pushOn)
	cardSecurity(card03, tokens)
	v03, err := a2acompat.CardV03JSON(context.Background(), card03, s.base+"/agents/"+a.ID)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.ID, err)
	}
	ag.cardV03 = newCardDocBytes(v03, started)
	return ag, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Agent ids in deployment order.
func (s *Server) AgentIDs() []string { return slices.Clone(s.order) }

// Ready reports an agent's readiness and, if not ready, why.
func (s *Server) Ready(id string) (bool, string) {
	a := s.agents[id]
	if a == nil {
		return false, "unknown agent"
	}
	if a.ready.Load() {
		return true, ""
	}
	why, _ := a.why.Load().(string)
	return false, why
}

func (s *Server) routes() {
	s.mux.HandleFunc("/health", s.healthHandler)
	s.mux.HandleFunc("/v1/agents", s.listAgents)
	s.mux.HandleFunc(cardsig.JWKSPath, s.jwks)
	s.mux.HandleFunc("/agents/{id}/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		a := s.agents[r.PathValue("id")]
		if a == nil {
			writeJSONError(w, http.StatusNotFound, "unknown agent")
			return
		}
		a.card.serve(w, r)
	})
	s.mux.HandleFunc("/agents/{id}/a2a/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		a := s.agents[r.PathValue("id")]
		if a == nil {
			writeJSONError(w, http.StatusNotFound, "unknown agent")
			return
		}
		a.cardV03.serve(w, r)
	})
	s.mux.HandleFunc("/agents/{id}/a2a", s.audited(s.rpc))
	s.mux.HandleFunc("/agents/{id}"+RESTPath+"/", s.audited(s.rest))
	s.mux.HandleFunc("/agents/{id}/manifest", s.manifest)
	s.mux.HandleFunc("/agents/{id}", s.audited(s.rpc))
	s.mux.HandleFunc("/agents/{id}/{$}", s.audited(s.rpc))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSONError(w, http.StatusNotFound, "not found")
	})
}

// authenticate runs the authenticator for a non-JSON-RPC endpoint.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*auth.Principal, bool) {
	p, err := s.cfg.Auth.Authenticate(r.Context(), r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="astralvessel"`)
		writeJSONError(w, http.StatusUnauthorized, unauthMessage(err))
		return nil, false
	}
	return p, true
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSONError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	p, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	out := []any{}
	for _, id := range s.order {
		if !p.MayCall(id) {
			continue
		}
		a := s.agents[id]
		out = append(out, map[string]any{
			"id": id, "name": a.conf.Manifest.Name, "description": a.conf.Manifest.Description,
			"card_url":  s.base + "/agents/" + id + "/.well-known/agent-card.json",
			"available": a.ready.Load(),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}

func (s *Server) manifest(w http.ResponseWriter, r *http.Request) {
	a := s.agents[r.PathValue("id")]
	if a == nil {
		writeJSONError(w, http.StatusNotFound, "unknown agent")
		return
	}
	if r.Method != http.MethodGet {
		writeJSONError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	p, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if !p.MayCall(a.conf.ID) {
		writeJSONError(w, http.StatusForbidden, "you may not call this agent")
		return
	}
	writeJSON(w, http.StatusOK, manifestSummary(a))
}

func manifestSummary(a *agent) map[string]any {
	m := a.conf.Manifest
	var tl []any
	for _, t := range a.exec.tools.Filter(nil) {
		tl = append(tl, map[string]any{"name": t.Def().Function.Name, "scope": t.Scope()})
	}
	var mounts []any
	for _, mt := range a.conf.Sandbox.Mounts {
		mounts = append(mounts, map[string]any{"target": mt.Target})
	}
	deadline := m.DeadlineSecs
	if deadline <= 0 {
		deadline = int(DefaultDeadline / time.Second)
	}
	maxSteps := m.Model.MaxSteps
	if maxSteps <= 0 {
		maxSteps = vesseldefaults.DefaultMaxSteps
	}
	files := m.Output.Files
	if files == nil {
		files = []string{}
	}
	if tl == nil {
		tl = []any{}
	}
	if mounts == nil {
		mounts = []any{}
	}
	examples := m.Examples
	if examples == nil {
		examples = []string{}
	}
	return map[string]any{
		"id": a.conf.ID, "name": m.Name, "description": m.Description, "version": m.Version,
		"examples":                  examples,
		"model":                     map[string]any{"name": m.Model.Name, "max_steps": maxSteps, "accepts_images": m.Model.AcceptsImages},
		"tools":                     tl,
		"scope":                     strongestScope(a.conf),
		"mounts":                    mounts,
		"deadline_seconds":          deadline,
		"output":                    map[string]any{"files": files, "primitives": m.Output.Primitives},
		"primitives_schema_version": PrimitivesSchemaVersion,
	}
}

// Close stops readiness polling.
func (s *Server) Close() {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}
