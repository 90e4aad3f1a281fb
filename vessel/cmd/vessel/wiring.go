package main

// What main.go hands the server besides the deployment: authenticators
// (app keys, token issuers), the tools beyond the sandbox's (service tools,
// `present`, the web tools), scope narrowing, image checks and the answer
// parts.

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/envfile"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/runtime/webclients"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/auth/jwt"
	"github.com/astraldeep/astralvessel-go/vessel/images"
	"github.com/astraldeep/astralvessel-go/vessel/primitives"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/tools/mcp"
	"github.com/astraldeep/astralvessel-go/vessel/tools/service"
	"github.com/astraldeep/astralvessel-go/vessel/tools/web"
)

// egressProxy is the egress web proxy's URL (VESSEL_EGRESS_PROXY): the
// vessel itself has no route out. With the vessel's egress token it
// carries the vessel's own web client credentials (webclients.Vessel).
// Unset (or "none") it is nil: no egress. The name egress:3128 means
// something only on a Compose network, where the deployer writes it; a
// vessel started elsewhere (the local stack without an egress, the load
// tool's stack) must never look that name up.
func egressProxy() (*url.URL, error) {
	proxy := os.Getenv("VESSEL_EGRESS_PROXY")
	if proxy == "" || proxy == "none" {
		return nil, nil
	}
	pu, err := url.Parse(proxy)
	if err != nil || pu.Host == "" {
		return nil, fmt.Errorf("VESSEL_EGRESS_PROXY %q is not a URL", proxy)
	}
	if tok := egressToken(); tok != "" && pu.User == nil {
		pu.User = url.UserPassword(webclients.Vessel, webclients.Token(tok, webclients.Vessel))
	}
	return pu, nil
}

// errNoEgress fails what would need the egress when none is configured,
// before any lookup or dial.
var errNoEgress = errors.New("no egress proxy is configured (VESSEL_EGRESS_PROXY): the vessel has no route out")

// proxyOrRefuse is a Transport's Proxy: the egress, or a refusal of every
// request when there is none (never a direct connection).
func proxyOrRefuse(pu *url.URL) func(*http.Request) (*url.URL, error) {
	if pu == nil {
		return func(*http.Request) (*url.URL, error) { return nil, errNoEgress }
	}
	return http.ProxyURL(pu)
}

// egressToken is the token the vessel presents to the egress as its model
// key (VESSEL_MODEL_KEY or VESSEL_MODEL_KEY_FILE); the web proxy
// credentials are derived from it. Empty when neither is set.
func egressToken() string {
	tok, _, err := envfile.LookupFile(func(name string) (string, bool) { return os.LookupEnv(name) }, "VESSEL_MODEL_KEY")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(tok)
}

// authenticators are the app keys, then the [[issuers]] tokens. A bad
// issuer entry stops the vessel rather than leaving it open or silently
// refusing everyone.
func authenticators(d *settings.Deployment, log *zap.Logger) (auth.Chain, error) {
	appKeys, err := auth.NewAppKeys(d.Apps)
	if err != nil {
		return nil, fmt.Errorf("apps: %w", err)
	}
	chain := auth.Chain{appKeys}
	if len(d.Issuers) == 0 {
		return chain, nil
	}
	pu, err := egressProxy()
	if err != nil {
		return nil, fmt.Errorf("issuers: %w", err)
	}
	// Key sets are fetched through the egress.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		Proxy:               proxyOrRefuse(pu),
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 4,
	}}
	base := ""
	if d.Path != "" {
		base = filepath.Dir(d.Path)
	}
	v, err := jwt.New(jwt.Config{Issuers: d.Issuers, HTTPClient: hc, BaseDir: base, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("issuers: %w", err)
	}
	for _, is := range d.Issuers {
		log.Info("token issuer", zap.String("id", is.ID), zap.String("issuer", is.Issuer), zap.Strings("agents", is.Agents))
	}
	return append(chain, jwt.Authenticator{V: v}), nil
}

// toolFactories offers service tools, the tools of granted remote MCP
// servers (reached directly on the vessel's networks, like services),
// `present`, and webfetch and
// websearch, which reach the web only through the egress proxy
// (VESSEL_EGRESS_PROXY) and the deployment's search container.
func toolFactories(d *settings.Deployment, log *zap.Logger) ([]tools.Factory, error) {
	cfg := web.ConfigFromEnv(os.Getenv, d.Search.Provider)
	cfg.EgressToken = egressToken()
	wc, err := web.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("web tools: %w", err)
	}
	return []tools.Factory{
		service.Factory(&service.Client{}),
		mcp.Factory(mcpClient(log)),
		primitives.Factory(primitives.NewTool(primitives.Limits{})),
		web.Factory(wc),
	}, nil
}

// mcpClient is the MCP client of the vessel's tools; a failed listing is
// logged (a server with tools = ["*"] then offers no tools).
func mcpClient(log *zap.Logger) *mcp.Client {
	return &mcp.Client{ListFailed: func(agent, server, reason string) {
		log.Warn("could not list an MCP server's tools", zap.String("agent", agent), zap.String("mcp_server", server), zap.String("reason", reason))
	}}
}

// stdioMCPFactory offers each agent the tools of the MCP servers its
// package declares, run in its sandbox and reached over the sandbox API.
func stdioMCPFactory(clients map[string]*tools.Sandbox, log *zap.Logger) tools.Factory {
	c := mcpClient(log)
	return tools.FactoryFunc(func(a *settings.Agent) ([]tools.Tool, error) {
		sb := clients[a.ID]
		if sb == nil {
			return nil, nil
		}
		return mcp.StdioTools(sb, a, c)
	})
}

// narrowTools keeps the tools this call may use: a token's tools:* scopes
// and the X-Vessel-Scopes header only ever remove tools.
func narrowTools(r *http.Request, p *auth.Principal, list []tools.Tool) ([]tools.Tool, error) {
	allowed, err := scopes.ForCall(r.Header, p.Kind == auth.KindToken, p.Scopes)
	if err != nil {
		return nil, err
	}
	return scopes.Narrow(list,
		func(t tools.Tool) string { return t.Def().Function.Name },
		func(t tools.Tool) string { return t.Scope() },
		allowed), nil
}

// Hooks of a2aserver.Config, set in main.go.
var (
	checkImage  = images.Check           // decode-checks attached images
	answerParts = primitives.AnswerParts // text + {"_ui_components", "_data": null}
)

// serveOperator adds the operator API (list and cancel turns) to the
// metrics listener when VESSEL_OPERATOR_TOKEN or VESSEL_OPERATOR_TOKEN_FILE
// gives its token (docs/operations.md).
func serveOperator(srv *a2aserver.Server, ms *telemetry.MetricsServer, log *zap.Logger) error {
	tok, found, err := envfile.LookupFile(func(name string) (string, bool) { return os.LookupEnv(name) }, "VESSEL_OPERATOR_TOKEN")
	if err != nil {
		return fmt.Errorf("operator API: %w", err)
	}
	if !found || strings.TrimSpace(tok) == "" {
		return nil
	}
	if ms == nil {
		// astralvessel deploy always gives the token; the metrics listener
		// is the operator's choice (docs/operations.md).
		log.Info("operator token given, no --metrics-listen: the operator API is not served")
		return nil
	}
	h, err := srv.OperatorHandler(strings.TrimSpace(tok))
	if err != nil {
		return err
	}
	ms.Handle("/v1/operator/", h)
	log.Info("operator API on the metrics listener", zap.String("addr", ms.Addr().String()))
	return nil
}
