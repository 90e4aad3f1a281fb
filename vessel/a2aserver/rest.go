package a2aserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
)

// RESTPath is where an agent's HTTP+JSON (REST) binding lives, under the
// agent's URL: POST /agents/{id}/v1/message:send, GET /agents/{id}/v1/tasks,
// and so on (docs/a2a.md).
const RESTPath = "/v1"

// ErrorDomain is the ErrorInfo domain of the vessel's own refusals that A2A
// has no reason for (the agent unavailable, the body too large or late).
const ErrorDomain = "astralvessel"

// statusOf maps the HTTP status of a vessel refusal to the google.rpc.Status
// code name and the ErrorInfo reason and domain. 401 and 403 carry A2A's own
// reasons, so an A2A client reads them as its unauthenticated and
// unauthorized errors.
func statusOf(status int) (code, reason, domain string) {
	switch status {
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED", a2a.ErrorReason(a2a.ErrUnauthenticated), a2a.ProtocolDomain
	case http.StatusForbidden:
		return "PERMISSION_DENIED", a2a.ErrorReason(a2a.ErrUnauthorized), a2a.ProtocolDomain
	case http.StatusNotFound:
		return "NOT_FOUND", "AGENT_NOT_FOUND", ErrorDomain
	case http.StatusRequestTimeout:
		return "DEADLINE_EXCEEDED", "REQUEST_BODY_TIMEOUT", ErrorDomain
	case http.StatusRequestEntityTooLarge:
		return "RESOURCE_EXHAUSTED", "REQUEST_TOO_LARGE", ErrorDomain
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE", "AGENT_UNAVAILABLE", ErrorDomain
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED", "TOO_MANY_REQUESTS", ErrorDomain
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT", "REQUEST_BODY_UNREADABLE", ErrorDomain
	default:
		return "INTERNAL", a2a.ErrorReason(a2a.ErrInternalError), a2a.ProtocolDomain
	}
}

// restRefusal answers a vessel refusal on the REST binding as A2A 1.0 says
// HTTP+JSON errors look: a google.rpc.Status with an ErrorInfo detail.
func restRefusal(w http.ResponseWriter, status int, msg string) {
	code, reason, domain := statusOf(status)
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"code": status, "status": code, "message": msg,
		"details": []*errordetails.Typed{errordetails.NewErrorInfo(reason, domain, nil)},
	}})
}

// rest is an agent's HTTP+JSON endpoint: the same checks as JSON-RPC
// (admit), then the SDK's REST handler with the agent prefix taken off the
// path. An A2A-Version query parameter counts as the header, as on JSON-RPC.
func (s *Server) rest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a := s.agents[id]
	if a == nil {
		restRefusal(w, http.StatusNotFound, "unknown agent")
		return
	}
	prefix := "/agents/" + id + RESTPath
	r, done, ok := s.admit(w, r, a, restRefusal, func(r *http.Request) int {
		return restStarts(r.Method, strings.TrimPrefix(r.URL.Path, prefix))
	})
	if !ok {
		return
	}
	defer done()
	r2 := r.Clone(r.Context())
	r2.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
	if r.URL.RawPath != "" {
		r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, prefix)
	}
	if vs, ok := r.URL.Query()[a2acompat.VersionParam]; ok {
		for _, v := range vs {
			r2.Header.Add(a2acompat.VersionParam, v)
		}
	}
	sw := &restStatusWriter{ResponseWriter: w}
	defer sw.finish()
	a.rest.ServeHTTP(sw, r2)
}

// restStatusWriter corrects the HTTP status of the SDK's REST errors where
// a2a-go v2.4.0 departs from A2A 1.0's mapping: TaskNotCancelableError is
// 409 Conflict (the SDK answers 400). A 400 answer is held until its body
// is read; every other answer, streams included, passes straight through.
type restStatusWriter struct {
	http.ResponseWriter
	held bool
	buf  bytes.Buffer
}

func (w *restStatusWriter) WriteHeader(code int) {
	if code == http.StatusBadRequest && !w.held {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *restStatusWriter) Write(p []byte) (int, error) {
	if w.held {
		return w.buf.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

// Flush lets SSE answers stream.
func (w *restStatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.held {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *restStatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *restStatusWriter) finish() {
	if !w.held {
		return
	}
	out := w.buf.Bytes()
	if fixed, ok := conflictStatus(out); ok {
		w.ResponseWriter.WriteHeader(http.StatusConflict)
		out = fixed
	} else {
		w.ResponseWriter.WriteHeader(http.StatusBadRequest)
	}
	_, _ = w.ResponseWriter.Write(out)
}

// conflictStatus returns a google.rpc.Status body with code 409 when b is
// a TaskNotCancelableError.
func conflictStatus(b []byte) ([]byte, bool) {
	var body map[string]map[string]json.RawMessage
	if json.Unmarshal(b, &body) != nil || body["error"] == nil {
		return nil, false
	}
	var details []struct {
		Reason string `json:"reason"`
		Domain string `json:"domain"`
	}
	if json.Unmarshal(body["error"]["details"], &details) != nil {
		return nil, false
	}
	for _, d := range details {
		if d.Domain == a2a.ProtocolDomain && d.Reason == a2a.ErrorReason(a2a.ErrTaskNotCancelable) {
			body["error"]["code"] = json.RawMessage("409")
			fixed, err := json.Marshal(body)
			if err != nil {
				return nil, false
			}
			return append(fixed, '\n'), true
		}
	}
	return nil, false
}
