// Package client is the application-side client of an AstralVessel agent
// server. It speaks A2A 1.0 over JSON-RPC (or, with Options.Binding, the
// HTTP+JSON binding) through a2a-go's client, sends the
// conversation history as a transcript envelope, and turns the vessel's
// frames into typed events: text and reasoning deltas, tool calls, files,
// transcript messages to store, the answer, and the turn's outcome.
package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/astraldeep/astralvessel-go/vessel/client/jwks"
)

// Options say how the client authenticates and which HTTP client it uses.
// Give either AppKey with User, or Token.
type Options struct {
	// AppKey is the application's key, sent as a bearer token.
	AppKey string
	// User names the end user (X-Vessel-User); required with AppKey.
	User string
	// Token is a signed token from an issuer the deployment trusts, used
	// instead of an app key.
	Token string
	// Scopes, when set, narrow the tools the agent may use on each call
	// (X-Vessel-Scopes).
	Scopes []string
	// Approve, when set, asks for more approvals on each call
	// (X-Vessel-Approve: tool names, scopes, service:<name> or "all"); it
	// never removes any the deployment requires.
	Approve []string
	// HTTPClient is used for every request. Its Timeout also bounds
	// streams, so prefer none and bound calls with a context. Nil means a
	// client without a timeout.
	HTTPClient *http.Client
	// Binding is the A2A protocol binding to call the agent over:
	// BindingJSONRPC (the default when empty), BindingHTTPJSON or
	// BindingGRPC.
	Binding Binding
	// GRPCAddress is the vessel's gRPC binding, host:port (the URL of the
	// card's GRPC interface); required with BindingGRPC, unused otherwise.
	GRPCAddress string
	// GRPCDialOptions are added to the gRPC connection's options; without
	// transport credentials among them the connection is plaintext, as
	// the vessel serves it.
	GRPCDialOptions []grpc.DialOption
	// CardKeys pins the keys the agent's card must be signed with when it
	// is read with verification (Card); empty trusts the keys the vessel
	// serves beside the card.
	CardKeys CardKeys
}

// Binding names an A2A protocol binding the vessel serves.
type Binding = a2a.TransportProtocol

// The bindings the vessel serves, as the agent card names them.
const (
	BindingJSONRPC  Binding = a2a.TransportProtocolJSONRPC
	BindingHTTPJSON Binding = a2a.TransportProtocolHTTPJSON
	BindingGRPC     Binding = a2a.TransportProtocolGRPC
)

// ParseBinding reads a binding name as a user types it: "jsonrpc" or
// "JSONRPC"; "rest", "http+json" or "HTTP+JSON"; "grpc" or "GRPC". Empty
// is JSON-RPC.
func ParseBinding(s string) (Binding, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "jsonrpc", "json-rpc":
		return BindingJSONRPC, nil
	case "rest", "http+json", "httpjson":
		return BindingHTTPJSON, nil
	case "grpc":
		return BindingGRPC, nil
	}
	return "", fmt.Errorf("client: unknown binding %q: use jsonrpc, rest or grpc", s)
}

// RESTPath is where the vessel serves an agent's HTTP+JSON binding, under
// the agent's URL.
const RESTPath = "/v1"

// Client calls one agent of a vessel. It is safe for concurrent use.
type Client struct {
	base     string
	hc       *http.Client
	endpoint string
	agentID  string
	headers  http.Header
	a2a      *a2aclient.Client
	cardKeys *jwks.Cache
}

// New returns a client for the agent agentID of the vessel at baseURL
// (for example "http://127.0.0.1:8700"). It makes no request.
func New(baseURL, agentID string, opts Options) (*Client, error) {
	if agentID == "" {
		return nil, errors.New("client: agent id is empty")
	}
	if opts.AppKey == "" && opts.Token == "" {
		return nil, errors.New("client: give an app key or a token")
	}
	if opts.AppKey != "" && opts.Token != "" {
		return nil, errors.New("client: give an app key or a token, not both")
	}
	if opts.AppKey != "" && opts.User == "" {
		return nil, errors.New("client: an app key needs a user (X-Vessel-User)")
	}
	base := strings.TrimRight(baseURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("client: base URL %q is not http(s)", baseURL)
	}
	endpoint := base + "/agents/" + agentID
	binding, err := ParseBinding(string(opts.Binding))
	if err != nil {
		return nil, err
	}
	var transport a2aclient.FactoryOption
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient
		hc = &c
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = &statusTransport{base: rt, rest: binding == BindingHTTPJSON}
	iface := a2a.NewAgentInterface(endpoint, binding)
	switch binding {
	case BindingHTTPJSON:
		endpoint += RESTPath
		iface.URL = endpoint
		transport = a2aclient.WithRESTTransport(hc)
	case BindingGRPC:
		if opts.GRPCAddress == "" {
			return nil, errors.New("client: the gRPC binding needs Options.GRPCAddress (the URL of the card's GRPC interface)")
		}
		// One listener serves every agent: the tenant names this one.
		endpoint = opts.GRPCAddress
		iface.URL, iface.Tenant = endpoint, agentID
		dial := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithChainUnaryInterceptor(grpcUnaryRefusals), grpc.WithChainStreamInterceptor(grpcStreamRefusals)},
			opts.GRPCDialOptions...)
		transport = a2agrpc.WithGRPCTransport(dial...)
	default:
		transport = a2aclient.WithJSONRPCTransport(hc)
	}

	h := http.Header{}
	secret := opts.AppKey
	if opts.Token != "" {
		secret = opts.Token
	}
	h.Set("Authorization", "Bearer "+secret)
	if opts.User != "" {
		h.Set("X-Vessel-User", opts.User)
	}
	if len(opts.Approve) > 0 {
		h.Set("X-Vessel-Approve", strings.Join(opts.Approve, ","))
	}
	if len(opts.Scopes) > 0 {
		h.Set("X-Vessel-Scopes", strings.Join(opts.Scopes, " "))
	}

	c := &Client{base: base, hc: hc, endpoint: endpoint, agentID: agentID, headers: h}
	if c.cardKeys, err = newCardKeyCache(base, hc, opts.CardKeys); err != nil {
		return nil, err
	}
	ac, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{iface},
		a2aclient.WithDefaultsDisabled(), transport,
		a2aclient.WithCallInterceptors(headerInterceptor{h: h}),
	)
	if err != nil {
		return nil, fmt.Errorf("client: build A2A client for %s: %w", endpoint, err)
	}
	c.a2a = ac
	return c, nil
}

// Endpoint is the agent's A2A URL for the client's binding.
func (c *Client) Endpoint() string { return c.endpoint }

// AgentID is the agent this client calls.
func (c *Client) AgentID() string { return c.agentID }

// A2A exposes the underlying a2a-go client, with the auth headers attached,
// for calls this package does not wrap.
func (c *Client) A2A() *a2aclient.Client { return c.a2a }

// headerInterceptor adds the caller's auth headers to every call.
type headerInterceptor struct {
	a2aclient.PassthroughInterceptor
	h http.Header
}

func (hi headerInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	for k, vs := range hi.h {
		if len(req.ServiceParams.Get(k)) == 0 {
			req.ServiceParams.Append(k, vs...)
		}
	}
	return ctx, nil, nil
}

// Image is an image attached to a turn, for agents whose model accepts images.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte
	Name      string // optional file name
}

// TurnRequest is one turn of a conversation.
type TurnRequest struct {
	// Text is the user's message.
	Text string
	// History is the conversation so far, as returned by earlier turns.
	History []Message
	// ContextID names the conversation; the vessel makes one when empty.
	ContextID string
	// AcceptFiles lists the file types the caller wants (media types such as
	// "image/png", or extensions such as "csv"). Nil accepts every file type
	// of the spec; an empty non-nil slice accepts none.
	AcceptFiles []string
	// Images are attached images.
	Images []Image
	// Data, when set and Text is empty, is sent as a data part: the
	// structured skill call {"method": "tools/call", "arguments": {...}}.
	Data map[string]any
	// Metadata goes into the request's params.metadata.
	Metadata map[string]any
	// NoTranscript leaves the transcript media type out of
	// acceptedOutputModes, so no transcript comes back.
	NoTranscript bool
}

// NoFilesMediaType is a media type no file has: listed alone among the
// reply types in acceptedOutputModes, it asks for no files at all.
const NoFilesMediaType = "application/vnd.astralvessel.no-files"

// fileTypes maps the spec's file extensions to media types.
var fileTypes = map[string]string{
	"png": "image/png",
	"svg": "image/svg+xml",
	"csv": "text/csv",
	"pdf": "application/pdf",
}

// SkillCall returns the data of a structured skill call asking question.
func SkillCall(agentID, question string) map[string]any {
	return map[string]any{"method": "tools/call", "name": agentID, "arguments": map[string]any{"question": question}}
}

// buildRequest turns a TurnRequest into an A2A SendMessageRequest.
func buildRequest(req TurnRequest) (*a2a.SendMessageRequest, error) {
	var parts []*a2a.Part
	if req.Text != "" {
		parts = append(parts, a2a.NewTextPart(req.Text))
	} else if req.Data != nil {
		parts = append(parts, a2a.NewDataPart(req.Data))
	}
	if len(req.History) > 0 {
		env, err := EncodeEnvelope(req.History)
		if err != nil {
			return nil, err
		}
		parts = append(parts, &a2a.Part{Content: a2a.Raw(env), MediaType: TranscriptMediaType})
	}
	for i, img := range req.Images {
		if img.MediaType == "" {
			return nil, fmt.Errorf("client: image %d has no media type", i)
		}
		parts = append(parts, &a2a.Part{Content: a2a.Raw(img.Data), MediaType: img.MediaType, Filename: img.Name})
	}
	if len(parts) == 0 {
		return nil, errors.New("client: a turn needs text, data or history")
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	msg.ContextID = req.ContextID
	modes := []string{MarkdownMediaType, PrimitivesMediaType}
	if !req.NoTranscript {
		modes = append(modes, TranscriptMediaType)
	}
	if req.AcceptFiles == nil {
		for _, ext := range []string{"png", "svg", "csv", "pdf"} {
			modes = append(modes, fileTypes[ext])
		}
	}
	if req.AcceptFiles != nil && len(req.AcceptFiles) == 0 {
		// Listing only the reply types would accept every file: list a
		// type no file has instead.
		modes = append(modes, NoFilesMediaType)
	}
	for _, f := range req.AcceptFiles {
		f = strings.TrimPrefix(strings.ToLower(f), ".")
		if mt, ok := fileTypes[f]; ok {
			f = mt
		}
		modes = append(modes, f)
	}
	return &a2a.SendMessageRequest{
		Message:  msg,
		Config:   &a2a.SendMessageConfig{AcceptedOutputModes: modes},
		Metadata: req.Metadata,
	}, nil
}

// Turn starts a streamed turn. Iterate Stream.Events to run it; the stream
// collects a Result as it goes.
func (c *Client) Turn(ctx context.Context, req TurnRequest) *Stream {
	s := &Stream{res: &Result{}}
	sreq, err := buildRequest(req)
	if err != nil {
		s.err = err
		return s
	}
	s.src = c.a2a.SendStreamingMessage(ctx, sreq)
	return s
}

// Ask runs a streamed turn to its end and returns what it collected.
func (c *Client) Ask(ctx context.Context, req TurnRequest) (*Result, error) {
	s := c.Turn(ctx, req)
	for _, err := range s.Events() {
		if err != nil {
			return s.Result(), err
		}
	}
	return s.Result(), nil
}

// Send runs a turn with a non-streaming SendMessage and returns the finished
// task's result. The transcript and files come only on the stream, so the
// result holds the answer and the outcome.
func (c *Client) Send(ctx context.Context, req TurnRequest) (*Result, error) {
	sreq, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	res, err := c.a2a.SendMessage(ctx, sreq)
	if err != nil {
		return nil, fmt.Errorf("client: send message to %s: %w", c.agentID, err)
	}
	switch r := res.(type) {
	case *a2a.Task:
		return resultFromTask(r), nil
	case *a2a.Message:
		out := &Result{}
		d := newDecoder()
		for _, ev := range d.handle(r) {
			out.add(ev)
		}
		return out, nil
	}
	return nil, fmt.Errorf("client: unexpected SendMessage result %T", res)
}

// Get reads a task the caller owns.
func (c *Client) Get(ctx context.Context, taskID string) (*Result, error) {
	t, err := c.a2a.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(taskID)})
	if err != nil {
		return nil, fmt.Errorf("client: get task %s: %w", taskID, err)
	}
	return resultFromTask(t), nil
}

// Cancel cancels a running task the caller owns.
func (c *Client) Cancel(ctx context.Context, taskID string) (*Result, error) {
	t, err := c.a2a.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)})
	if err != nil {
		return nil, fmt.Errorf("client: cancel task %s: %w", taskID, err)
	}
	return resultFromTask(t), nil
}

// Subscribe re-attaches to a running task's stream (when the server
// supports SubscribeToTask). The first event reflects the task's snapshot.
func (c *Client) Subscribe(ctx context.Context, taskID string) *Stream {
	return &Stream{res: &Result{}, src: c.a2a.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(taskID)})}
}

func resultFromTask(t *a2a.Task) *Result {
	out := &Result{Task: t}
	d := newDecoder()
	for _, ev := range d.handle(t) {
		out.add(ev)
	}
	out.State = string(t.Status.State)
	return out
}

// Stream is one streamed turn.
type Stream struct {
	src  iter.Seq2[a2a.Event, error]
	err  error
	res  *Result
	used bool
}

// Events runs the turn and yields its typed events. An error ends the
// iteration; breaking out closes the stream (the turn keeps running on the
// server: call Cancel to stop it). Events can be iterated once.
func (s *Stream) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if s.err != nil {
			yield(nil, s.err)
			return
		}
		if s.used {
			yield(nil, errors.New("client: stream already consumed"))
			return
		}
		s.used = true
		d := newDecoder()
		for ev, err := range s.src {
			if err != nil {
				s.err = fmt.Errorf("client: turn stream: %w", err)
				yield(nil, s.err)
				return
			}
			for _, te := range d.handle(ev) {
				s.res.add(te)
				if !yield(te, nil) {
					return
				}
			}
			if d.finished {
				return
			}
		}
		if !d.finished {
			s.err = ErrIncomplete
			yield(nil, s.err)
		}
	}
}

// TaskID is the turn's task id, known once the first event arrived.
func (s *Stream) TaskID() string { return s.res.TaskID }

// Result is what the stream has collected so far.
func (s *Stream) Result() *Result { return s.res }

// Result collects a turn's outcome.
type Result struct {
	TaskID    string
	ContextID string
	// State is the task's last known A2A state.
	State string
	// Text is the streamed answer text (text.delta events joined).
	Text string
	// Reasoning is the streamed reasoning joined.
	Reasoning string
	// Messages is the turn's transcript: store them and send them as the
	// next turn's history.
	Messages []Message
	Files    []File
	Answer   *Answer
	Finished *TurnFinished
	Tools    []ToolFinished
	// Task is the raw task for Send, Get and Cancel.
	Task *a2a.Task
	// Approval is set when the turn paused for approval (State
	// TASK_STATE_INPUT_REQUIRED): answer it with Decide.
	Approval *ApprovalRequired
}

// Markdown is the answer's Markdown, or the streamed text when no answer
// artifact arrived.
func (r *Result) Markdown() string {
	if r.Answer != nil && r.Answer.Markdown != "" {
		return r.Answer.Markdown
	}
	return r.Text
}

func (r *Result) add(ev Event) {
	switch e := ev.(type) {
	case TurnStarted:
		if e.TaskID != "" {
			r.TaskID = e.TaskID
		}
		if e.ContextID != "" {
			r.ContextID = e.ContextID
		}
		if r.State == "" {
			r.State = string(a2a.TaskStateSubmitted)
		}
	case TextDelta:
		r.Text += e.Text
		r.State = string(a2a.TaskStateWorking)
	case ReasoningDelta:
		r.Reasoning += e.Text
	case ToolFinished:
		r.Tools = append(r.Tools, e)
	case TranscriptChunk:
		r.Messages = append(r.Messages, e.Messages...)
	case File:
		r.Files = append(r.Files, e)
	case Answer:
		a := e
		r.Answer = &a
	case TurnFinished:
		f := e
		r.Finished = &f
		r.State = e.State
	case ApprovalRequired:
		a := e
		r.Approval = &a
		r.State = string(a2a.TaskStateInputRequired)
	}
}
