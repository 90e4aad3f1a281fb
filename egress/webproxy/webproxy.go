// Package webproxy is the egress's guarded HTTP proxy (absolute-URI and
// CONNECT). It resolves every name itself, checks every resolved address
// with guard.Policy.Check, and dials exactly an address it checked, so a
// DNS answer that changes between check and dial (rebinding) cannot move a
// connection onto a refused address.
package webproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"strings"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/egress/guard"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// Resolver looks names up; *net.Resolver satisfies it. Tests inject stubs.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens TCP connections; *net.Dialer satisfies it. The proxy only
// ever passes it an "ip:port" literal that has just passed the policy.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Options configure a Proxy. Policy is required.
type Options struct {
	Policy         *guard.Policy
	Resolver       Resolver      // default net.DefaultResolver
	Dialer         Dialer        // default net.Dialer with ConnectTimeout
	Logger         *zap.Logger   // default zap.NewNop()
	DNSTimeout     time.Duration // default 5s
	ConnectTimeout time.Duration // default 10s
	// HeaderTimeout bounds how long an origin may take to start answering
	// an absolute-URI request (default 60s).
	HeaderTimeout time.Duration
	// TunnelIdleTimeout closes a CONNECT tunnel when no byte has moved in
	// either direction for this long (default 5m), so an abandoned tunnel
	// cannot hold two sockets open forever.
	TunnelIdleTimeout time.Duration
	// TLSConfig verifies origins of absolute-URI https:// requests
	// (default: system roots). CONNECT tunnels are never inspected.
	TLSConfig *tls.Config
	// Metrics receives the series (NewMetrics); nil keeps them in a
	// registry nobody reads.
	Metrics *Metrics
	// Clients, when set, are the only callers served: a request without
	// a client's Proxy-Authorization gets 407, and each client's domain
	// policy applies to its requests. Nil serves any caller (no names
	// policy), as before clients existed.
	Clients *Clients
	// Audit receives one OCSF Network Activity event per decision
	// (docs/audit.md); nil writes none.
	Audit *audit.Writer
}

// Header names of the denial contract.
const (
	HeaderDenied = "X-Egress-Denied" // policy refusal reason (403)
	HeaderError  = "X-Egress-Error"  // resolution or connection failure (502)
)

// Proxy is an http.Handler serving proxy requests.
type Proxy struct {
	opt  Options
	gp   *goproxy.ProxyHttpServer
	tr   *http.Transport
	log  *zap.Logger
	bufs *buffers
}

type ctxKey struct{}

// decision is what the proxy learned about one request's destination.
type decision struct {
	method   string
	rawHost  string
	host     guard.Host
	port     uint16
	addrs    []netip.Addr // every address checked and allowed, in dial order
	denied   netip.Addr   // the address that was refused, if any
	allow    bool
	status   int    // 403 for policy, 502 for resolution failures
	reason   string // policy reason or failure kind
	dnsDur   time.Duration
	connDur  time.Duration
	dialedTo string
	task     string // the turn's task id the vessel sent, for the log
	client   string // the authenticated client's name
	// policy is the domain policy's words when it refused; wouldRefuse
	// what it would have refused in report-only mode.
	policy      string
	wouldRefuse string
	// parent is the request's context with the vessel's trace context
	// (traceparent) in it, began when the decision started: the decision's
	// span is made from them when it is logged.
	parent context.Context
	began  time.Time
	src    string // the caller's address, for the audit event
}

// taskOf is the turn's task id a request names (telemetry.TaskIDHeader),
// made safe to log.
func taskOf(r *http.Request) string {
	if id := r.Header.Get(telemetry.TaskIDHeader); id != "" {
		return telemetry.CleanTaskID(id)
	}
	return ""
}

// New builds a proxy.
func New(o Options) (*Proxy, error) {
	if o.Policy == nil {
		return nil, errors.New("webproxy: a policy is required")
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	if o.DNSTimeout <= 0 {
		o.DNSTimeout = 5 * time.Second
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 10 * time.Second
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 60 * time.Second
	}
	if o.TunnelIdleTimeout <= 0 {
		o.TunnelIdleTimeout = 5 * time.Minute
	}
	if o.Dialer == nil {
		// The policy runs once more at the socket, on the address the
		// kernel is about to connect to.
		o.Dialer = &net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second, ControlContext: o.Policy.DialControl}
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	p := &Proxy{opt: o, log: o.Logger, bufs: newBuffers()}
	p.tr = &http.Transport{
		Proxy: nil, // never chain to an environment proxy
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			d, ok := ctx.Value(ctxKey{}).(*decision)
			if !ok {
				return nil, errors.New("webproxy: dial without a policy decision")
			}
			return p.dial(ctx, d)
		},
		TLSClientConfig:       o.TLSConfig,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: o.HeaderTimeout,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		DisableCompression:    true, // pass bodies through untouched
		// Larger buffers than the 4 KB default: fewer syscalls per copied MB.
		ReadBufferSize:  64 << 10,
		WriteBufferSize: 64 << 10,
	}
	gp := goproxy.NewProxyHttpServer()
	gp.Verbose = false
	gp.Logger = zapPrintf{o.Logger}
	gp.Tr = p.tr
	gp.KeepAcceptEncoding = true
	gp.ConnectDial = nil // allowed CONNECTs are hijacked and dial the checked address themselves
	gp.ConnectDialWithReq = nil
	gp.NonproxyHandler = http.HandlerFunc(nonProxy)
	gp.OnRequest().HandleConnectFunc(p.handleConnect)
	gp.OnRequest().DoFunc(p.handleHTTP)
	p.gp = gp
	return p, nil
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// With tracing on, the vessel's traceparent (on the CONNECT, or on a
	// plain-HTTP request) is the parent of the decision's span.
	r = r.WithContext(telemetry.ExtractHTTP(r.Context(), r.Header))
	if len(r.Header.Values("Proxy-Authorization")) > 1 {
		// Two credentials are ambiguous (which one did the client mean, which
		// one would a later hop read?): refused whether clients are configured
		// or not, before anything is looked up.
		p.refuseDuplicateCredentials(w, r)
		return
	}
	if p.opt.Clients.Len() > 0 && (r.Method == http.MethodConnect || r.URL.IsAbs()) {
		c := p.opt.Clients.authenticate(r)
		if c == nil {
			d := &decision{method: r.Method, rawHost: r.Host, status: http.StatusProxyAuthRequired, reason: ReasonUnauthenticated}
			if r.Method != http.MethodConnect {
				d.rawHost = r.URL.Host
			}
			p.logDecision(d, nil)
			w.Header().Set("Proxy-Authenticate", `Basic realm="astralvessel-egress"`)
			w.Header().Set(HeaderDenied, ReasonUnauthenticated)
			w.Header().Set("Connection", "close")
			http.Error(w, "egress: proxy authentication required", http.StatusProxyAuthRequired)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), clientKey{}, c))
	}
	// The credentials are the egress's; no origin sees them.
	r.Header.Del("Proxy-Authorization")
	if r.Method == http.MethodConnect {
		if hj, ok := w.(http.Hijacker); ok {
			w = hijackWriter{ResponseWriter: w, hj: hj}
		}
	}
	p.gp.ServeHTTP(w, r)
}

// refuseDuplicateCredentials answers a request that carries more than one
// Proxy-Authorization header: 400, logged as a decision with reason
// ReasonDuplicateCredentials (the values themselves are never logged).
func (p *Proxy) refuseDuplicateCredentials(w http.ResponseWriter, r *http.Request) {
	d := &decision{method: r.Method, rawHost: r.Host, status: http.StatusBadRequest, reason: ReasonDuplicateCredentials}
	if r.Method != http.MethodConnect && r.URL.IsAbs() {
		d.rawHost = r.URL.Host
	}
	p.logDecision(d, nil)
	w.Header().Set(HeaderDenied, ReasonDuplicateCredentials)
	w.Header().Set("Connection", "close")
	http.Error(w, "egress: more than one Proxy-Authorization header", http.StatusBadRequest)
}

// Close drops idle upstream connections.
func (p *Proxy) Close() { p.tr.CloseIdleConnections() }

func nonProxy(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
		return
	}
	http.Error(w, "egress web proxy: send absolute-URI or CONNECT requests", http.StatusBadRequest)
}

// decide resolves hostport once and checks every address it got.
func (p *Proxy) decide(ctx context.Context, method, hostport string, defaultPort uint16) *decision {
	d := &decision{method: method, rawHost: hostport, status: http.StatusForbidden, parent: ctx, began: time.Now()}
	h, port, err := guard.ParseHostPort(hostport, defaultPort)
	if err != nil {
		d.reason = "bad-host"
		return d
	}
	d.host, d.port = h, port
	if c := clientFrom(ctx); c != nil {
		d.client = c.Name
		if why := c.checkName(d); why != "" {
			d.reason, d.policy = ReasonNamePolicy, why // refuse before any DNS traffic
			return d
		}
	}
	if port != 80 && port != 443 && !p.opt.Policy.MayUsePort(port) {
		d.reason = guard.ReasonPort // refuse before any DNS traffic
		return d
	}
	var addrs []netip.Addr
	if h.IsIP() {
		addrs = []netip.Addr{h.Addr}
	} else {
		lctx, cancel := context.WithTimeout(ctx, p.opt.DNSTimeout)
		start := time.Now()
		res, err := p.opt.Resolver.LookupNetIP(lctx, "ip", h.Name)
		d.dnsDur = time.Since(start)
		cancel()
		if err != nil || len(res) == 0 {
			d.status, d.reason = http.StatusBadGateway, "dns-failed"
			return d
		}
		seen := map[netip.Addr]bool{}
		for _, a := range res {
			// Resolvers hand IPv4 answers back in 16-byte form; the unmapped
			// address is what gets checked and what gets dialled.
			a = a.Unmap()
			if !seen[a] {
				seen[a] = true
				addrs = append(addrs, a)
			}
		}
	}
	for _, a := range addrs {
		dec := p.opt.Policy.Check(h.Name, a, port)
		if !dec.Allow {
			d.denied, d.reason = a, dec.Reason
			return d
		}
		d.reason = dec.Reason
	}
	d.allow, d.addrs, d.status = true, addrs, 0
	return d
}

// dial connects to the first reachable address of an allowed decision,
// re-checking each address right before the dial.
func (p *Proxy) dial(ctx context.Context, d *decision) (net.Conn, error) {
	if !d.allow || len(d.addrs) == 0 {
		return nil, errors.New("webproxy: dial of a refused destination")
	}
	start := time.Now()
	var errs []error
	for _, a := range d.addrs {
		if dec := p.opt.Policy.Check(d.host.Name, a, d.port); !dec.Allow {
			return nil, fmt.Errorf("webproxy: %s refused at dial: %s", a, dec.Reason)
		}
		target := netip.AddrPortFrom(a, d.port).String()
		dctx, cancel := context.WithTimeout(guard.WithHost(ctx, d.host.Name), p.opt.ConnectTimeout)
		c, err := p.opt.Dialer.DialContext(dctx, "tcp", target)
		cancel()
		if err == nil {
			d.connDur, d.dialedTo = time.Since(start), target
			p.opt.Metrics.connect.Observe(d.connDur.Seconds())
			return c, nil
		}
		errs = append(errs, err)
	}
	d.connDur = time.Since(start)
	return nil, fmt.Errorf("webproxy: connect %s: %w", d.host, errors.Join(errs...))
}

func (p *Proxy) handleConnect(hostport string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	d := p.decide(ctx.Req.Context(), http.MethodConnect, hostport, 443)
	d.task, d.src = taskOf(ctx.Req), ctx.Req.RemoteAddr
	if !d.allow {
		p.logDecision(d, nil)
		ctx.Resp = denial(ctx.Req, d)
		return goproxy.RejectConnect, hostport
	}
	return p.connectAction(d), hostport
}

func (p *Proxy) handleHTTP(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	// The task id is for the egress's log; the origin never sees it.
	task := taskOf(r)
	r.Header.Del(telemetry.TaskIDHeader)
	// Nor the trace context: the trace is the deployment's own.
	telemetry.StripTraceHeaders(r.Header)
	var defPort uint16
	switch strings.ToLower(r.URL.Scheme) {
	case "http":
		defPort = 80
	case "https":
		defPort = 443
	default:
		d := &decision{method: r.Method, rawHost: r.URL.Host, status: http.StatusForbidden, reason: "scheme", task: task, client: clientName(r), parent: r.Context(), began: time.Now(), src: r.RemoteAddr}
		p.logDecision(d, nil)
		return r, denial(r, d)
	}
	if r.URL.User != nil {
		d := &decision{method: r.Method, rawHost: r.URL.Host, status: http.StatusForbidden, reason: "userinfo", task: task, client: clientName(r), parent: r.Context(), began: time.Now(), src: r.RemoteAddr}
		p.logDecision(d, nil)
		return r, denial(r, d)
	}
	d := p.decide(r.Context(), r.Method, r.URL.Host, defPort)
	d.task, d.src = task, r.RemoteAddr
	if !d.allow {
		p.logDecision(d, nil)
		return r, denial(r, d)
	}
	ctx.RoundTripper = goproxy.RoundTripperFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			reused = i.Reused
			if i.Reused && i.Conn != nil {
				d.dialedTo = i.Conn.RemoteAddr().String()
			}
		}}
		c := httptrace.WithClientTrace(context.WithValue(req.Context(), ctxKey{}, d), trace)
		t0 := time.Now()
		resp, err := p.tr.RoundTrip(req.WithContext(c))
		if err == nil {
			p.opt.Metrics.upstream.Observe(time.Since(t0).Seconds())
		}
		if err != nil {
			d.status, d.reason = http.StatusBadGateway, "connect-failed"
			p.logDecision(d, err, zap.Bool("reused", reused))
			return denial(req, d), nil
		}
		p.logDecision(d, nil, zap.Bool("reused", reused), zap.Int("status", resp.StatusCode))
		// A 101 body is the upgraded connection itself, which goproxy
		// needs unwrapped.
		if resp.StatusCode != http.StatusSwitchingProtocols && resp.Body != nil && resp.Body != http.NoBody {
			resp.Body = &fastBody{ReadCloser: resp.Body, bufs: p.bufs, bytes: p.opt.Metrics.bytes.WithLabelValues("http")}
		}
		return resp, nil
	})
	return r, nil
}

// denial is the response for a refused or failed request: 403 with the
// policy reason, or 502 when the name did not resolve or nothing answered.
func denial(r *http.Request, d *decision) *http.Response {
	status := d.status
	if status == 0 {
		status = http.StatusForbidden
	}
	var body string
	if status == http.StatusForbidden && d.policy != "" {
		body = fmt.Sprintf("egress refused %s: %s (%s)\n", safeHost(d), d.reason, d.policy)
	} else if status == http.StatusForbidden {
		body = fmt.Sprintf("egress refused %s: %s\n", safeHost(d), d.reason)
	} else {
		body = fmt.Sprintf("egress could not reach %s: %s\n", safeHost(d), d.reason)
	}
	resp := goproxy.NewResponse(r, "text/plain; charset=utf-8", status, body)
	resp.Status = fmt.Sprintf("%d %s", status, http.StatusText(status))
	if status == http.StatusForbidden {
		resp.Header.Set(HeaderDenied, d.reason)
		if d.policy != "" {
			resp.Header.Set(HeaderPolicy, d.policy)
		}
	} else {
		resp.Header.Set(HeaderError, d.reason)
	}
	resp.Header.Set("Connection", "close")
	resp.Close = true
	return resp
}

func safeHost(d *decision) string {
	if d.host.IsIP() || d.host.Name != "" {
		return d.host.String()
	}
	return fmt.Sprintf("%q", truncate(d.rawHost, 100))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func (p *Proxy) logDecision(d *decision, err error, extra ...zap.Field) {
	addrs := make([]string, 0, len(d.addrs)+1)
	for _, a := range d.addrs {
		addrs = append(addrs, a.String())
	}
	if d.denied.IsValid() {
		addrs = append(addrs, d.denied.String())
	}
	verdict := "deny"
	if d.allow && err == nil {
		verdict = "allow"
	}
	p.opt.Metrics.decisions.WithLabelValues(verdict, d.reason).Inc()
	fields := []zap.Field{
		zap.String("method", d.method),
		zap.String("host", safeHostLog(d)),
		zap.Uint16("port", d.port),
		zap.Strings("resolved", addrs),
		zap.String("dialed", d.dialedTo),
		zap.String("decision", verdict),
		zap.String("reason", d.reason),
		zap.Float64("dns_ms", ms(d.dnsDur)),
		zap.Float64("connect_ms", ms(d.connDur)),
	}
	if d.task != "" {
		fields = append(fields, zap.String(telemetry.FieldTask, d.task))
	}
	if p.opt.Clients.Len() > 0 {
		fields = append(fields, zap.String("client", d.client))
	}
	if d.policy != "" {
		fields = append(fields, zap.String("policy", d.policy))
	}
	if d.wouldRefuse != "" {
		fields = append(fields, zap.Bool("report_only", true), zap.String("would_refuse", d.wouldRefuse))
	}
	if err != nil {
		fields = append(fields, zap.Error(err))
	}
	p.log.Info("egress decision", append(fields, extra...)...)
	decisionSpan(d, verdict, err)
	p.audit(d, verdict == "allow")
}

// audit writes the decision's Network Activity event: allowed and opened,
// allowed by the policy but failed (lookup or connection), or refused.
func (p *Proxy) audit(d *decision, ok bool) {
	if p.opt.Audit == nil {
		return
	}
	ip := ""
	switch {
	case d.denied.IsValid():
		ip = d.denied.String()
	case d.dialedTo != "":
		if ap, err := netip.ParseAddrPort(d.dialedTo); err == nil {
			ip = ap.Addr().String()
		}
	case len(d.addrs) > 0:
		ip = d.addrs[0].String()
	}
	// A lookup or connection that failed is no refusal of the policy's.
	failed := !ok && (d.allow || d.reason == "dns-failed" || d.reason == "connect-failed")
	ev := audit.NetworkActivity(&audit.Decision{Allow: ok || failed, Failed: failed, Reason: d.reason, Method: d.method,
		Remote: d.src, Host: safeHostLog(d), IP: ip, Port: int(d.port), Task: d.task, Kind: "proxy", Time: time.Now()})
	if err := p.opt.Audit.Emit(ev); err != nil {
		p.log.Warn("audit event not written", zap.Error(err))
	}
}

func safeHostLog(d *decision) string {
	if d.host.IsIP() || d.host.Name != "" {
		return d.host.String()
	}
	return truncate(d.rawHost, 100)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// zapPrintf routes goproxy's own warnings into the structured log.
type zapPrintf struct{ l *zap.Logger }

func (z zapPrintf) Printf(format string, v ...any) {
	z.l.Debug("goproxy", zap.String("msg", strings.TrimSpace(fmt.Sprintf(format, v...))))
}
