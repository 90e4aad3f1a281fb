package main

import (
	"os"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/tools/web"
)

// The wiring points for packages other helpers own. Each returns nothing
// until its package is wired in here.

// registerBackends registers task store backends beyond SQLite
// (store.Register("postgres", ...)).
func registerBackends() { postgres.Register() }

// extraAuthenticators adds authenticators after app keys (JWT issuers).
func extraAuthenticators(d *spec.Deployment, log *zap.Logger) []auth.Authenticator {
	return tokenAuthenticators(d, log) // identity.go
}

// extraToolFactories adds tools beyond the sandbox's (web, service, present).
func extraToolFactories(d *spec.Deployment, log *zap.Logger) []tools.Factory {
	factories := identityToolFactories() // identity.go: service tools, present
	// webfetch and websearch reach the web only through the egress proxy
	// (VESSEL_EGRESS_PROXY) and the deployment's search container.
	wc, err := web.New(web.ConfigFromEnv(os.Getenv, d.Search.Provider))
	if err != nil {
		log.Fatal("web tools", zap.Error(err))
	}
	return append(factories, web.Factory(wc))
}
