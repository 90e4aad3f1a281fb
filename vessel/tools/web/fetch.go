// Package web holds the vessel's webfetch and websearch tools. Every fetch
// goes through the egress proxy, which checks each destination; the tools
// follow redirects themselves so each hop is a new request the proxy
// checks again, and everything read from the web reaches the model fenced
// as untrusted content.
package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/html/charset"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// ErrNoEgress fails a fetch or public search when no egress proxy is
// configured.
var ErrNoEgress = errors.New("no egress proxy is configured (VESSEL_EGRESS_PROXY): the web is not reachable")

// Defaults.
const (
	DefaultProxyURL       = "http://egress:3128"
	DefaultSearchURL      = "http://search:8080"
	DefaultMaxBytes       = 2 << 20
	DefaultTimeout        = 30 * time.Second
	DefaultMaxRedirects   = 5
	DefaultMaxOutputChars = 100_000
	DefaultDuckDuckGoURL  = "https://html.duckduckgo.com/html/"
	userAgent             = "AstralVessel-webfetch/1.0"
)

// Config configures the web tools.
type Config struct {
	// ProxyURL is the egress web proxy (VESSEL_EGRESS_PROXY). The tools
	// never reach the web directly: without it ("") every fetch and public
	// search fails with ErrNoEgress, before any lookup or dial.
	ProxyURL string
	// SearchURL is the SearXNG base URL (VESSEL_SEARCH_URL).
	SearchURL string
	// Provider is "searxng" (default) or "duckduckgo".
	Provider string
	// DuckDuckGoURL is the HTML endpoint used with provider duckduckgo.
	DuckDuckGoURL  string
	MaxBytes       int64         // largest body read (default 2 MiB)
	Timeout        time.Duration // per fetch, all hops included (default 30s)
	MaxRedirects   int           // default 5
	MaxOutputChars int           // longest text handed to the model (default 100,000)
	MaxResults     int           // search results shown (default 8)
	// EgressToken, when set, gives each agent's web tools credentials of
	// their own at the egress (Factory): Proxy-Authorization as
	// webclients.Agent with webclients.Token, so the egress applies
	// that agent's [agents.web] policy.
	EgressToken string
}

// ConfigFromEnv reads VESSEL_EGRESS_PROXY and VESSEL_SEARCH_URL (with the
// runtime contract's defaults); provider comes from [search] provider.
func ConfigFromEnv(getenv func(string) string, provider string) Config {
	c := Config{ProxyURL: getenv("VESSEL_EGRESS_PROXY"), SearchURL: getenv("VESSEL_SEARCH_URL"), Provider: provider}
	if c.ProxyURL == "none" {
		// No default: DefaultProxyURL names a Compose service, which the
		// deployer writes there; elsewhere it must not be looked up.
		c.ProxyURL = ""
	}
	if c.SearchURL == "" {
		c.SearchURL = DefaultSearchURL
	}
	return c
}

// Client runs fetches and searches.
type Client struct {
	cfg    Config
	proxy  *url.URL
	viaPx  *http.Client // through the egress proxy, redirects not followed
	direct *http.Client // to the deployment's own search container
}

// New checks the configuration and builds a client.
func New(cfg Config) (*Client, error) {
	var pu *url.URL
	proxy := func(*http.Request) (*url.URL, error) { return nil, ErrNoEgress }
	if cfg.ProxyURL != "" {
		var err error
		pu, err = url.Parse(cfg.ProxyURL)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("web: egress proxy URL %q is not an http(s) URL", cfg.ProxyURL)
		}
		proxy = http.ProxyURL(pu)
	}
	if cfg.SearchURL == "" {
		cfg.SearchURL = DefaultSearchURL
	}
	switch cfg.Provider {
	case "":
		cfg.Provider = "searxng"
	case "searxng", "duckduckgo":
	default:
		return nil, fmt.Errorf("web: unknown search provider %q", cfg.Provider)
	}
	if cfg.DuckDuckGoURL == "" {
		cfg.DuckDuckGoURL = DefaultDuckDuckGoURL
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRedirects <= 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.MaxOutputChars <= 0 {
		cfg.MaxOutputChars = DefaultMaxOutputChars
	}
	if cfg.MaxResults <= 0 {
		cfg.MaxResults = 8
	}
	c := &Client{cfg: cfg, proxy: pu}
	tr := &http.Transport{
		Proxy: proxy,
		// A fresh connection (and so a fresh CONNECT the proxy checks) for
		// every request: no tunnel outlives the hop it was opened for.
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		// The egress logs the turn's task id with its decision (and does not
		// pass it on).
		// The trace context goes on the CONNECT too, never on the request
		// inside the tunnel, which the egress cannot see and the origin would.
		GetProxyConnectHeader: func(ctx context.Context, _ *url.URL, _ string) (http.Header, error) {
			h := http.Header{}
			if id := telemetry.TaskIDFrom(ctx); id != "" {
				h.Set(telemetry.TaskIDHeader, id)
			}
			telemetry.InjectHTTP(ctx, h)
			return h, nil
		},
		OnProxyConnectResponse: func(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			return proxyError(resp)
		},
	}
	c.viaPx = &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.direct = &http.Client{
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 8}, // the request context bounds time
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("search answered with a redirect") },
	}
	return c, nil
}

// RefusedError is a destination the egress refused (403 from the proxy).
type RefusedError struct {
	URL    string
	Reason string
	// Policy is the agent's web policy's words when that refused
	// (X-Egress-Policy: "denylist *.ads.example", "not in the allowlist").
	Policy string
}

func (e *RefusedError) Error() string {
	switch e.Reason {
	case "name-policy":
		return fmt.Sprintf("the egress refused %s: this agent's web policy does not allow the site (%s)", e.URL, e.Policy)
	case "unauthenticated":
		return fmt.Sprintf("the egress refused %s: the web tools could not authenticate to the egress (a deployment fault, not the site's)", e.URL)
	}
	return fmt.Sprintf("the egress refused %s (%s): only public web addresses on ports 80 and 443 are reachable", e.URL, e.Reason)
}

// proxyError turns a proxy refusal or failure into an error for the model.
func proxyError(resp *http.Response) error {
	if r := resp.Header.Get("X-Egress-Denied"); r != "" {
		return &RefusedError{Reason: r, Policy: truncateRunes(resp.Header.Get("X-Egress-Policy"), 200)}
	}
	if r := resp.Header.Get("X-Egress-Error"); r != "" {
		return fmt.Errorf("the egress could not reach the site: %s", r)
	}
	return fmt.Errorf("the egress proxy answered %s", resp.Status)
}

// FetchResult is a fetched page as text.
type FetchResult struct {
	URL         string   // as asked
	FinalURL    string   // after redirects
	Hops        []string // every URL requested, in order
	Status      int
	ContentType string
	Text        string // Markdown for HTML, the text itself otherwise
	Truncated   bool   // body or text cut at a limit
}

// Fenced returns the result as the model should read it.
func (r *FetchResult) Fenced() string {
	var note string
	if r.FinalURL != r.URL {
		note = fmt.Sprintf("Redirected from %s\n", r.URL)
	}
	if r.Truncated {
		note += "(Content truncated at the size limit.)\n"
	}
	if note != "" {
		note += "\n"
	}
	return Fence(r.FinalURL, note+r.Text)
}

// Fetch gets rawURL through the egress proxy, following up to MaxRedirects
// redirects itself, and returns readable text.
func (c *Client) Fetch(ctx context.Context, rawURL string) (*FetchResult, error) {
	u, err := checkURL(rawURL, nil)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	res := &FetchResult{URL: u.String()}
	for hop := 0; ; hop++ {
		res.Hops = append(res.Hops, u.String())
		resp, err := c.get(ctx, u)
		if err != nil {
			return nil, err
		}
		if isRedirect(resp.StatusCode) {
			loc := resp.Header.Get("Location")
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if loc == "" {
				return nil, fmt.Errorf("webfetch: %s answered %d without a Location", u, resp.StatusCode)
			}
			if hop >= c.cfg.MaxRedirects {
				return nil, fmt.Errorf("webfetch: more than %d redirects (last to %s)", c.cfg.MaxRedirects, truncate(loc, 200))
			}
			next, err := checkURL(loc, u)
			if err != nil {
				return nil, fmt.Errorf("webfetch: redirect from %s: %w", u, err)
			}
			u = next
			continue
		}
		defer resp.Body.Close()
		res.FinalURL, res.Status = u.String(), resp.StatusCode
		if resp.StatusCode >= 400 {
			return nil, fmt.Errorf("webfetch: %s answered HTTP %d", u, resp.StatusCode)
		}
		if err := c.readBody(resp, res, u); err != nil {
			return nil, fmt.Errorf("webfetch: %s: %w", u, err)
		}
		return res, nil
	}
}

func (c *Client) get(ctx context.Context, u *url.URL) (resp *http.Response, err error) {
	ctx, span := startSpan(ctx, "webfetch GET", u)
	defer func() { telemetry.EndHTTPSpan(span, resp, err) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("webfetch: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5")
	if id := telemetry.TaskIDFrom(ctx); id != "" && u.Scheme == "http" {
		req.Header.Set(telemetry.TaskIDHeader, id) // to the egress, which removes it before the origin
	}
	if u.Scheme == "http" {
		telemetry.InjectHTTP(ctx, req.Header) // the egress removes it too
	}
	resp, err = c.viaPx.Do(req)
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			re.URL = u.String()
			return nil, re
		}
		if ctx.Err() != nil || isTimeout(err) {
			return nil, fmt.Errorf("webfetch: %s: timed out after %s", u, c.cfg.Timeout)
		}
		return nil, fmt.Errorf("webfetch: %s: %w", u, scrubProxyErr(err, c.proxy))
	}
	// For plain-HTTP requests the proxy's refusal arrives as a response.
	if resp.Header.Get("X-Egress-Denied") != "" || resp.Header.Get("X-Egress-Error") != "" {
		perr := proxyError(resp)
		resp.Body.Close()
		var re *RefusedError
		if errors.As(perr, &re) {
			re.URL = u.String()
		}
		return nil, perr
	}
	return resp, nil
}

// scrubProxyErr keeps transport errors readable; they carry no secrets
// but the proxy's internal address is of no use to the model.
func scrubProxyErr(err error, proxy *url.URL) error {
	if proxy == nil {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), proxy.Host, "egress")
	return errors.New(msg)
}

func (c *Client) readBody(resp *http.Response, res *FetchResult, page *url.URL) error {
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt == "" {
		mt = "text/html" // most servers that omit it serve HTML
	}
	res.ContentType = mt
	kind := textKind(mt)
	if kind == "" {
		return fmt.Errorf("content type %s is not text; webfetch reads HTML and text only", mt)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes+1))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if int64(len(raw)) > c.cfg.MaxBytes {
		raw, res.Truncated = raw[:c.cfg.MaxBytes], true
	}
	text := toUTF8(raw, ct)
	if kind == "html" {
		// Relative links become absolute so the model can fetch them next.
		md, err := htmltomarkdown.ConvertString(text, converter.WithDomain(page.Scheme+"://"+page.Host))
		if err != nil {
			return fmt.Errorf("convert HTML: %w", err)
		}
		text = md
	}
	if len(text) > c.cfg.MaxOutputChars {
		cut := c.cfg.MaxOutputChars
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text, res.Truncated = text[:cut], true
	}
	res.Text = strings.TrimSpace(text)
	return nil
}

func textKind(mt string) string {
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "html"
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript":
		return "text"
	}
	return ""
}

// toUTF8 decodes the body by its declared or sniffed charset.
func toUTF8(raw []byte, contentType string) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	r, err := charset.NewReader(strings.NewReader(string(raw)), contentType)
	if err != nil {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// isTimeout reports a network timeout (the transport's own deadlines).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// checkURL parses a URL (relative to base when given) and keeps only
// http(s) URLs with a host and no credentials.
func checkURL(raw string, base *url.URL) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("webfetch: empty URL")
	}
	if len(raw) > 8192 {
		return nil, errors.New("webfetch: URL too long")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("webfetch: bad URL: %w", err)
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return nil, fmt.Errorf("webfetch: only http and https URLs can be fetched, not %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("webfetch: URL has no host")
	}
	if u.User != nil {
		return nil, errors.New("webfetch: URLs with credentials are not fetched")
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// truncateRunes keeps at most n bytes of s, cut at a rune boundary.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WithProxyUser returns a client like c whose proxy requests carry name
// and password as Proxy-Authorization (Basic, from the proxy URL).
func (c *Client) WithProxyUser(name, password string) (*Client, error) {
	if c.proxy == nil {
		return c, nil // no egress: nothing to authenticate to
	}
	cfg := c.cfg
	u := *c.proxy
	u.User = url.UserPassword(name, password)
	cfg.ProxyURL = u.String()
	return New(cfg)
}

// startSpan is the client span of one request to u (nil while tracing is
// off). Only the scheme and host are attributes: a path or query may hold
// what the user asked for.
func startSpan(ctx context.Context, name string, u *url.URL) (context.Context, trace.Span) {
	return telemetry.StartClientSpan(ctx, "github.com/astraldeep/astralvessel-go/vessel/tools/web", name,
		attribute.String("url.scheme", u.Scheme), attribute.String("server.address", u.Hostname()))
}
