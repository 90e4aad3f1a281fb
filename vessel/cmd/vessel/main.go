// Command vessel serves a deployment's agents over A2A 1.0 and runs their
// turns (see docs/a2a.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/envfile"
	"github.com/astraldeep/astralvessel-go/runtime/healthcheck"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
	"github.com/astraldeep/astralvessel-go/runtime/usage"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/internal/fromspec"
	"github.com/astraldeep/astralvessel-go/vessel/internal/listen"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

type sandboxFlags map[string]string

func (f sandboxFlags) String() string { return fmt.Sprint(map[string]string(f)) }
func (f sandboxFlags) Set(v string) error {
	id, u, ok := strings.Cut(v, "=")
	if !ok || id == "" || u == "" {
		return fmt.Errorf("want AGENT=URL, got %q", v)
	}
	f[id] = u
	return nil
}

// flags are the command line.
type flags struct {
	deployment, listen, publicURL string
	grpcListen                    string
	sandboxes                     sandboxFlags
	logLevel, metricsListen       string
	usageLog, auditLog            string
}

func parseFlags() *flags {
	f := &flags{sandboxes: sandboxFlags{}}
	flag.StringVar(&f.deployment, "deployment", "", "deployment.toml")
	flag.StringVar(&f.listen, "listen", "", "listen address (default <front_address or 0.0.0.0>:<port>)")
	flag.StringVar(&f.grpcListen, "grpc-listen", "", "gRPC binding listen address (default --listen's host, else <front_address or 0.0.0.0>, with <grpc_port>; off: no gRPC binding)")
	flag.StringVar(&f.publicURL, "public-url", "", "base URL the agent cards advertise (default the deployment's public_url)")
	flag.Var(f.sandboxes, "sandbox-url", "AGENT=URL of an agent's sandbox (repeatable; default http://sandbox-<agent>:8600)")
	flag.StringVar(&f.logLevel, "log-level", envOr("VESSEL_LOG_LEVEL", "info"), "log level: debug, info, warn or error (env VESSEL_LOG_LEVEL)")
	flag.StringVar(&f.metricsListen, "metrics-listen", envOr("VESSEL_METRICS_LISTEN", ""),
		"address of the Prometheus /metrics listener, e.g. 127.0.0.1:9700 (env VESSEL_METRICS_LISTEN; default off)")
	flag.StringVar(&f.usageLog, "usage-log", envOr("VESSEL_USAGE_LOG", ""),
		"append one JSON usage record per finished turn to this file (env VESSEL_USAGE_LOG; default off)")
	flag.StringVar(&f.auditLog, "audit-log", envOr("VESSEL_AUDIT_LOG", ""),
		"append the OCSF audit stream (one API Activity event per A2A call) to this file (env VESSEL_AUDIT_LOG; default off)")
	flag.Parse()
	return f
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "health" {
		// The Compose healthcheck: the image has no shell or curl.
		os.Exit(healthcheck.Main("vessel", healthcheck.Check{URL: "http://127.0.0.1:8700/health", WantOK: true},
			os.Args[2:], os.Stderr))
	}
	f := parseFlags()
	log, _, err := telemetry.NewLogger(f.logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vessel: "+err.Error())
		os.Exit(2)
	}
	if err := run(log, f); err != nil {
		var inUse *listen.InUseError
		if errors.As(err, &inUse) {
			// A plain line, not a JSON record with a stack trace: the
			// operator has to act on it, nothing went wrong inside.
			fmt.Fprintln(os.Stderr, "vessel: "+inUse.Error())
			_ = log.Sync()
			os.Exit(1)
		}
		log.Error("vessel stopped", zap.Error(err))
		_ = log.Sync()
		os.Exit(1)
	}
	_ = log.Sync()
}

// loadCardKeys reads the card-signing keys (a JWK set of EC P-256 private
// keys) from VESSEL_CARD_SIGNING_KEY_FILE or VESSEL_CARD_SIGNING_KEY; with
// neither, cards are served unsigned. A key that cannot be read stops the
// start: a deployment that signs its cards must not serve them unsigned.
func loadCardKeys() (*cardsign.Keys, error) {
	v, ok, err := envfile.LookupFile(os.LookupEnv, "VESSEL_CARD_SIGNING_KEY")
	if err != nil {
		return nil, fmt.Errorf("card-signing key: %w", err)
	}
	if !ok || v == "" {
		return nil, nil
	}
	k, err := cardsign.ParseKeys([]byte(v))
	if err != nil {
		return nil, fmt.Errorf("card-signing key: %w", err)
	}
	return k, nil
}

// envOr is the variable name (or the file name_FILE names), else def.
func envOr(name, def string) string {
	if v, ok := envfile.WithFiles(os.LookupEnv)(name); ok && v != "" {
		return v
	}
	return def
}

func run(log *zap.Logger, f *flags) error {
	deployment, listenAddr, publicURL, sandboxes, metricsAddr := &f.deployment, &f.listen, &f.publicURL, f.sandboxes, &f.metricsListen
	if *deployment == "" {
		return errors.New("--deployment is required")
	}
	env := envfile.WithFiles(os.LookupEnv)
	d, err := fromspec.Load(*deployment, env)
	if err != nil {
		return fmt.Errorf("load deployment: %w", err)
	}
	// Tracing (off unless the OTEL_* variables ask for it) comes before the
	// sandbox clients, which carry the trace context when it is on.
	tr, err := telemetry.StartTracing(context.Background(), "vessel", log)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer tr.Stop(log)
	// Listen first, so a busy address is reported at once, before the task
	// store and the sandboxes.
	addr := *listenAddr
	if addr == "" {
		addr = frontAddr(d, d.Vessel.Port, vesseldefaults.Port)
	}
	ln, err := listen.TCP(context.Background(), addr, "--listen")
	if err != nil {
		return err
	}
	defer ln.Close()
	gln, grpcAddr, err := listenGRPC(d, f.grpcListen, addr, *publicURL)
	if err != nil {
		return err
	}
	if gln != nil {
		defer gln.Close()
	}
	cardKeys, err := loadCardKeys()
	if err != nil {
		return err
	}
	master, err := masterToken()
	if err != nil {
		return err
	}

	sbs, clients, closeSandboxes, err := dialSandboxes(d, sandboxes, master)
	if err != nil {
		return err
	}
	defer closeSandboxes()

	url, ttl := taskStore(d)
	ids := agentIDs(d)
	postgres.Register() // task stores beyond SQLite
	// sig is done at SIGTERM or SIGINT, which starts the drain; ctx, which
	// the task store and readiness polling live by, only once it is over.
	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	backend, err := store.Open(ctx, url, store.Options{Agents: ids, TTL: ttl})
	if err != nil {
		return err
	}
	defer backend.Close()

	authn, err := authenticators(d, log)
	if err != nil {
		return err
	}
	factories, err := toolFactories(d, log)
	if err != nil {
		return err
	}
	factories = append(factories, stdioMCPFactory(clients, log))

	path := d.Path
	if path == "" {
		path = *deployment
	}
	reg := telemetry.NewRegistry()
	metrics := a2aserver.NewMetrics(reg)
	ms, err := telemetry.ServeMetrics(*metricsAddr, reg, log)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	defer ms.Close()
	rlo, err := rotlog.OptionsFromEnv(func(k string) string { return envOr(k, "") })
	if err != nil {
		return err
	}
	usageRec, err := openUsage(f.usageLog, rlo, log)
	if err != nil {
		return err
	}
	if usageRec != nil {
		defer usageRec.Close()
	}
	auditW, err := openAudit(f.auditLog, rlo, log)
	if err != nil {
		return err
	}
	if auditW != nil {
		defer auditW.Close()
	}
	checks, err := healthChecks(backend)
	if err != nil {
		return err
	}
	ob, stopOutbox, err := openOutbox(ctx, backend, d, cardKeys, metrics, log)
	if err != nil {
		return err
	}
	defer stopOutbox()
	srv, err := a2aserver.New(a2aserver.Config{
		Deployment:    d,
		Reload:        func() (*settings.Deployment, error) { return fromspec.Load(path, env) },
		Sandboxes:     sbs,
		SandboxTools:  func(a *settings.Agent) []tools.Tool { return tools.SandboxTools(clients[a.ID], a) },
		ToolFactories: factories,
		Auth:          authn,
		CheckImage:    checkImage,  // wiring.go
		AnswerParts:   answerParts, // wiring.go
		NarrowTools:   narrowTools, // wiring.go
		Store:         backend,
		HealthChecks:  checks,
		Env:           env,
		ModelBaseURL:  envOr("VESSEL_MODEL_BASE_URL", "http://egress:8080/v1"),
		Logger:        log,
		Metrics:       metrics,
		Usage:         usageRec,
		Audit:         auditW,
		PublicURL:     *publicURL,
		GRPCAddress:   grpcAddr,
		CardKeys:      cardKeys,
		Outbox:        ob,
	})
	if err != nil {
		return err
	}
	srv.Start(ctx)
	defer srv.Close()
	if err := serveOperator(srv, ms, log); err != nil { // wiring.go
		return err
	}

	return serve(sig, log, srv, listeners{http: ln, grpc: gln, grpcAddr: grpcAddr}, ids,
		time.Duration(d.Vessel.ShutdownGraceSecs)*time.Second)
}

// masterToken is the sandbox master token, from which each agent's
// sandbox token is derived.
func masterToken() (string, error) {
	master, ok, err := envfile.LookupFile(os.LookupEnv, "VESSEL_SANDBOX_MASTER_TOKEN")
	if err != nil {
		return "", err
	}
	if !ok || master == "" {
		return "", errors.New("VESSEL_SANDBOX_MASTER_TOKEN_FILE (or VESSEL_SANDBOX_MASTER_TOKEN) is required")
	}
	return master, nil
}

// dialSandboxes dials each agent's sandbox (--sandbox-url, else
// http://sandbox-<agent>:8600). closeAll closes them, the last dialled
// first; a failed dial closes those dialled before it.
func dialSandboxes(d *settings.Deployment, urls sandboxFlags, master string) (map[string]a2aserver.AgentSandbox, map[string]*tools.Sandbox, func(), error) {
	sbs := map[string]a2aserver.AgentSandbox{}
	clients := map[string]*tools.Sandbox{}
	var dialled []*tools.Sandbox
	closeAll := func() {
		for i := len(dialled) - 1; i >= 0; i-- {
			dialled[i].Close()
		}
	}
	for _, a := range d.Agents {
		u := urls[a.ID]
		if u == "" {
			u = "http://sandbox-" + a.ID + ":8600"
		}
		sb, err := tools.DialSandbox(u, tokens.DeriveToken(master, "sandbox/"+a.ID))
		if err != nil {
			closeAll()
			return nil, nil, nil, fmt.Errorf("agent %s: %w", a.ID, err)
		}
		dialled = append(dialled, sb)
		sbs[a.ID], clients[a.ID] = sb, sb
	}
	return sbs, clients, closeAll, nil
}

// taskStore is the task store's URL ([vessel] task_store, else SQLite in
// VESSEL_DATA_DIR) and how long tasks are kept (default 24 hours).
func taskStore(d *settings.Deployment) (string, time.Duration) {
	ttl := time.Duration(d.Vessel.TaskTTLHours) * time.Hour
	if ttl <= 0 {
		ttl = 24 * time.Hour
	}
	url := d.Vessel.TaskStore
	if url == "" {
		url = "sqlite://" + filepath.Join(envOr("VESSEL_DATA_DIR", "/data"), "tasks.sqlite")
	}
	return url, ttl
}

// agentIDs are the deployment's agent ids, in its order.
func agentIDs(d *settings.Deployment) []string {
	ids := make([]string, len(d.Agents))
	for i, a := range d.Agents {
		ids[i] = a.ID
	}
	return ids
}

// openUsage opens the usage log at path; none (nil) when path is empty.
func openUsage(path string, rlo rotlog.Options, log *zap.Logger) (*usage.Recorder, error) {
	if path == "" {
		return nil, nil
	}
	rec, err := usage.Open(path, rlo)
	if err != nil {
		return nil, fmt.Errorf("--usage-log: %w", err)
	}
	log.Info("usage records", zap.String("path", path))
	return rec, nil
}

// openAudit opens the audit log at path; none (nil) when path is empty.
func openAudit(path string, rlo rotlog.Options, log *zap.Logger) (*audit.Writer, error) {
	if path == "" {
		return nil, nil
	}
	w, err := audit.Open(path, "vessel", audit.BuildVersion(), rlo)
	if err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	log.Info("audit events", zap.String("path", path))
	return w, nil
}

// listeners are the vessel's open listeners: HTTP, and the gRPC binding
// (nil when off) with the address the cards give for it.
type listeners struct {
	http, grpc net.Listener
	grpcAddr   string
}

// serve serves HTTP (and the gRPC binding) until sig is done, then drains
// within grace and returns once the drain is over.
func serve(sig context.Context, log *zap.Logger, srv *a2aserver.Server, l listeners, ids []string, grace time.Duration) error {
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	var gs *grpc.Server
	if l.grpc != nil {
		gs = srv.GRPCServer() // its connection bounds: a2aserver.GRPCBounds
		go func() {
			if err := gs.Serve(l.grpc); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				log.Error("gRPC binding stopped", zap.Error(err))
			}
		}()
		log.Info("vessel gRPC binding listening", zap.String("addr", l.grpc.Addr().String()), zap.String("card_address", l.grpcAddr))
	}
	log.Info("vessel listening", zap.String("addr", l.http.Addr().String()), zap.Strings("agents", ids))
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-sig.Done()
		drain(log, srv, hs, gs, grace)
	}()
	if err := hs.Serve(l.http); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	<-drained // Serve returns as soon as Shutdown begins; the drain decides when to stop
	return nil
}

// drain stops the vessel after SIGTERM: readiness off at once, running
// turns get grace to finish, the rest end with status shutdown, then the
// HTTP server closes its connections once their final frames are out. The
// whole takes at most grace + vesseldefaults.ShutdownMarginSecs, which is what
// Compose's stop_grace_period allows.
func drain(log *zap.Logger, srv *a2aserver.Server, hs *http.Server, gs *grpc.Server, grace time.Duration) {
	margin := time.Duration(vesseldefaults.ShutdownMarginSecs) * time.Second
	log.Info("vessel stopping: not ready any more, letting running turns finish", zap.Duration("grace", grace))
	dctx, cancel := context.WithTimeout(context.Background(), grace+margin*3/4)
	running, stopped := srv.Drain(dctx, grace)
	cancel()
	if dctx.Err() != nil {
		log.Warn("turns still running after the shutdown margin", zap.Int("running_at_stop", running), zap.Int("stopped", stopped))
	} else {
		log.Info("turns drained", zap.Int("running_at_stop", running), zap.Int("stopped", stopped))
	}
	shut, cancel := context.WithTimeout(context.Background(), margin/4)
	defer cancel()
	if gs != nil {
		// Streams that are still open end with the HTTP connections.
		go func() { <-shut.Done(); gs.Stop() }()
		gs.GracefulStop()
	}
	if err := hs.Shutdown(shut); err != nil {
		log.Warn("connections still open at stop", zap.Error(err))
	}
}

// listenGRPC opens the gRPC binding's listener: flag, else the HTTP
// listener's host (httpAddr: --listen, or the front address) with [vessel]
// grpc_port; "off" opens none. The address the cards give is the
// deployment's grpc_public_address, or, with --public-url (the local
// stack), that URL's host with the port listened on.
func listenGRPC(d *settings.Deployment, flagAddr, httpAddr, publicURL string) (net.Listener, string, error) {
	if flagAddr == "off" {
		return nil, "", nil
	}
	addr := flagAddr
	if addr == "" {
		host, _, err := net.SplitHostPort(httpAddr)
		if err != nil {
			return nil, "", fmt.Errorf("--listen %q: %w", httpAddr, err)
		}
		port := d.Vessel.GRPCPort
		if port == 0 {
			port = vesseldefaults.GRPCPort
		}
		addr = net.JoinHostPort(host, strconv.Itoa(port))
	}
	ln, err := listen.TCP(context.Background(), addr, "--grpc-listen")
	if err != nil {
		return nil, "", err
	}
	public := d.Vessel.GRPCPublicAddress
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Hostname() == "" {
			ln.Close()
			return nil, "", fmt.Errorf("--public-url %q: no host", publicURL)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		public = net.JoinHostPort(u.Hostname(), port)
	}
	return ln, public, nil
}

// frontAddr is the front address (or 0.0.0.0) with port (def when 0).
func frontAddr(d *settings.Deployment, port, def int) string {
	host := d.Vessel.FrontAddress
	if host == "" {
		host = "0.0.0.0"
	}
	if port == 0 {
		port = def
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}
