package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/store"
)

// healthChecks are the dependencies /health reports, both critical (every
// agent out of service while one fails, reads of stored tasks still served):
// the task store (no turn could be kept without it) and the egress (every
// model call goes through it), asked for its own /health on the web proxy's
// port.
func healthChecks(backend store.Backend) ([]a2aserver.HealthCheck, error) {
	var checks []a2aserver.HealthCheck
	if p, ok := backend.(store.Pinger); ok {
		checks = append(checks, a2aserver.HealthCheck{Name: "task store", Check: p.Ping, Critical: true})
	}
	pu, err := egressProxy()
	if err != nil {
		return nil, err
	}
	if pu == nil {
		// No egress in this layout: nothing to ask, and no name to look up.
		return checks, nil
	}
	healthURL := (&url.URL{Scheme: pu.Scheme, Host: pu.Host, Path: "/health"}).String()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	checks = append(checks, a2aserver.HealthCheck{Name: "egress", Critical: true, Check: func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("egress health: %w", err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("egress health: HTTP %d", resp.StatusCode)
		}
		return nil
	}})
	return checks, nil
}
