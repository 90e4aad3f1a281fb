// Package mcp offers an agent the tools of the remote MCP servers its
// deployment grants ([agents.mcp.<name>]), reached by the vessel over
// streamable HTTP with the official Go SDK, never by the sandbox.
//
// Every call is its own MCP session (initialize, tools/call, close), sent
// with the grant's headers and the owner, agent and tool headers service
// tools send, so no state is shared between callers. A session is bounded
// in time (the grant's timeout_seconds) and in bytes (every reply body of
// the session together); whatever a server sends, a call ends as a result
// or a tool error the model reads. Tool definitions come from the server's
// tools/list, kept for a while and refreshed at the start of a turn; only
// the tools the grant lists (with tools = ["*"], the valid names of the
// server's current list, at most MaxStarTools) are ever offered or called.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
	"github.com/astraldeep/astralvessel-go/vessel/tools/service"
)

// Headers the server receives on every request, the ones service tools send.
const (
	HeaderOwner = service.HeaderOwner
	HeaderAgent = service.HeaderAgent
	HeaderTool  = service.HeaderTool
)

// Defaults.
const (
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponse bounds the bytes of all reply bodies of one
	// session (a call's, or a listing's): enough for a 4 MB file in base64.
	DefaultMaxResponse = 8 << 20
	// DefaultMaxText bounds the text of one result the model reads.
	DefaultMaxText = 1 << 20
	// ListTTL is how long a server's tool list is kept; a failed listing
	// is retried after ListRetry at the earliest.
	ListTTL   = 5 * time.Minute
	ListRetry = 10 * time.Second
	// ListTimeout bounds one tools/list session.
	ListTimeout = 10 * time.Second
	// MaxSchemaBytes and MaxDescription bound what of a tool's definition
	// reaches the model.
	MaxSchemaBytes = 64 << 10
	MaxDescription = 2048
	// MaxStarTools is the most tools a server granted or declared with
	// tools = ["*"] may list: a listing with more valid tool names fails
	// (the server offers none) rather than flooding the model's tool list.
	MaxStarTools = 128
	maxListPages = 20
	userAgent    = "astralvessel"
)

// Client reaches MCP servers. The zero value is usable.
type Client struct {
	// HTTP sends the requests. Nil means a client with no proxy: granted
	// servers sit on the vessel's own networks, never behind the egress.
	HTTP *http.Client
	// MaxResponse bounds a session's reply bytes (default DefaultMaxResponse).
	MaxResponse int64
	// MaxText bounds a result's text (default DefaultMaxText).
	MaxText int
	// Timeout is the per-call time when the grant sets none (default 30 s).
	Timeout time.Duration
	// Now is the clock of the tool-list cache (default time.Now).
	Now func() time.Time
	// ListFailed, when set, hears of every failed listing (at most one per
	// server every ListRetry): the operator's only sign that a server with
	// tools = ["*"] offers nothing.
	ListFailed func(agent, server, reason string)
}

var defaultHTTP = &http.Client{Transport: &http.Transport{
	Proxy:               nil, // never the environment's proxy
	DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 16,
	IdleConnTimeout:     90 * time.Second,
}}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) maxResponse() int64 {
	if c.MaxResponse > 0 {
		return c.MaxResponse
	}
	return DefaultMaxResponse
}

func (c *Client) maxText() int {
	if c.MaxText > 0 {
		return c.MaxText
	}
	return DefaultMaxText
}

// Server is one granted MCP server of one agent.
type Server struct {
	client *Client
	agent  string
	name   string
	grant  settings.MCPServer

	mu       sync.Mutex
	listed   map[string]*mcp.Tool // the granted tools the server offered, by name
	expanded []tools.Tool         // with tools = ["*"]: a Tool per listed name, sorted
	listedAt time.Time
	listErr  string // why the last listing failed, "" after a success
	failedAt time.Time
	inflight chan struct{} // closed when the listing under way ends

	// stdio is set for a server the package declares, run in the sandbox.
	stdio *stdioServer
}

// NewServer builds the server name granted to agent.
func NewServer(agent *settings.Agent, name string, c *Client) (*Server, error) {
	if c == nil {
		c = &Client{}
	}
	g, ok := agent.MCP[name]
	if !ok {
		return nil, fmt.Errorf("agent %s: no MCP server %q is granted ([agents.mcp.%s])", agent.ID, name, name)
	}
	u, err := url.Parse(g.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("agent %s: MCP server %s: url %q must be http(s)://host/... with no user info", agent.ID, name, g.URL)
	}
	return &Server{client: c, agent: agent.ID, name: name, grant: g}, nil
}

// Tools are the server's granted tools, one per allowlisted name; a
// server with tools = ["*"] is one tools.Expander standing for the tools
// it last listed.
func (s *Server) Tools() []tools.Tool {
	if s.grant.AllTools() {
		return []tools.Tool{&starTool{srv: s}}
	}
	out := make([]tools.Tool, 0, len(s.grant.Tools))
	for _, t := range s.grant.Tools {
		out = append(out, s.tool(t))
	}
	return out
}

func (s *Server) tool(name string) *Tool {
	return &Tool{srv: s, name: name, full: toolset.MCPToolName(s.name, name), scope: s.grant.ToolScope(name)}
}

func (s *Server) timeout() time.Duration {
	if s.grant.TimeoutSecs > 0 {
		return min(time.Duration(s.grant.TimeoutSecs)*time.Second, toolset.MaxMCPTimeout*time.Second)
	}
	if s.client.Timeout > 0 {
		return s.client.Timeout
	}
	return DefaultTimeout
}

// cached returns the tool as last listed, and why it is not known.
func (s *Server) cached(name string) (*mcp.Tool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listed == nil {
		if s.listErr != "" {
			return nil, s.listErr
		}
		return nil, "the server's tools have not been listed yet"
	}
	t, ok := s.listed[name]
	if !ok {
		return nil, fmt.Sprintf("the server does not offer a tool %q", name)
	}
	return t, ""
}

// refresh lists the server's tools unless the list is fresh (or a listing
// failed a moment ago); concurrent callers share one listing. The list is
// the agent's, not a caller's, so a listing carries no owner.
func (s *Server) refresh(ctx context.Context) {
	for {
		s.mu.Lock()
		now := s.client.now()
		fresh := s.listed != nil && now.Sub(s.listedAt) < ListTTL
		recentFail := s.listErr != "" && now.Sub(s.failedAt) < ListRetry
		if fresh || recentFail {
			s.mu.Unlock()
			return
		}
		if wait := s.inflight; wait != nil {
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return
			}
		}
		done := make(chan struct{})
		s.inflight = done
		s.mu.Unlock()
		// The listing is the agent's, shared by every caller waiting: it
		// runs to its own end (ListTimeout) even when the caller that
		// started it goes away, so no caller can take another's tools
		// away by leaving.
		go s.listNow(context.WithoutCancel(ctx), done)
		select {
		case <-done:
		case <-ctx.Done():
		}
		return
	}
}

// listNow runs one listing for refresh and records what it found.
func (s *Server) listNow(ctx context.Context, done chan struct{}) {
	listed, err := s.list(ctx)

	s.mu.Lock()
	s.inflight = nil
	if err != nil {
		s.listErr, s.failedAt = err.Error(), s.client.now()
		if s.grant.AllTools() {
			// What the server offers is unknown now: offer nothing
			// rather than a list it may no longer stand by.
			s.listed, s.expanded = nil, nil
		}
	} else {
		s.listed, s.listedAt, s.listErr = listed, s.client.now(), ""
		if s.grant.AllTools() {
			s.expanded = s.expand(listed)
		}
	}
	s.mu.Unlock()
	if err != nil && s.client.ListFailed != nil {
		s.client.ListFailed(s.agent, s.name, err.Error())
	}
	close(done)
}

// list runs one tools/list session and keeps the granted tools.
func (s *Server) list(ctx context.Context) (map[string]*mcp.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, min(ListTimeout, s.timeout()))
	defer cancel()
	cs, st, release, err := s.open(lctx, nil, "")
	if err != nil {
		return nil, s.explain(ctx, lctx, err, st, "listing its tools")
	}
	defer release()
	out := map[string]*mcp.Tool{}
	cursor := ""
	for range maxListPages {
		res, err := cs.ListTools(lctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, s.explain(ctx, lctx, err, st, "listing its tools")
		}
		for _, t := range res.Tools {
			if t == nil || !s.grant.Allows(t.Name) {
				continue
			}
			if s.grant.AllTools() && (t.Name == "" || !toolset.ValidToolName(toolset.MCPToolName(s.name, t.Name))) {
				continue // a name the model could not call, or one that splits another way
			}
			if _, dup := out[t.Name]; dup {
				continue // the first wins
			}
			if s.grant.AllTools() && len(out) == MaxStarTools {
				return nil, fmt.Errorf("the %s MCP server lists more than %d tools; with tools = [\"*\"] it may list at most %d (list the tools to offer instead)",
					s.name, MaxStarTools, MaxStarTools)
			}
			out[t.Name] = t
		}
		if res.NextCursor == "" {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return out, nil // enough pages: what is not listed by now is not offered
}

// open returns a session for one call (turn nil: a listing), what its
// transport saw, and what to do once the call is done: a remote server's
// session is the call's own and is closed then; a stdio server's is the
// turn's and stays open until the turn ends.
func (s *Server) open(ctx context.Context, turn *tools.Turn, tool string) (*mcp.ClientSession, *session, func(), error) {
	if s.stdio != nil {
		return s.stdio.open(ctx, s, turn)
	}
	st := &session{max: s.client.maxResponse()}
	cs, err := s.connect(ctx, turn, tool, st)
	if err != nil {
		return nil, st, nil, err
	}
	return cs, st, func() { go cs.Close() }, nil // bounded by the SDK (5 s)
}

// connect opens one session whose every request carries the grant's
// headers and the vessel's.
func (s *Server) connect(ctx context.Context, turn *tools.Turn, tool string, st *session) (*mcp.ClientSession, error) {
	hc := s.client.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	owner, agent := "", s.agent
	if turn != nil {
		owner = turn.Owner
		if turn.Agent != "" {
			agent = turn.Agent
		}
	}
	headers := http.Header{}
	for k, v := range s.grant.Headers {
		headers.Set(k, v)
	}
	// Ours last, so a deployment header cannot impersonate them.
	headers.Set("User-Agent", userAgent)
	headers.Set(HeaderOwner, owner)
	headers.Set(HeaderAgent, agent)
	headers.Set(HeaderTool, tool)
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	wrapped := &http.Client{
		Transport:     &roundTripper{base: base, headers: headers, st: st},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Jar:           nil,
	}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             s.grant.URL,
		HTTPClient:           wrapped,
		MaxRetries:           -1,   // a lost stream is a failed call, not a retry loop
		DisableStandaloneSSE: true, // nothing the server says unasked is wanted
		MaxEventSize:         int(min(st.max, 1<<30)),
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: userAgent, Version: "1"}, nil)
	return cl.Connect(ctx, tr, nil)
}

// explain turns a failed session into the sentence the model reads; a
// cancelled turn is returned as is.
func (s *Server) explain(parent, ctx context.Context, err error, st *session, doing string) error {
	if parent.Err() != nil {
		return parent.Err()
	}
	who := fmt.Sprintf("the %s MCP server", s.name)
	if st.exit != nil && !st.oversize.Load() && ctx.Err() == nil {
		if why := st.exit(); why != "" {
			return fmt.Errorf("%s stopped while %s: %s", who, doing, why)
		}
	}
	switch {
	case st.oversize.Load():
		return fmt.Errorf("%s sent more than %d bytes while %s; nothing of it was kept", who, st.max, doing)
	case ctx.Err() != nil:
		d := s.timeout()
		if doing == "listing its tools" {
			d = min(ListTimeout, d)
		}
		return fmt.Errorf("%s did not answer within %s while %s", who, d, doing)
	case st.status.Load() != 0:
		code := st.status.Load()
		msg := fmt.Sprintf("%s answered HTTP %d while %s", who, code, doing)
		if code >= 300 && code < 400 {
			msg += " (a redirect; redirects are not followed)"
		}
		return errors.New(msg)
	case st.reached.Load():
		return fmt.Errorf("%s broke the protocol while %s: %s", who, doing, errorText(err))
	}
	return fmt.Errorf("could not reach %s: %s", who, errorText(err))
}

// session is what the transport saw of one session.
type session struct {
	max      int64
	read     atomic.Int64
	oversize atomic.Bool
	status   atomic.Int32 // the first error status, 0 for none
	reached  atomic.Bool  // some reply came back
	// exit, for a stdio server, says how its process ended ("" while it runs).
	exit func() string
}

// roundTripper sets the session's headers on every request and bounds the
// bytes of all its replies together.
type roundTripper struct {
	base    http.RoundTripper
	headers http.Header
	st      *session
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range rt.headers {
		r.Header[k] = v
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	rt.st.reached.Store(true)
	// A DELETE that ends the session may be refused; that is not the call's failure.
	if (resp.StatusCode < 200 || resp.StatusCode > 299) && req.Method != http.MethodDelete {
		rt.st.status.CompareAndSwap(0, int32(resp.StatusCode))
	}
	resp.Body = &limitedBody{rc: resp.Body, st: rt.st}
	return resp, nil
}

// limitedBody fails a read once the session's replies pass the bound.
type limitedBody struct {
	rc io.ReadCloser
	st *session
}

var errOversize = errors.New("reply too large")

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.st.oversize.Load() {
		return 0, errOversize
	}
	n, err := b.rc.Read(p)
	if b.st.read.Add(int64(n)) > b.st.max {
		b.st.oversize.Store(true)
		return 0, errOversize
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// errorText keeps a transport error short, without the request URL.
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return truncate(strings.ToValidUTF8(err.Error(), "\uFFFD"), 300)
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

// compactJSON is v as compact JSON, or "" when it cannot be encoded.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
