package main

// Wiring of the identity helper's packages: token issuers, scope
// narrowing, service tools, `present`, image checks and the answer parts.

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/auth/jwt"
	"github.com/astraldeep/astralvessel-go/vessel/images"
	"github.com/astraldeep/astralvessel-go/vessel/primitives"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/tools/service"
)

// egressClient sends through the egress web proxy (VESSEL_EGRESS_PROXY):
// the vessel itself has no route out, so key sets are fetched this way.
func egressClient() (*http.Client, error) {
	proxy := envOr("VESSEL_EGRESS_PROXY", "http://egress:3128")
	pu, err := url.Parse(proxy)
	if err != nil || pu.Host == "" {
		return nil, fmt.Errorf("VESSEL_EGRESS_PROXY %q is not a URL", proxy)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		Proxy:               http.ProxyURL(pu),
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 4,
	}}, nil
}

// tokenAuthenticators verifies [[issuers]] tokens; none when no issuer is
// configured. A bad issuer entry stops the vessel rather than leaving it
// open or silently refusing everyone.
func tokenAuthenticators(d *spec.Deployment, log *zap.Logger) []auth.Authenticator {
	if len(d.Issuers) == 0 {
		return nil
	}
	hc, err := egressClient()
	if err != nil {
		log.Fatal("issuers", zap.Error(err))
	}
	base := ""
	if d.Path != "" {
		base = filepath.Dir(d.Path)
	}
	v, err := jwt.New(jwt.Config{Issuers: d.Issuers, HTTPClient: hc, BaseDir: base, Logger: log})
	if err != nil {
		log.Fatal("issuers", zap.Error(err))
	}
	for _, is := range d.Issuers {
		log.Info("token issuer", zap.String("id", is.ID), zap.String("issuer", is.Issuer), zap.Strings("agents", is.Agents))
	}
	return []auth.Authenticator{jwt.Authenticator{V: v}}
}

// identityToolFactories offers service tools and `present`.
func identityToolFactories() []tools.Factory {
	return []tools.Factory{
		service.Factory(&service.Client{}),
		primitives.Factory(primitives.NewTool(primitives.Limits{})),
	}
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
