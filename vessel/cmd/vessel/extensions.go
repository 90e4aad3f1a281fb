package main

import (
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
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
	return identityToolFactories() // identity.go: service tools, present
}
