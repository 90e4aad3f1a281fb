// Package a2acompat is the front of one agent's JSON-RPC endpoint. It
// checks every request strictly against JSON-RPC 2.0 (ParseEnvelope:
// envelope, text validity, notifications, POST only) and lets the endpoint
// serve older A2A callers beside A2A 1.0 ones, as AstralDeep's older builds
// call external agents:
//
//   - A2A 0.3 JSON-RPC methods (message/send, message/stream, tasks/get,
//     tasks/cancel, ...) with 0.3 shapes ("kind" parts, lower-case roles) go
//     to the SDK's a2av0 handler, built on the same RequestHandler, so the
//     same executor, store and interceptors serve them.
//   - Field names in snake_case (message_id, context_id, media_type, ...),
//     as older proto-JSON writers emit them, are rewritten to the camelCase
//     the SDK reads. Values under "data" and "metadata" are the caller's own
//     and are never rewritten, and numbers are copied digit for digit.
//   - Everything else reaches the A2A 1.0 handler as a canonical envelope
//     with the caller's params unchanged; the answer carries the caller's
//     id exactly as sent.
//
// Wrap it inside the vessel's checks (authentication, body limit), around
// the SDK handlers only: it reads the whole body, which must already be
// bounded.
package a2acompat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

// v03Methods are the JSON-RPC method names of A2A 0.3.
var v03Methods = map[string]bool{
	"message/send":                        true,
	"message/stream":                      true,
	"tasks/get":                           true,
	"tasks/cancel":                        true,
	"tasks/resubscribe":                   true,
	"tasks/pushNotificationConfig/get":    true,
	"tasks/pushNotificationConfig/set":    true,
	"tasks/pushNotificationConfig/list":   true,
	"tasks/pushNotificationConfig/delete": true,
	"agent/getAuthenticatedExtendedCard":  true,
}

// IsV03Method reports whether method is an A2A 0.3 JSON-RPC method name.
func IsV03Method(method string) bool { return v03Methods[method] }

// NewHandler serves one agent's JSON-RPC for A2A 1.0 and 0.3 callers from
// one RequestHandler.
func NewHandler(rh a2asrv.RequestHandler, opts ...a2asrv.TransportOption) http.Handler {
	return Handler(a2asrv.NewJSONRPCHandler(rh, opts...), a2av0.NewJSONRPCHandler(rh, opts...))
}

// VersionParam is the query parameter that, like the A2A-Version header,
// names the protocol version a request speaks (A2A 1.0 §3.6.1).
const VersionParam = "A2A-Version"

// ReadBody is a request body already read whole, which Handler takes as it
// is instead of copying it again (a turn's body carries its whole history).
type ReadBody struct {
	*bytes.Reader
	b []byte
	// env and envErr are ParseEnvelope's answer, once asked (Envelope).
	env    *Envelope
	envErr *EnvelopeError
	parsed bool
}

// Envelope returns ParseEnvelope of the body, parsed on the first call
// only: the vessel's admission reads the method before Handler runs, and
// the body is checked once.
func (rb *ReadBody) Envelope() (*Envelope, *EnvelopeError) {
	if !rb.parsed {
		rb.env, rb.envErr = ParseEnvelope(rb.b)
		rb.parsed = true
	}
	return rb.env, rb.envErr
}

// NewReadBody wraps a body read whole.
func NewReadBody(b []byte) *ReadBody { return &ReadBody{Reader: bytes.NewReader(b), b: b} }

// Bytes returns the body's bytes (not a copy: they must not be changed).
func (rb *ReadBody) Bytes() []byte { return rb.b }

// Close implements io.Closer.
func (*ReadBody) Close() error { return nil }

// release drops the body's bytes once Handler no longer reads them; the
// body then reads as empty.
func (rb *ReadBody) release() {
	rb.b = nil
	rb.env, rb.envErr, rb.parsed = nil, nil, false
	rb.Reader.Reset(nil)
}

// Handler routes each request to v1 or v0 by its method. Before either sees
// it, the body passes ParseEnvelope (a strict JSON-RPC 2.0 check; an error
// is answered here as JSON-RPC with HTTP 200), a notification is answered
// 204 No Content without being run, an A2A-Version query parameter is added
// to the request's A2A-Version header values, snake_case field names are
// rewritten, and the handler sees a canonical envelope whose id it echoes
// exactly as the caller sent it (the SDK would decode a numeric id into a
// float64). Only POST is served: any other method gets 405 with
// "Allow: POST". Every answer that is not a stream is application/json.
func Handler(v1, v0 http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			MethodNotAllowed(w)
			return
		}
		rb, owned := r.Body.(*ReadBody) // read whole already (the vessel's body limit): no second copy
		if !owned {
			var body []byte
			if r.Body != nil {
				var err error
				body, err = io.ReadAll(r.Body)
				_ = r.Body.Close()
				if err != nil {
					WriteError(w, &EnvelopeError{Code: CodeParseError, Message: "parse error: could not read the request body"})
					return
				}
			}
			rb = NewReadBody(body)
		}
		env, eerr := rb.Envelope()
		if eerr != nil {
			WriteError(w, eerr)
			return
		}
		if env.Notification() {
			// JSON-RPC 2.0 sends nothing back for a notification; every A2A
			// method answers with a result, so none is run (docs/a2a.md).
			w.WriteHeader(http.StatusNoContent)
			return
		}
		params := []byte(env.Params)
		if hasSnakeField(params) {
			if fixed, err := CamelCase(params); err == nil {
				params = fixed
			}
		}
		ctx := r.Context()
		if liftMethods[env.Method] {
			if rest, aside, ok := liftTranscript(params); ok {
				params = rest
				ctx = turn.WithAside(ctx, aside)
			}
		}
		// An id the SDK echoes byte for byte goes to it as is; any other
		// (numbers, escapes) as a placeholder swapped back in the answer.
		ph, asSent := echoedAsSent(env.ID)
		if !asSent {
			var err error
			if ph, err = newIDPlaceholder(); err != nil {
				WriteError(w, &EnvelopeError{Code: -32603, Message: "internal error", ID: env.ID})
				return
			}
		}
		canon, err := canonicalBody(env.Method, ph, params)
		if err != nil {
			WriteError(w, &EnvelopeError{Code: CodeInvalidParams, Message: "invalid params: params could not be read", ID: env.ID})
			return
		}
		// From here on only canon is read: the body (a turn's whole history)
		// is let go rather than held for as long as the turn streams.
		id := bytes.Clone(env.ID)
		params, env.Params, env.ID = nil, nil, nil
		if owned {
			rb.release()
		}
		r2 := r.Clone(ctx)
		r2.Body = io.NopCloser(bytes.NewReader(canon))
		r2.ContentLength = int64(len(canon))
		r2.Header.Set("Content-Length", fmt.Sprint(len(canon)))
		if vs, ok := r.URL.Query()[VersionParam]; ok {
			for _, v := range vs {
				r2.Header.Add(VersionParam, v)
			}
		}
		var from []byte
		if !asSent {
			from = []byte(`"` + ph + `"`)
		}
		out := newIDWriter(w, from, id)
		defer out.finish()
		if IsV03Method(env.Method) {
			// The method already says which protocol this is; an
			// "A2A-Version: 0.3" header would only make a 1.0 version check
			// refuse a call this handler serves.
			r2.Header.Del(VersionParam)
			v0.ServeHTTP(out, r2)
			return
		}
		v1.ServeHTTP(out, r2)
	})
}

// MethodNotAllowed answers a request on a JSON-RPC URL that is not a POST.
func MethodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", http.MethodPost)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusMethodNotAllowed)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": CodeInvalidRequest, "message": "invalid request: JSON-RPC requests must be sent with POST"},
	})
}

// WriteError answers a JSON-RPC error with HTTP 200, echoing e.ID as sent
// (null when the id could not be read).
func WriteError(w http.ResponseWriter, e *EnvelopeError) {
	id := json.RawMessage("null")
	if e.ID != nil {
		id = e.ID
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, map[string]any{"code": e.Code, "message": e.Message}})
	if err != nil {
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}

// canonicalBody is the request the SDK handlers read: exactly the members
// ParseEnvelope checked, the id replaced by a placeholder string. params,
// already checked to be a JSON object, is copied byte for byte rather than
// re-encoded (it may be most of a 16 MB body).
func canonicalBody(method, idPlaceholder string, params []byte) ([]byte, error) {
	m, err := json.Marshal(method)
	if err != nil {
		return nil, fmt.Errorf("a2acompat: encode method: %w", err)
	}
	id, err := json.Marshal(idPlaceholder)
	if err != nil {
		return nil, fmt.Errorf("a2acompat: encode id: %w", err)
	}
	if len(params) == 0 {
		params = []byte(`{}`)
	}
	b := make([]byte, 0, len(params)+len(m)+len(id)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = append(b, m...)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, '}'), nil
}

// snakeFields are the snake_case spellings of the A2A request fields with
// multi-word names; only a body holding one of them is rewritten. Scanning
// for these few keys is cheap, where matching any snake_case key would
// rewrite (decode and re-encode) every request whose history carries
// OpenAI keys such as "tool_calls", tens of milliseconds for a long one.
var snakeFields = map[string]bool{
	"message_id": true, "context_id": true, "task_id": true, "media_type": true,
	"reference_task_ids": true, "accepted_output_modes": true, "return_immediately": true,
	"history_length": true, "push_notification_config": true, "task_push_notification_config": true,
	"artifact_id": true, "last_chunk": true, "status_timestamp_after": true, "include_artifacts": true,
	"page_size": true, "page_token": true, "protocol_version": true, "push_notification_config_id": true,
}

// snakeWindow bounds how far from an underscore the quotes of a listed
// key can be (the longest is 29 characters).
const snakeWindow = 32

// hasSnakeField reports whether body holds one of snakeFields in quotes.
// It makes one pass, looking only around underscores: a long history
// would otherwise be scanned once per listed key.
func hasSnakeField(body []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(body[i:], '_')
		if j < 0 {
			return false
		}
		j += i
		i = j + 1
		lo := max(0, j-snakeWindow)
		a := bytes.LastIndexByte(body[lo:j], '"')
		if a < 0 {
			continue
		}
		e := bytes.IndexByte(body[j:min(len(body), j+snakeWindow)], '"')
		if e < 0 {
			continue
		}
		if snakeFields[string(body[lo+a+1:j+e])] {
			return true
		}
		i = j + e // the closing quote may open the next key
	}
}

// opaque are keys whose values belong to the caller and are copied as is.
var opaque = map[string]bool{"data": true, "metadata": true}

// CamelCase rewrites the snake_case object keys of a JSON document to
// camelCase, leaving the values of "data" and "metadata" untouched. When a
// key is present in both spellings the camelCase one wins. Numbers keep
// their exact digits.
func CamelCase(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("a2acompat: decode: %w", err)
	}
	out, err := json.Marshal(rewrite(v))
	if err != nil {
		return nil, fmt.Errorf("a2acompat: encode: %w", err)
	}
	return out, nil
}

func rewrite(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		// camelCase keys first, so they win over their snake twins.
		for k, x := range t {
			if camel(k) == k {
				out[k] = rewriteValue(k, x)
			}
		}
		for k, x := range t {
			c := camel(k)
			if c == k {
				continue
			}
			if _, dup := out[c]; dup {
				continue
			}
			out[c] = rewriteValue(c, x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = rewrite(x)
		}
		return out
	}
	return v
}

func rewriteValue(key string, v any) any {
	if opaque[key] {
		return v
	}
	return rewrite(v)
}

// camel turns message_id into messageId; other keys are returned as is.
func camel(k string) string {
	if !strings.Contains(k, "_") || strings.HasPrefix(k, "_") || strings.HasSuffix(k, "_") || strings.Contains(k, "__") {
		return k
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return k
		}
	}
	parts := strings.Split(k, "_")
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		b.WriteString(strings.ToUpper(p[:1]))
		b.WriteString(p[1:])
	}
	return b.String()
}
