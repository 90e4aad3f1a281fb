package a2aserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
)

// CodeTooManyRequests is the JSON-RPC code of a request refused by a
// [limits] entry (HTTP 429 with Retry-After); docs/a2a.md.
const CodeTooManyRequests = -32029

// What a request starts, for admission: a turn, an event stream, both
// (SendStreamingMessage) or neither. readsOnly marks a call that only reads
// stored tasks (GetTask, ListTasks, a push config, a subscription): it is
// served while its agent is out of service, so owners can read finished
// tasks while the sandbox, the egress or the task store's writes fail.
const (
	startsTurn = 1 << iota
	startsStream
	readsOnly
)

// methodStarts returns what an A2A 1.0 or 0.3 method name starts.
func methodStarts(method string) int {
	switch method {
	case "SendMessage", "message/send":
		return startsTurn
	case "SendStreamingMessage", "message/stream":
		return startsTurn | startsStream
	case "SubscribeToTask", "tasks/resubscribe":
		return startsStream | readsOnly
	case "GetTask", "tasks/get", "ListTasks", "tasks/list",
		"GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get",
		"ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list",
		"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard":
		return readsOnly
	}
	return 0
}

// rpcStarts reads the method of a JSON-RPC request as the JSON-RPC handler
// will: the body's a2acompat envelope, parsed once for both. A body it
// refuses starts nothing.
func rpcStarts(r *http.Request) int {
	rb, ok := r.Body.(*a2acompat.ReadBody)
	if !ok {
		return 0
	}
	env, perr := rb.Envelope()
	if perr != nil {
		return 0
	}
	return methodStarts(env.Method)
}

// restStarts classifies a REST request by its method and path below the
// binding's prefix, as the SDK's REST mux routes it.
func restStarts(method, path string) int {
	switch {
	case method == http.MethodPost && path == "/message:send":
		return startsTurn
	case method == http.MethodPost && path == "/message:stream":
		return startsTurn | startsStream
	// The mux serves a GET route to HEAD too: a HEAD subscription is one.
	case (method == http.MethodGet || method == http.MethodHead || method == http.MethodPost) &&
		strings.HasPrefix(path, "/tasks/") && strings.HasSuffix(path, ":subscribe"):
		return startsStream | readsOnly
	// Every other GET reads: a task, the task list, a push config, the card.
	case method == http.MethodGet || method == http.MethodHead:
		return readsOnly
	}
	return 0
}

// whoOf names the caller for admission: app keys count by [[apps]] id,
// tokens by [[issuers]] id.
func whoOf(p *auth.Principal, agentID string) admission.Who {
	app := "app:" + p.AppID
	if p.Kind == auth.KindToken {
		app = "issuer:" + p.IssuerID
	}
	return admission.Who{Owner: p.Owner, App: app, Agent: agentID}
}

type ticketKey struct{}

// ticketFrom returns the admitted turn's ticket a request carries.
func ticketFrom(ctx context.Context) *admission.Ticket {
	t, _ := ctx.Value(ticketKey{}).(*admission.Ticket)
	return t
}

// Admission returns the server's admission controller.
func (s *Server) Admission() *admission.Controller { return s.adm }

// AdmitRequest is the first admission check, for every request once its
// caller is authenticated and granted the agent: the app's request rate
// and the owner's requests in flight. release ends the request's place.
func (s *Server) AdmitRequest(p *auth.Principal, agentID string) (release func(), err error) {
	release, err = s.adm.Request(whoOf(p, agentID))
	if err != nil {
		s.refused(p, agentID, err)
	}
	return release, err
}

// AdmitMethod is the second admission check, once the method is known:
// a method that starts a turn takes a place under every turn cap (the
// returned context carries it to the executor, which holds it for the
// turn's life), one that opens an event stream a place among the owner's
// streams. release ends the request's hold; call it when the request ends.
// Every binding runs both checks before the SDK sees the request; a
// refusal is an *admission.Refusal, answered 429 with its Retry-After
// (CodeTooManyRequests on JSON-RPC).
func (s *Server) AdmitMethod(ctx context.Context, p *auth.Principal, agentID, method string) (context.Context, func(), error) {
	return s.admitStarts(ctx, p, agentID, methodStarts(method))
}

func (s *Server) admitStarts(ctx context.Context, p *auth.Principal, agentID string, starts int) (context.Context, func(), error) {
	starts &^= readsOnly
	if starts == 0 {
		return ctx, func() {}, nil
	}
	w := whoOf(p, agentID)
	var endStream func()
	if starts&startsStream != 0 {
		f, err := s.adm.Stream(w)
		if err != nil {
			s.refused(p, agentID, err)
			return ctx, nil, err
		}
		endStream = f
	}
	if starts&startsTurn == 0 {
		return ctx, endStream, nil
	}
	t, err := s.adm.Turn(w)
	if err != nil {
		if endStream != nil {
			endStream()
		}
		s.refused(p, agentID, err)
		return ctx, nil, err
	}
	return context.WithValue(ctx, ticketKey{}, t), func() {
		t.Done()
		if endStream != nil {
			endStream()
		}
	}, nil
}

func (s *Server) refused(p *auth.Principal, agentID string, err error) {
	var r *admission.Refusal
	if !errors.As(err, &r) {
		return
	}
	s.cfg.Metrics.refused.WithLabelValues(r.Limit).Inc()
	// Debug: a flood would otherwise write one line per refused request.
	s.log.Debug("request refused by a limit", zap.String(telemetry.FieldAgent, agentID), zap.String("owner", p.Owner), zap.String("limit", r.Limit))
}

// tooMany is the refusal of a call over a [limits] entry: 429, with the
// seconds to wait for Retry-After.
func tooMany(err error) *refusal {
	var r *admission.Refusal
	retry := 1
	if errors.As(err, &r) {
		retry = r.RetryAfterSeconds()
	}
	return &refusal{status: http.StatusTooManyRequests, msg: err.Error(), retryAfter: retry}
}
