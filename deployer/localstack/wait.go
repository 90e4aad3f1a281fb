package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Polling starts at pollFirst and doubles up to pollMax: each service is
// ready within tens of milliseconds, so a fixed 100 ms tick would cost
// most of a start in waiting.
const (
	pollFirst = time.Millisecond
	pollMax   = 10 * time.Millisecond
)

// waitTCP waits until addr accepts connections or p exits.
func waitTCP(ctx context.Context, p *Proc, addr string) error {
	return poll(ctx, p, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// waitHTTP waits until GET url answers 200 (and check accepts the body).
func waitHTTP(ctx context.Context, p *Proc, url, bearer string, check func([]byte) error) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	return poll(ctx, p, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
		}
		if check != nil {
			return check(b)
		}
		return nil
	})
}

// poll calls try until it succeeds, p exits or ctx ends.
func poll(ctx context.Context, p *Proc, try func() error) error {
	t := time.NewTimer(pollFirst)
	defer t.Stop()
	next := pollFirst
	var last error
	for {
		if last = try(); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("localstack: %w; last log lines:\n%s", p.exitError(), p.Tail(3000))
		case <-ctx.Done():
			return fmt.Errorf("localstack: %s not ready: %v (log: %s)", p.Name, last, p.log)
		case <-t.C:
		}
		next = min(2*next, pollMax)
		t.Reset(next)
	}
}

// healthReady checks a /health body: every agent ready.
func healthReady(b []byte, agents []string) error {
	var h struct {
		OK     bool            `json:"ok"`
		Agents map[string]bool `json:"agents"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	var waiting []string
	for _, a := range agents {
		if !h.Agents[a] {
			waiting = append(waiting, a)
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("agents not ready: %s", strings.Join(waiting, ", "))
	}
	return nil
}
