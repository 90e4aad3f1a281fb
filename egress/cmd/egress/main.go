// Command egress runs the egress: the model passthrough (default :8080)
// and the guarded web proxy (default :3128).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/egress/guard"
	"github.com/astraldeep/astralvessel-go/egress/modelproxy"
	"github.com/astraldeep/astralvessel-go/egress/webproxy"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/budgets"
	"github.com/astraldeep/astralvessel-go/runtime/envfile"
	"github.com/astraldeep/astralvessel-go/runtime/healthcheck"
	"github.com/astraldeep/astralvessel-go/runtime/redact"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// logLevel is the running logger's level; run sets it from --log-level.
var logLevel *zap.AtomicLevel

func main() {
	if len(os.Args) > 1 && os.Args[1] == "health" {
		// The Compose healthcheck: the image has no shell or curl.
		os.Exit(healthcheck.Main("egress", healthcheck.Check{URL: "http://127.0.0.1:8080/health"}, os.Args[2:], os.Stderr))
	}
	log, level, err := telemetry.NewLogger(os.Getenv("VESSEL_EGRESS_LOG_LEVEL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "egress: VESSEL_EGRESS_LOG_LEVEL:", err)
		os.Exit(2)
	}
	logLevel = &level
	// Off unless the OTEL_* variables ask for it.
	tr, err := telemetry.StartTracing(context.Background(), "egress", log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "egress: tracing:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = run(ctx, os.Args[1:], os.Getenv, log, nil)
	tr.Stop(log)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(os.Stderr, usage)
			return
		}
		var inUse *addrInUseError
		if errors.As(err, &inUse) {
			// One plain line: the operator has to act, nothing broke inside.
			fmt.Fprintln(os.Stderr, "egress: "+inUse.Error())
			os.Exit(1)
		}
		log.Error("egress stopped", zap.Error(err))
		_ = log.Sync()
		os.Exit(1)
	}
	_ = log.Sync()
}

const usage = `usage: egress [--model-listen ADDR (default :8080)] [--proxy-listen ADDR (default :3128)]
              [--metrics-listen ADDR (default off)] [--log-level LEVEL (default info)]
              [--audit-log FILE (default off)]

environment:
  VESSEL_UPSTREAM_MODEL_URL          the model's OpenAI-compatible base URL (required)
  VESSEL_UPSTREAM_MODEL_KEY          the model key, added to forwarded requests
  VESSEL_UPSTREAM_MODEL_AUTH         how the key is sent: bearer (default with a key), api-key or none
  VESSEL_EGRESS_ROUTES               JSON model routes from [models] (a request picks one with X-Vessel-Route);
                                     each names the variable holding its key (key_env), read from this environment
  VESSEL_EGRESS_TOKEN_FILE           file holding the token callers must present (or VESSEL_EGRESS_TOKEN)
  VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM  1 to allow a plain-HTTP upstream
  VESSEL_EGRESS_ALLOW_CIDRS          extra CIDRs the web proxy may reach (comma-separated)
  VESSEL_EGRESS_ALLOW_HOSTS          extra host names (or *.domain) the web proxy may reach
  VESSEL_EGRESS_ALLOW_PORTS          extra ports, for allow-listed destinations only
  VESSEL_EGRESS_WEB_CLIENTS_FILE     JSON list of the web proxy's clients and their domain policies; set, every client must authenticate
  VESSEL_EGRESS_BUDGETS              JSON token ceilings from [budgets] (turn, owner per day, agent per day); unset, none
  VESSEL_EGRESS_METRICS_LISTEN       address of the Prometheus /metrics listener (--metrics-listen wins)
  VESSEL_EGRESS_LOG_LEVEL            debug, info, warn or error (--log-level wins)
  VESSEL_EGRESS_AUDIT_LOG            file of the OCSF audit events (--audit-log wins)
  VESSEL_RECORD_LOG_MAX_MB           rotate the audit file at this size (default 100)
  VESSEL_RECORD_LOG_BACKUPS          rotated audit files to keep (default 10)
`

// config is everything the environment and flags say.
type config struct {
	modelListen, proxyListen string
	metricsListen, logLevel  string
	auditLog                 string
	upstream, key, token     string
	upstreamAuth             string
	routes                   []modelproxy.Route
	allowHTTP                bool
	policy                   guard.Config
	clients                  *webproxy.Clients
	budgets                  budgets.Budgets
}

func loadConfig(args []string, getenv func(string) string) (*config, error) {
	fs := flag.NewFlagSet("egress", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := &config{}
	fs.StringVar(&c.modelListen, "model-listen", ":8080", "address of the model passthrough")
	fs.StringVar(&c.proxyListen, "proxy-listen", ":3128", "address of the guarded web proxy")
	fs.StringVar(&c.metricsListen, "metrics-listen", strings.TrimSpace(getenv("VESSEL_EGRESS_METRICS_LISTEN")), "address of the Prometheus /metrics listener (default off)")
	fs.StringVar(&c.auditLog, "audit-log", strings.TrimSpace(getenv("VESSEL_EGRESS_AUDIT_LOG")), "append one OCSF Network Activity event per decision to this file (default off)")
	fs.StringVar(&c.logLevel, "log-level", strings.TrimSpace(getenv("VESSEL_EGRESS_LOG_LEVEL")), "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("flags: %w", err)
	}
	if _, err := telemetry.ParseLevel(c.logLevel); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	c.upstream = strings.TrimSpace(getenv("VESSEL_UPSTREAM_MODEL_URL"))
	if c.upstream == "" {
		return nil, errors.New("VESSEL_UPSTREAM_MODEL_URL is not set")
	}
	c.key = strings.TrimSpace(getenv("VESSEL_UPSTREAM_MODEL_KEY"))
	c.upstreamAuth = strings.TrimSpace(getenv("VESSEL_UPSTREAM_MODEL_AUTH"))
	if v := strings.TrimSpace(getenv("VESSEL_EGRESS_ROUTES")); v != "" {
		var err error
		if c.routes, err = loadRoutes(v, getenv); err != nil {
			return nil, fmt.Errorf("VESSEL_EGRESS_ROUTES: %w", err)
		}
	}
	token, _, err := envfile.LookupFile(func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	}, "VESSEL_EGRESS_TOKEN")
	if err != nil {
		return nil, err
	}
	c.token = strings.TrimSpace(token)
	if c.token == "" {
		return nil, errors.New("no egress token: set VESSEL_EGRESS_TOKEN_FILE or VESSEL_EGRESS_TOKEN")
	}
	switch v := getenv("VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM"); v {
	case "", "0", "false":
	case "1", "true":
		c.allowHTTP = true
	default:
		return nil, fmt.Errorf("VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM=%q: want 1 or 0", v)
	}
	cidrs, err := guard.ParseCIDRList(getenv("VESSEL_EGRESS_ALLOW_CIDRS"))
	if err != nil {
		return nil, fmt.Errorf("VESSEL_EGRESS_ALLOW_CIDRS: %w", err)
	}
	ports, err := guard.ParsePortList(getenv("VESSEL_EGRESS_ALLOW_PORTS"))
	if err != nil {
		return nil, fmt.Errorf("VESSEL_EGRESS_ALLOW_PORTS: %w", err)
	}
	if v := strings.TrimSpace(getenv("VESSEL_EGRESS_BUDGETS")); v != "" {
		if c.budgets, err = budgets.ParseBudgets(v); err != nil {
			return nil, fmt.Errorf("VESSEL_EGRESS_BUDGETS: %w", err)
		}
	}
	if path := strings.TrimSpace(getenv("VESSEL_EGRESS_WEB_CLIENTS_FILE")); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("VESSEL_EGRESS_WEB_CLIENTS_FILE: %w", err)
		}
		if c.clients, err = webproxy.LoadClients(b, c.token); err != nil {
			return nil, fmt.Errorf("VESSEL_EGRESS_WEB_CLIENTS_FILE %s: %w", path, err)
		}
	}
	c.policy = guard.Config{
		AllowCIDRs: cidrs,
		AllowHosts: guard.SplitList(getenv("VESSEL_EGRESS_ALLOW_HOSTS")),
		AllowPorts: ports,
	}
	return c, nil
}

// run serves both listeners until ctx ends. ready, when non-nil, receives
// the bound addresses (model, proxy) once both listen.
func run(ctx context.Context, args []string, getenv func(string) string, log *zap.Logger, ready func(model, proxy string)) error {
	c, err := loadConfig(args, getenv)
	if err != nil {
		return fmt.Errorf("egress config: %w", err)
	}
	if logLevel != nil {
		l, _ := telemetry.ParseLevel(c.logLevel) // checked by loadConfig
		logLevel.SetLevel(l)
	}
	reg := telemetry.NewRegistry()
	var aw *audit.Writer
	if c.auditLog != "" {
		rlo, err := rotlog.OptionsFromEnv(getenv)
		if err != nil {
			return err
		}
		if aw, err = audit.Open(c.auditLog, "egress", audit.BuildVersion(), rlo); err != nil {
			return fmt.Errorf("--audit-log: %w", err)
		}
		defer aw.Close()
	}
	mh, err := modelproxy.New(modelproxy.Config{
		Upstream: c.upstream, Key: redact.Secret(c.key), UpstreamAuth: c.upstreamAuth, Routes: c.routes, Token: redact.Secret(c.token), AllowHTTP: c.allowHTTP,
		Logger: log.Named("model"), Metrics: modelproxy.NewMetrics(reg), Audit: aw, Budgets: c.budgets,
	})
	if err != nil {
		return fmt.Errorf("egress model passthrough: %w", err)
	}
	mln, err := listenTCP(ctx, c.modelListen, "--model-listen")
	if err != nil {
		return err
	}
	defer mln.Close()
	pln, err := listenTCP(ctx, c.proxyListen, "--proxy-listen")
	if err != nil {
		return err
	}
	defer pln.Close()

	// The proxy must never reach the egress itself (its own addresses on
	// its own ports, e.g. the model passthrough).
	self, err := guard.LocalAddrs()
	if err != nil {
		return fmt.Errorf("egress self addresses: %w", err)
	}
	c.policy.SelfAddrs = self
	c.policy.SelfPorts = []uint16{listenPort(mln.Addr()), listenPort(pln.Addr())}
	// The metrics listener is the egress's too: the proxy never reaches it.
	ms, err := telemetry.ServeMetrics(c.metricsListen, reg, log)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	defer ms.Close()
	if ms != nil {
		c.policy.SelfPorts = append(c.policy.SelfPorts, listenPort(ms.Addr()))
	}
	pol, err := guard.New(c.policy)
	if err != nil {
		return fmt.Errorf("egress policy: %w", err)
	}
	cidrs, hosts, ports := pol.Describe()
	if len(cidrs)+len(hosts)+len(ports) > 0 {
		log.Warn("egress policy widened by the operator",
			zap.Strings("allow_cidrs", cidrs), zap.Strings("allow_hosts", hosts), zap.Strings("allow_ports", ports))
	} else {
		log.Info("egress policy: public addresses on ports 80 and 443 only")
	}
	if c.clients.Len() > 0 {
		log.Info("egress web proxy: clients must authenticate", zap.Int("clients", c.clients.Len()))
	} else {
		log.Warn("egress web proxy: no VESSEL_EGRESS_WEB_CLIENTS_FILE; any caller on its network is served, with no names policy")
	}
	wp, err := webproxy.New(webproxy.Options{Policy: pol, Logger: log.Named("proxy"), Metrics: webproxy.NewMetrics(reg), Clients: c.clients, Audit: aw})
	if err != nil {
		return fmt.Errorf("egress web proxy: %w", err)
	}
	defer wp.Close()

	msrv := &http.Server{Handler: mh, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 5 * time.Minute, IdleTimeout: 2 * time.Minute}
	psrv := &http.Server{Handler: wp, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 2)
	go func() { errc <- serve(msrv, mln) }()
	go func() { errc <- serve(psrv, pln) }()
	log.Info("egress listening",
		zap.String("model", mln.Addr().String()), zap.String("proxy", pln.Addr().String()),
		zap.String("upstream", mh.Upstream()), zap.Bool("model_key_set", c.key != ""), zap.Strings("routes", mh.Routes()))
	if ready != nil {
		ready(mln.Addr().String(), pln.Addr().String())
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = msrv.Shutdown(sctx)
	_ = psrv.Shutdown(sctx)
	return runErr
}

// addrInUseError is a listen address some other process holds.
type addrInUseError struct {
	addr, flag string
	err        error
}

func (e *addrInUseError) Error() string {
	return fmt.Sprintf("%s is already in use (another process listens there): stop that process or pass %s with another address", e.addr, e.flag)
}

func (e *addrInUseError) Unwrap() error { return e.err }

// listenTCP listens on addr; a busy address is an *addrInUseError.
func listenTCP(ctx context.Context, addr, flag string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &addrInUseError{addr: addr, flag: flag, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s (%s): %w", addr, flag, err)
	}
	return ln, nil
}

func serve(s *http.Server, ln net.Listener) error {
	if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}

func listenPort(a net.Addr) uint16 {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Port()
	}
	_, p, _ := net.SplitHostPort(a.String())
	n, _ := strconv.Atoi(p)
	return uint16(n)
}

// loadRoutes reads the routes of VESSEL_EGRESS_ROUTES and their keys, each
// from the variable the route names (never from the JSON itself).
func loadRoutes(v string, getenv func(string) string) ([]modelproxy.Route, error) {
	m, err := routes.ParseRoutes(v)
	if err != nil {
		return nil, err
	}
	out := make([]modelproxy.Route, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		r := m[name]
		key := ""
		if r.KeyEnv != "" {
			key = strings.TrimSpace(getenv(r.KeyEnv))
		}
		out = append(out, modelproxy.Route{Name: name, Route: r, Key: redact.Secret(key)})
	}
	return out, nil
}
