// Package service runs service tools: declared tools answered by the
// application over HTTP instead of in the sandbox.
//
// A call POSTs the model's arguments (a JSON object) to the granted
// service's URL plus the tool's path, with the headers deployment.toml
// gives that service (credentials live there, never in the sandbox) and
// three headers telling the application who asked: X-Vessel-Owner,
// X-Vessel-Agent and X-Vessel-Tool. Nothing else of the caller is sent: no
// Authorization from the caller, no X-Vessel-User. Only services granted to
// the agent in deployment.toml can be reached; redirects are not followed;
// time and reply size are bounded, and a reply over the bound is an error,
// never silently cut.
package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// Headers the application receives on every call.
const (
	HeaderOwner = "X-Vessel-Owner"
	HeaderAgent = "X-Vessel-Agent"
	HeaderTool  = "X-Vessel-Tool"
)

// Defaults.
const (
	DefaultTimeout     = 30 * time.Second
	MaxTimeout         = 10 * time.Minute
	DefaultMaxResponse = 1 << 20
	snippetBytes       = 512
	userAgent          = "astralvessel"
)

// Client makes service calls. The zero value is usable.
type Client struct {
	// HTTP sends the requests. Nil means a client with no proxy: services
	// sit on the vessel's own networks, never behind the egress.
	HTTP *http.Client
	// MaxResponse bounds a reply's body (default 1 MiB).
	MaxResponse int64
	// Timeout is the default per-call time (default 30 s); a tool's
	// timeout_seconds overrides it.
	Timeout time.Duration
}

var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:                 nil, // never the environment's proxy
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	MaxIdleConnsPerHost:   16,
	IdleConnTimeout:       90 * time.Second,
	ResponseHeaderTimeout: MaxTimeout,
}}

// Tool is one service tool of one agent.
type Tool struct {
	client  *Client
	agent   string
	decl    settings.Tool
	service string
	url     string
	headers map[string]string
}

// New builds the tool t of agent. t.Service must be granted to the agent
// (a key of agent.Services); the URL must be http(s) with no user info.
func New(agent *settings.Agent, t settings.Tool, c *Client) (*Tool, error) {
	if c == nil {
		c = &Client{}
	}
	if t.Service == "" {
		return nil, fmt.Errorf("tool %q is not a service tool", t.Name)
	}
	svc, ok := agent.Services[t.Service]
	if !ok {
		return nil, fmt.Errorf("agent %s: tool %q uses service %q, which deployment.toml does not grant it ([agents.services.%s])",
			agent.ID, t.Name, t.Service, t.Service)
	}
	u, err := join(svc.URL, t.Path)
	if err != nil {
		return nil, fmt.Errorf("agent %s: tool %q: service %q: %w", agent.ID, t.Name, t.Service, err)
	}
	return &Tool{client: c, agent: agent.ID, decl: t, service: t.Service, url: u, headers: svc.Headers}, nil
}

// join appends path to the service's base URL.
func join(base, path string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("url %q: %w", base, err)
	}
	if (b.Scheme != "http" && b.Scheme != "https") || b.Host == "" || b.User != nil || b.RawQuery != "" || b.Fragment != "" {
		return "", fmt.Errorf("url %q must be http(s)://host[:port][/prefix] with no user info, query or fragment", base)
	}
	if strings.Contains(path, "..") || strings.ContainsAny(path, "?#\\") {
		return "", fmt.Errorf("path %q must be a plain path", path)
	}
	full := strings.TrimSuffix(b.String(), "/") + "/" + strings.TrimPrefix(path, "/")
	if path == "" {
		full = b.String()
	}
	if _, err := url.Parse(full); err != nil {
		return "", fmt.Errorf("path %q: %w", path, err)
	}
	return full, nil
}

// Def implements tools.Tool.
func (t *Tool) Def() model.ToolDef {
	params := t.decl.Parameters
	var p any = params
	if len(params) == 0 {
		p = map[string]any{"type": "object"}
	}
	return model.ToolDef{Type: "function", Function: model.FunctionDef{Name: t.decl.Name, Description: t.decl.Description, Parameters: p}}
}

// Scope implements tools.Tool.
func (t *Tool) Scope() string {
	return scopes.Of(t.decl.Scope)
}

// Service is the granted service the tool calls, for approval policies
// that name services (approval.Servicer).
func (t *Tool) Service() string { return t.service }

// Run implements tools.Tool. Problems the model can act on (bad arguments,
// an error status, an oversized or unreachable service) are failed calls;
// only a cancelled turn is returned as an error.
func (t *Tool) Run(ctx context.Context, turn *tools.Turn, call tools.Call) (*tools.Result, error) {
	body := strings.TrimSpace(call.Arguments)
	if body == "" {
		body = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(body), &obj); err != nil || obj == nil {
		return failed("%s needs its arguments as a JSON object", t.decl.Name), nil
	}
	timeout := t.client.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if s := t.decl.TimeoutSeconds; s > 0 {
		timeout = min(time.Duration(s)*time.Second, MaxTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, t.url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, fmt.Errorf("service tool %s: %w", t.decl.Name, err)
	}
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	// Ours last, so a deployment header cannot impersonate them.
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.1")
	req.Header.Set("User-Agent", userAgent)
	owner, agent := "", t.agent
	if turn != nil {
		owner = turn.Owner
		if turn.Agent != "" {
			agent = turn.Agent
		}
	}
	req.Header.Set(HeaderOwner, owner)
	req.Header.Set(HeaderAgent, agent)
	req.Header.Set(HeaderTool, t.decl.Name)

	hc := t.client.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	noRedirect := *hc
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	// The call's span (the tool, the service's host, the status; never the
	// arguments or headers); the service may continue the turn's trace.
	sctx, span := telemetry.StartClientSpan(cctx, "github.com/astraldeep/astralvessel-go/vessel/tools/service", "service POST "+t.decl.Name,
		telemetry.AttrTool.String(t.decl.Name), attribute.String("server.address", req.URL.Hostname()))
	telemetry.InjectHTTP(sctx, req.Header)
	resp, err := noRedirect.Do(req.WithContext(sctx))
	telemetry.EndHTTPSpan(span, resp, err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("service tool %s: %w", t.decl.Name, ctx.Err())
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return failed("the %s service did not answer within %s", t.service, timeout), nil
		}
		return failed("could not reach the %s service: %s", t.service, errorText(err)), nil
	}
	defer resp.Body.Close()
	max := t.client.MaxResponse
	if max <= 0 {
		max = DefaultMaxResponse
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("service tool %s: %w", t.decl.Name, ctx.Err())
		}
		return failed("reading the %s service's reply failed: %s", t.service, errorText(err)), nil
	}
	if int64(len(data)) > max {
		return failed("the %s service's reply is larger than %d bytes; nothing of it was kept", t.service, max), nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("the %s service answered HTTP %d", t.service, resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			msg += " (a redirect; redirects are not followed)"
		}
		if s := snippet(data); s != "" {
			msg += ": " + s
		}
		return &tools.Result{Output: msg, IsError: true}, nil
	}
	return &tools.Result{Output: replyText(resp.Header.Get("Content-Type"), data)}, nil
}

func failed(format string, args ...any) *tools.Result {
	return &tools.Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// errorText keeps a transport error short and free of the request URL's
// details beyond what the operator configured.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return truncate(err.Error(), 200)
}

// replyText is the tool result: JSON compacted when it is JSON, text as
// is; invalid UTF-8 is replaced so the model always reads text.
func replyText(contentType string, data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return "(the service returned no content)"
	}
	if strings.Contains(strings.ToLower(contentType), "json") {
		var b bytes.Buffer
		if json.Compact(&b, data) == nil {
			return b.String()
		}
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

func snippet(data []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD"))
	return truncate(s, snippetBytes)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Tools builds every service tool of agent's manifest.
func Tools(agent *settings.Agent, c *Client) ([]tools.Tool, error) {
	if agent == nil || agent.Manifest == nil {
		return nil, nil
	}
	var out []tools.Tool
	for _, t := range agent.Manifest.Declared {
		if t.Service == "" {
			continue
		}
		st, err := New(agent, t, c)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Factory offers an agent its declared service tools.
func Factory(c *Client) tools.Factory {
	return tools.FactoryFunc(func(agent *settings.Agent) ([]tools.Tool, error) { return Tools(agent, c) })
}
