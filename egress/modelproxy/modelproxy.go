// Package modelproxy is the egress's OpenAI-compatible passthrough: it
// accepts only callers presenting the egress token, replaces their
// Authorization with the real model key, and streams the upstream's answer
// back without buffering. The key lives here and nowhere else.
package modelproxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/budgets"
	"github.com/astraldeep/astralvessel-go/runtime/redact"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/statuswriter"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// MaxRequestBytes bounds a model request body (the vessel's own limit).
const MaxRequestBytes = 16_000_000

// maxErrorBody bounds how much of an upstream error answer is read to
// scrub the key out of it.
const maxErrorBody = 1 << 20

// Config configures the passthrough.
type Config struct {
	// Upstream is the OpenAI-compatible base URL (what an OpenAI SDK takes
	// as base_url, e.g. https://api.example.com/v1). A request for
	// /v1/<rest> is sent to Upstream + /<rest>.
	Upstream string
	// Key is the real model key of the default route, sent upstream as
	// UpstreamAuth says. May be empty for upstreams that need none. A
	// redact.Secret: a Config printed or logged by mistake shows neither it
	// nor Token.
	Key redact.Secret
	// UpstreamAuth is the default route's auth style (routes.AuthBearer,
	// AuthAPIKey, AuthNone); empty is bearer with a key, none without.
	UpstreamAuth string
	// Routes are the named routes besides the default one (Upstream); a
	// request picks one with routes.RouteHeader.
	Routes []Route
	// Token is what callers must present as "Authorization: Bearer".
	Token redact.Secret
	// AllowHTTP permits a plain-HTTP upstream (local models, tests).
	AllowHTTP bool
	// Transport overrides the upstream transport (tests).
	Transport http.RoundTripper
	// HeaderTimeout bounds the wait for the upstream's response headers
	// (default 10 minutes: non-streamed completions can be slow).
	HeaderTimeout time.Duration
	Logger        *zap.Logger
	// Metrics receives the series (NewMetrics); nil keeps them in a
	// registry nobody reads.
	Metrics *Metrics
	// Audit receives one OCSF Network Activity event per request: sent
	// upstream, or refused (docs/audit.md); nil writes none.
	Audit *audit.Writer
	// Budgets are the token ceilings (VESSEL_EGRESS_BUDGETS); none set
	// counts nothing.
	Budgets budgets.Budgets
	// Now is the clock of the budget days (tests); nil is time.Now.
	Now func() time.Time
}

// Handler is the passthrough http.Handler.
type Handler struct {
	routes    map[string]*route // by name; routes.DefaultRoute is Upstream
	def       *route
	tokenHash [32]byte
	rp        *httputil.ReverseProxy
	log       *zap.Logger
	met       *Metrics
	agents    agentLabels
	audit     *audit.Writer
	ledger    *ledger // nil: no budget
}

// New validates the configuration and builds the handler.
func New(c Config) (*Handler, error) {
	if c.Token == "" {
		return nil, errors.New("modelproxy: an egress token is required")
	}
	def, err := newRoute(routes.DefaultRoute, routes.ModelRoute{URL: c.Upstream, Auth: c.UpstreamAuth, AllowHTTP: c.AllowHTTP}, c.Key.Reveal())
	if err != nil {
		if strings.Contains(err.Error(), "plain HTTP") {
			err = fmt.Errorf("%w (VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM=1 allows it)", err)
		}
		return nil, err
	}
	byName := map[string]*route{routes.DefaultRoute: def}
	for _, r := range c.Routes {
		if msg := routes.CheckRouteName(r.Name); msg != "" {
			return nil, fmt.Errorf("modelproxy: %s", msg)
		}
		if _, dup := byName[r.Name]; dup {
			return nil, fmt.Errorf("modelproxy: route %s is named twice", r.Name)
		}
		if byName[r.Name], err = newRoute(r.Name, r.Route, r.Key.Reveal()); err != nil {
			return nil, err
		}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = 10 * time.Minute
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	h := &Handler{routes: byName, def: def, tokenHash: sha256.Sum256([]byte(c.Token)), log: c.Logger, met: c.Metrics, audit: c.Audit}
	if c.Budgets.Any() {
		h.ledger = newLedger(c.Budgets, c.Now)
	}
	tr := c.Transport
	if tr == nil {
		tr = &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: c.HeaderTimeout,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   64,
			ForceAttemptHTTP2:     true,
		}
	}
	h.rp = &httputil.ReverseProxy{
		Rewrite:        h.rewrite,
		Transport:      tr,
		FlushInterval:  -1, // flush every write: streams pass through as they come
		ErrorHandler:   h.upstreamError,
		ModifyResponse: h.scrubResponse,
		ErrorLog:       nil,
	}
	return h, nil
}

// Upstream returns the default route's base URL for start-up logs.
func (h *Handler) Upstream() string { return h.def.Base.String() }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/health" || !telemetry.TracingOn() {
		h.serve(w, r)
		return
	}
	ctx, span := startSpan(r)
	sw := statuswriter.New(w)
	h.serve(sw, r.WithContext(ctx))
	endSpan(span, sw.Code())
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.URL.Path == "/health" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
		return
	}
	if !h.authorized(r) {
		h.logReq(r, http.StatusUnauthorized, start, "bad or missing egress token")
		writeError(w, http.StatusUnauthorized, "unauthorized", "missing or wrong egress token")
		return
	}
	rt, ok := h.pickRoute(r)
	if !ok {
		h.logReq(r, http.StatusBadRequest, start, "unknown route")
		writeError(w, http.StatusBadRequest, "unknown_route", fmt.Sprintf("route %q (%s) is not configured at the egress; configured: %s",
			truncate(r.Header.Get(routes.RouteHeader), 64), routes.RouteHeader, strings.Join(h.Routes(), ", ")))
		return
	}
	r = r.WithContext(withRoute(r.Context(), rt))
	if r.URL.Path != "/v1" && !strings.HasPrefix(r.URL.Path, "/v1/") {
		h.logReq(r, http.StatusNotFound, start, "path outside /v1")
		writeError(w, http.StatusNotFound, "not_found", "only /v1/... is forwarded")
		return
	}
	// Before the key is attached: a path the upstream would resolve
	// outside its base (dot segments, encoded separators) is not forwarded.
	if why := pathProblem(r.URL.EscapedPath()); why != "" {
		h.logReq(r, http.StatusBadRequest, start, "path refused: "+why)
		writeError(w, http.StatusBadRequest, "bad_path", "the path "+why+"; only plain /v1/... paths are forwarded")
		return
	}
	if r.ContentLength > MaxRequestBytes {
		h.logReq(r, http.StatusRequestEntityTooLarge, start, "body too large")
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("request body over %d bytes", MaxRequestBytes))
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	}
	r = r.WithContext(withAgent(r.Context(), h.agents.label(r.Header.Get(telemetry.AgentHeader))))
	if h.ledger != nil {
		// Only here, past the egress token: an unauthenticated caller
		// neither spends nor reads anyone's budget.
		wh := who{turn: telemetry.CleanTaskID(r.Header.Get(telemetry.TaskIDHeader)), owner: r.Header.Get(telemetry.OwnerHeader),
			agent: r.Header.Get(telemetry.AgentHeader)}
		if len(wh.owner) > MaxOwnerHeader {
			h.logReq(r, http.StatusBadRequest, start, "owner header too long")
			writeError(w, http.StatusBadRequest, "bad_owner", fmt.Sprintf("%s is over %d bytes", telemetry.OwnerHeader, MaxOwnerHeader))
			return
		}
		if !agentPattern.MatchString(wh.agent) {
			wh.agent = "invalid"
		}
		if o := h.ledger.admit(wh); o != nil {
			h.met.refusals.WithLabelValues(o.scope).Inc()
			h.logReq(r, http.StatusTooManyRequests, start, "budget: "+o.scope+" ceiling reached")
			writeError(w, http.StatusTooManyRequests, BudgetCode, o.message(false))
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), whoKey{}, wh))
	}
	sw := statuswriter.New(w)
	h.rp.ServeHTTP(sw, r)
	class := statusClass(sw.Code())
	h.met.requests.WithLabelValues(class, "forwarded", rt.Name).Inc()
	h.met.duration.WithLabelValues(class).Observe(time.Since(start).Seconds())
	h.logReq(r, sw.Code(), start, "")
}

// maxDecodeRounds bounds how often a path segment is percent-decoded when
// checked: a proxy or framework in front of the model may decode again, so
// a segment must stay harmless however often it is decoded (%252e%252e is
// .. after two rounds).
const maxDecodeRounds = 4

// pathProblem says why the raw (still percent-encoded) request path must
// not be sent upstream with the key, or returns "". The path /v1/<rest>
// goes to the upstream base + /<rest>, so <rest> must not climb out of the
// base however the upstream reads it: refused are dot segments ("." and
// "..", also encoded in any case, or followed by ";params" as some servers
// strip them), encoded slashes (%2f) and backslashes, literal or encoded
// (some servers treat both as separators), NUL and other control bytes,
// and segments still encoded after maxDecodeRounds. A real
// model client never sends any of these, so dot segments are refused even
// where they would resolve inside the base.
func pathProblem(raw string) string {
	for _, seg := range strings.Split(raw, "/") {
		s := seg
		for round := 0; ; round++ {
			if strings.ContainsRune(s, '\\') {
				return "holds a backslash"
			}
			if name, _, _ := strings.Cut(s, ";"); name == "." || name == ".." {
				return "has a dot segment"
			}
			for _, c := range []byte(s) {
				if c < 0x20 || c == 0x7f {
					return "holds a control character"
				}
			}
			if round > 0 && strings.ContainsRune(s, '/') {
				return "holds an encoded slash"
			}
			if !strings.ContainsRune(s, '%') {
				break
			}
			if round == maxDecodeRounds {
				return "is encoded too many times"
			}
			d, err := url.PathUnescape(s)
			if err != nil {
				break // a literal %: no decoder turns it into anything else
			}
			s = d
		}
	}
	return ""
}

// authorized compares the presented token in constant time (hashing
// first, so the comparison also hides the length).
func (h *Handler) authorized(r *http.Request) bool {
	// Two Authorization headers are refused, never one of them picked.
	vs := r.Header.Values("Authorization")
	if len(vs) != 1 {
		return false
	}
	auth := vs[0]
	const prefix = "Bearer "
	if len(auth) < len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(auth[len(prefix):])))
	return subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) == 1
}

func (h *Handler) rewrite(pr *httputil.ProxyRequest) {
	in := pr.In.URL
	rest := strings.TrimPrefix(in.Path, "/v1")
	out := pr.Out
	rt := routeFrom(pr.In.Context())
	if rt == nil {
		rt = h.def
	}
	base := rt.Base
	out.URL.Scheme = base.Scheme
	out.URL.Host = base.Host
	out.URL.Path = base.Path + rest
	out.URL.RawPath = ""
	out.URL.RawQuery = in.RawQuery
	if len(rt.Query) > 0 {
		// The route's parameters (Azure's api-version) win over the
		// caller's of the same name.
		q := in.Query()
		maps.Copy(q, rt.Query)
		out.URL.RawQuery = q.Encode()
	}
	out.Host = base.Host
	// The caller's credentials never travel on; the model key replaces them.
	// Nor does the turn's task id, which is for the egress's log only.
	out.Header.Del(telemetry.TaskIDHeader)
	telemetry.StripTraceHeaders(out.Header) // the trace is the deployment's own
	out.Header.Del(telemetry.AgentHeader)
	out.Header.Del(telemetry.OwnerHeader)
	out.Header.Del(routes.RouteHeader)
	out.Header.Del("Authorization")
	out.Header.Del("Api-Key")
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Cookie")
	// The caller's Accept-Encoding would make the transport hand over the
	// provider's compressed body as it is: the usage reader (budgets,
	// token counts) and the key scrubbing must read plain bytes, so the
	// transport asks for gzip itself and decompresses.
	out.Header.Del("Accept-Encoding")
	rt.authorize(out.Header)
	// Do not leak the internal network layout upstream.
	out.Header.Del("Forwarded")
	out.Header.Del("X-Forwarded-For")
	out.Header.Del("X-Forwarded-Host")
	out.Header.Del("X-Forwarded-Proto")
	out.Header.Del("X-Real-Ip")
}

// scrubResponse removes the key from error answers: some providers echo
// the key they were given in a 401. Successful (streamed) answers pass
// untouched, read on the way for the tokens they report
// (egress_model_tokens_total).
func (h *Handler) scrubResponse(resp *http.Response) error {
	if resp.StatusCode == http.StatusOK && resp.Body != nil {
		agent := agentFrom(resp.Request.Context())
		rl := routeLabel(routeFrom(resp.Request.Context()))
		ur := newUsageReader(resp.Body, resp.Header.Get("Content-Type"), func(in, out int64) {
			h.met.tokens.WithLabelValues(agent, "in", rl).Add(float64(in))
			h.met.tokens.WithLabelValues(agent, "out", rl).Add(float64(out))
		})
		if wh, ok := resp.Request.Context().Value(whoKey{}).(who); ok && h.ledger != nil {
			ur.report = h.spend(wh, rl)
		}
		resp.Body = ur
	}
	if !h.anyKey() {
		return nil
	}
	for k, vs := range resp.Header {
		for i, v := range vs {
			resp.Header[k][i] = h.redact(v)
		}
	}
	if resp.StatusCode < 400 {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("modelproxy: read upstream error body: %w", err)
	}
	body = h.redactBytes(body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding") // a compressed body would not have matched; keep it honest
	return nil
}

func (h *Handler) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			fmt.Sprintf("request body over %d bytes", MaxRequestBytes))
		return
	}
	if r.Context().Err() != nil {
		// The caller went away; there is nobody to answer.
		w.WriteHeader(499)
		return
	}
	rt := routeFrom(r.Context())
	if rt == nil {
		rt = h.def
	}
	h.log.Warn("model upstream unreachable",
		zap.String("route", rt.Name), zap.String("upstream", rt.Base.Host),
		zap.String("error", h.redact(err.Error())))
	writeError(w, http.StatusBadGateway, "upstream_unavailable",
		"the model endpoint behind the egress did not answer")
}

func (h *Handler) logReq(r *http.Request, status int, start time.Time, note string) {
	rt := routeFrom(r.Context())
	if note != "" {
		h.met.requests.WithLabelValues(statusClass(status), "refused", routeLabel(rt)).Inc()
	}
	fields := []zap.Field{
		zap.String("method", r.Method),
		zap.String("path", r.URL.Path),
		zap.Int("status", status),
		zap.Float64("ms", float64(time.Since(start).Microseconds())/1000),
	}
	if id := r.Header.Get(telemetry.TaskIDHeader); id != "" {
		fields = append(fields, zap.String(telemetry.FieldTask, telemetry.CleanTaskID(id)))
	}
	if a := r.Header.Get(telemetry.AgentHeader); a != "" {
		fields = append(fields, zap.String(telemetry.FieldAgent, telemetry.CleanTaskID(a)))
	}
	if rt != nil {
		fields = append(fields, zap.String("route", rt.Name))
	}
	if note != "" {
		fields = append(fields, zap.String("note", note))
	}
	h.log.Info("model request", fields...)
	if h.audit != nil {
		dst := rt
		if dst == nil {
			dst = h.def
		}
		reason := "forwarded"
		if note != "" {
			reason = note
		}
		ev := audit.NetworkActivity(&audit.Decision{Allow: note == "", Failed: status == http.StatusBadGateway, Reason: reason,
			Method: r.Method, Remote: r.RemoteAddr, Host: dst.Base.Hostname(), Port: dst.port(), Route: routeLabel(rt),
			Task: telemetry.CleanTaskID(r.Header.Get(telemetry.TaskIDHeader)), Kind: "model", Time: time.Now()})
		if err := h.audit.Emit(ev); err != nil {
			h.log.Warn("audit event not written", zap.Error(err))
		}
	}
}

// writeError answers in the OpenAI error shape so model clients show it.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Egress-Error", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "egress_error", "code": code,
	}})
}

type whoKey struct{}

// spend charges a forwarded answer's reported usage to its scopes as it
// comes (a running total is charged by its growth), and cuts a stream
// whose usage goes past a ceiling with an SSE error event (when canCut:
// something of the answer is still to come).
func (h *Handler) spend(wh who, route string) func(in, out int64, canCut bool) []byte {
	var charged int64
	return func(in, out int64, canCut bool) []byte {
		total := in + out
		delta := max(total-charged, 0)
		charged = max(charged, total)
		o := h.ledger.charge(wh, delta)
		if o == nil || !canCut {
			return nil
		}
		h.met.cuts.WithLabelValues(o.scope).Inc()
		h.log.Warn("model answer cut: token budget exceeded", zap.String("scope", o.scope),
			zap.Int64("used", o.used), zap.Int64("limit", o.limit),
			zap.String(telemetry.FieldTask, wh.turn), zap.String(telemetry.FieldAgent, wh.agent), zap.String("route", route))
		return budgetEvent(o.message(true))
	}
}

// budgetEvent is the SSE event that ends a cut stream, in the OpenAI
// error shape a streaming client reads. The stream is cut just after the
// crossing data line, so a blank line first ends that line's event.
func budgetEvent(msg string) []byte {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "egress_error", "code": BudgetCode}})
	return append(append([]byte("\ndata: "), b...), "\n\n"...)
}

// pickRoute is the route a request names (routes.RouteHeader), the default
// route when it names none.
func (h *Handler) pickRoute(r *http.Request) (*route, bool) {
	name := r.Header.Get(routes.RouteHeader)
	if name == "" {
		return h.def, true
	}
	rt, ok := h.routes[name]
	return rt, ok
}
