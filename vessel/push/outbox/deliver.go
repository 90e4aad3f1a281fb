package outbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
)

// Headers of a delivery besides the A2A token.
const (
	// ContentType is the media type of the body, a StreamResponse.
	ContentType = "application/a2a+json"
	// TokenHeader carries the config's token (A2A 1.0).
	TokenHeader = "A2A-Notification-Token"
	// DeliveryIDHeader is the same on every attempt of one delivery.
	DeliveryIDHeader = "X-Vessel-Delivery-Id"
	// AttemptHeader counts attempts from 1.
	AttemptHeader = "X-Vessel-Delivery-Attempt"
	// SignatureHeader is a detached JWS over the body (cardsign.Keys.SignPush),
	// bound to the webhook URL, task, delivery id and time of the attempt.
	SignatureHeader = "X-Vessel-Signature"
)

// ErrPermanent marks an answer retrying cannot change (4xx but 408/429).
var ErrPermanent = errors.New("permanent push delivery failure")

// Deliverer sends deliveries over HTTP: granted destinations directly,
// public ones through the egress proxy. Redirects are never followed.
type Deliverer struct {
	direct, egress *http.Client
	// Sign, when set, signs each attempt's body for its webhook URL, task,
	// delivery id and time (cardsign.Keys.SignPush).
	Sign func(body []byte, c cardsig.PushClaims) (string, error)
	// UserAgent names the vessel.
	UserAgent string
}

// NewDeliverer builds the clients; egressProxy nil refuses public routes.
// The direct dialer refuses special-purpose addresses whatever DNS says,
// and a granted host name resolving to loopback (dest.Dialer).
func NewDeliverer(egressProxy *url.URL, sign func([]byte, cardsig.PushClaims) (string, error)) *Deliverer {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	dialer := &dest.Dialer{Dialer: &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}}
	d := &Deliverer{Sign: sign, UserAgent: "astralvessel-push"}
	d.direct = &http.Client{CheckRedirect: noRedirect, Transport: &http.Transport{
		Proxy: nil, DialContext: dialer.DialContext, ForceAttemptHTTP2: true, MaxIdleConns: 100,
		MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}}
	if egressProxy != nil {
		d.egress = &http.Client{CheckRedirect: noRedirect, Transport: &http.Transport{
			Proxy: http.ProxyURL(egressProxy), ForceAttemptHTTP2: true, MaxIdleConns: 100,
			MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}}
	}
	return d
}

// Deliver sends one attempt. A 2xx answer delivers; 3xx (a redirect, not
// followed) and other 4xx but 408 and 429 are permanent; the rest retry.
func (d *Deliverer) Deliver(ctx context.Context, route dest.Route, cfg *a2a.PushConfig, a Args, attempt int) error {
	client := d.direct
	if route == dest.ViaEgress {
		if d.egress == nil {
			return fmt.Errorf("%w: public webhooks need the egress proxy", dest.ErrRefused)
		}
		client = d.egress
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(a.Body))
	if err != nil {
		return fmt.Errorf("%w: build request: %w", ErrPermanent, err)
	}
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("User-Agent", d.UserAgent)
	req.Header.Set(DeliveryIDHeader, a.DeliveryID)
	req.Header.Set(AttemptHeader, strconv.Itoa(attempt))
	if cfg.Token != "" {
		req.Header.Set(TokenHeader, cfg.Token)
	}
	if cfg.Auth != nil && cfg.Auth.Credentials != "" {
		switch strings.ToLower(cfg.Auth.Scheme) {
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+cfg.Auth.Credentials)
		case "basic":
			req.Header.Set("Authorization", "Basic "+cfg.Auth.Credentials)
		}
	}
	if d.Sign != nil {
		sig, err := d.Sign(a.Body, cardsig.PushClaims{Audience: cfg.URL, TaskID: a.Task, DeliveryID: a.DeliveryID, IssuedAt: time.Now()})
		if err != nil {
			return fmt.Errorf("sign delivery: %w", err)
		}
		req.Header.Set(SignatureHeader, sig)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post to webhook: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	// The status code and its standard words, never the webhook's own
	// reason phrase: a receiver may echo the token it refused there, and
	// this error is logged and kept on the delivery.
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c >= 300 && c < 400:
		return fmt.Errorf("%w: the webhook answered %s; redirects are not followed", ErrPermanent, status)
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("the webhook answered %s", status)
	default:
		return fmt.Errorf("%w: the webhook answered %s", ErrPermanent, status)
	}
}
