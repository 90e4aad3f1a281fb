package a2aserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
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
	starts := 0
	r, done, ok := s.admit(w, r, a, restRefusal, func(r *http.Request) int {
		starts = restStarts(r.Method, strings.TrimPrefix(r.URL.Path, prefix))
		return starts
	})
	if !ok {
		return
	}
	defer done()
	r2 := r.Clone(r.Context())
	if starts&startsTurn != 0 {
		r2 = refuseOversize(r2)
	}
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

// refuseOversize hands the SDK a send whose history is over the cap
// without it (a2acompat.RefuseOversize; the JSON-RPC front does the same
// in a2acompat.Handler): the turn is rejected for its length, as it would
// be with the whole history decoded.
func refuseOversize(r *http.Request) *http.Request {
	rb, ok := r.Body.(*a2acompat.ReadBody)
	if !ok {
		return r
	}
	rest, aside, over := a2acompat.RefuseOversize(rb.Bytes())
	if !over {
		return r
	}
	r = r.WithContext(turn.WithAside(r.Context(), aside))
	r.Body = a2acompat.NewReadBody(rest)
	r.ContentLength = int64(len(rest))
	r.Header.Set("Content-Length", strconv.Itoa(len(rest)))
	return r
}

// restStatusWriter corrects the HTTP status of the SDK's REST errors where
// a2a-go v2.4.0 departs from A2A 1.0:
//   - TaskNotCancelableError is 409 Conflict (the SDK answers 400). A 400
//     answer is held until its body is read.
//   - An error known before a stream starts (subscribe to a finished or
//     unknown task, a refused send) is the HTTP status with its
//     google.rpc.Status body (§11.6); the SDK answers HTTP 200 and one SSE
//     error frame. A stream's headers are held until its first event is
//     flushed: an error there becomes the status, anything else (an event,
//     a keep-alive) starts the stream as the SDK wrote it.
//
// Every other answer passes straight through.
type restStatusWriter struct {
	http.ResponseWriter
	held   bool // a 400 is held
	stream int  // streamNone, streamHeld, streamOpen, streamRefused
	buf    bytes.Buffer
}

const (
	streamNone = iota
	streamHeld
	streamOpen
	streamRefused
)

func (w *restStatusWriter) WriteHeader(code int) {
	switch {
	case code == http.StatusBadRequest && !w.held:
		w.held = true
		return
	case code == http.StatusOK && w.stream == streamNone &&
		strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"):
		w.stream = streamHeld
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *restStatusWriter) Write(p []byte) (int, error) {
	switch {
	case w.held || w.stream == streamHeld:
		return w.buf.Write(p)
	case w.stream == streamRefused:
		return len(p), nil // the stream was answered as an error
	}
	return w.ResponseWriter.Write(p)
}

// Flush lets SSE answers stream; the first flush of a held stream decides
// what it is.
func (w *restStatusWriter) Flush() {
	if w.stream == streamHeld {
		w.openStream()
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.held && w.stream != streamRefused {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *restStatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// openStream answers a held stream: as its error's status when its first
// frame is an error, else as the stream.
func (w *restStatusWriter) openStream() {
	first := w.buf.Bytes()
	if body, status, ok := sseError(first); ok {
		if fixed, ok := conflictStatus(body); ok {
			body, status = fixed, http.StatusConflict
		}
		h := w.Header()
		for _, k := range []string{"Cache-Control", "Connection", "X-Accel-Buffering"} {
			h.Del(k)
		}
		h.Set("Content-Type", "application/json")
		w.ResponseWriter.WriteHeader(status)
		_, _ = w.ResponseWriter.Write(body)
		w.stream = streamRefused
		w.buf.Reset()
		return
	}
	w.ResponseWriter.WriteHeader(http.StatusOK)
	_, _ = w.ResponseWriter.Write(first)
	w.stream = streamOpen
	w.buf.Reset()
}

// sseError reads an SSE event whose data is a google.rpc.Status error
// ({"error": {"code": <HTTP status>, ...}}) and returns that JSON and its
// status.
func sseError(ev []byte) ([]byte, int, bool) {
	for _, line := range bytes.Split(ev, []byte("\n")) {
		name, data := sse.Field(bytes.TrimSuffix(line, []byte{'\r'}))
		if string(name) != "data" {
			continue
		}
		data = bytes.TrimSpace(data)
		var v struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &v) != nil || v.Error == nil || v.Error.Code < 400 || v.Error.Code > 599 {
			return nil, 0, false
		}
		return append(bytes.Clone(data), '\n'), v.Error.Code, true
	}
	return nil, 0, false
}

func (w *restStatusWriter) finish() {
	if w.stream == streamHeld {
		w.openStream()
		return
	}
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
