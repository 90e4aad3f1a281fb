// Package healthcheck is the `health` subcommand of every AstralVessel
// binary: the images have no shell or curl, so each binary checks its own
// endpoint for the Compose healthcheck and exits 0 (healthy) or 1.
package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Timeout bounds one check (sandboxd's gRPC health check uses it too).
const Timeout = 5 * time.Second

// Check describes what a service's health subcommand asks.
type Check struct {
	// URL is the endpoint to GET (the first argument overrides it).
	URL string
	// WantOK also requires a JSON answer whose "ok" member is true (the
	// vessel's /health: false while the task store or the egress fails).
	WantOK bool
}

// Main runs the check with the subcommand's arguments ([URL]) and returns
// the exit code: 0 healthy, 1 not, 2 a usage error. It prints why on
// stderr, which Docker keeps in the container's health log.
func Main(name string, c Check, args []string, stderr io.Writer) int {
	switch {
	case len(args) > 1, len(args) == 1 && strings.HasPrefix(args[0], "-"):
		fmt.Fprintf(stderr, "usage: %s health [URL]   (default %s)\n", name, c.URL)
		return 2
	case len(args) == 1:
		c.URL = args[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := Probe(ctx, c); err != nil {
		fmt.Fprintf(stderr, "%s: unhealthy: %v\n", name, err)
		return 1
	}
	return 0
}

// Probe runs the check once.
func Probe(ctx context.Context, c Check) error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", c.URL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	// No proxy: the check is of this container's own endpoint.
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: reading the answer: %w", u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", u.Redacted(), resp.StatusCode)
	}
	if !c.WantOK {
		return nil
	}
	var v struct {
		OK     *bool          `json:"ok"`
		Checks map[string]any `json:"checks"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.OK == nil {
		return errors.New("the answer is not JSON with an ok member")
	}
	if !*v.OK {
		b, _ := json.Marshal(v.Checks)
		return fmt.Errorf("a dependency fails: %s", truncate(string(b), 500))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
