package suite

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// obj is a decoded JSON object; the checks read the wire as the spec spells it.
type obj = map[string]any

func getObj(m obj, keys ...string) obj {
	cur := m
	for _, k := range keys {
		n, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		cur = n
	}
	return cur
}

func getStr(m obj, key string) string { s, _ := m[key].(string); return s }

func getList(m obj, key string) []any { l, _ := m[key].([]any); return l }

// auth is the identity a request carries.
type auth struct {
	key, user string
	noKey     bool
	noUser    bool
}

// httpResult is a raw HTTP answer.
type httpResult struct {
	status int
	header http.Header
	body   []byte
}

func (r *httpResult) json() (obj, error) {
	var m obj
	if err := json.Unmarshal(r.body, &m); err != nil {
		return nil, fmt.Errorf("body is not a JSON object (%s): %w", snippet(r.body), err)
	}
	return m, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func (e *env) setAuth(req *http.Request, a auth) {
	if !a.noKey {
		req.Header.Set("Authorization", "Bearer "+a.key)
	}
	if !a.noUser && a.user != "" {
		req.Header.Set("X-Vessel-User", a.user)
	}
}

// get does a GET on path of the vessel.
func (e *env) get(ctx context.Context, path string, a *auth) (*httpResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+path, nil)
	if err != nil {
		return nil, err
	}
	if a != nil {
		e.setAuth(req, *a)
	}
	return e.do(req)
}

func (e *env) do(req *http.Request) (*httpResult, error) {
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	return &httpResult{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// post sends a raw body to the agent's A2A endpoint.
func (e *env) post(ctx context.Context, agent string, body io.Reader, length int64, a auth, hdr map[string]string) (*httpResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/agents/"+agent, body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	e.setAuth(req, a)
	return e.do(req)
}

// rpc sends one JSON-RPC call and returns the HTTP status and decoded body.
func (e *env) rpc(ctx context.Context, agent, method string, params any, a auth, hdr map[string]string) (int, obj, error) {
	if e.rest() {
		return e.restCall(ctx, agent, method, params, a, hdr)
	}
	if e.grpcMode() {
		return e.grpcCall(ctx, agent, method, params, a, hdr)
	}
	b, err := json.Marshal(obj{"jsonrpc": "2.0", "id": e.nextID(), "method": method, "params": params})
	if err != nil {
		return 0, nil, err
	}
	r, err := e.post(ctx, agent, bytes.NewReader(b), int64(len(b)), a, hdr)
	if err != nil {
		return 0, nil, err
	}
	m, err := r.json()
	return r.status, m, err
}

// rpcError returns the code and message of a JSON-RPC error answer.
func rpcError(m obj) (int, string, bool) {
	e := getObj(m, "error")
	if e == nil {
		return 0, "", false
	}
	code, _ := e["code"].(float64)
	return int(code), getStr(e, "message"), true
}

// frame is one SSE data payload of a stream.
type frame struct {
	raw  obj
	kind string // task, statusUpdate, artifactUpdate, message, error
	body obj    // the object under result.<kind>, or the error
}

// stream sends a streaming JSON-RPC call and reads SSE frames until the
// stream ends or each returns false.
func (e *env) stream(ctx context.Context, agent, method string, params any, a auth, each func(frame) bool) (*httpResult, []frame, error) {
	if e.rest() {
		return e.restStream(ctx, agent, method, params, a, each)
	}
	if e.grpcMode() {
		return e.grpcStream(ctx, agent, method, params, a, each)
	}
	b, err := json.Marshal(obj{"jsonrpc": "2.0", "id": e.nextID(), "method": method, "params": params})
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/agents/"+agent, bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	e.setAuth(req, a)
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", req.URL.Path, err)
	}
	defer resp.Body.Close()
	hr := &httpResult{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		hr.body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return hr, nil, nil
	}
	frames, err := readFrames(ctx, resp.Body, each, func(m obj) frame {
		f := frame{raw: m}
		if er := getObj(m, "error"); er != nil {
			f.kind, f.body = "error", er
		} else if res := getObj(m, "result"); res != nil {
			for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
				if v := getObj(res, k); v != nil {
					f.kind, f.body = k, v
					break
				}
			}
		}
		return f
	})
	return hr, frames, err
}

// textPart, transcriptPart and message build request pieces.
func textPart(s string) obj { return obj{"text": s} }

func transcriptPart(msgs []client.Message) obj {
	env, _ := client.EncodeEnvelope(msgs)
	return obj{"raw": base64.StdEncoding.EncodeToString(env), "mediaType": client.TranscriptMediaType}
}

func (e *env) message(contextID string, parts ...obj) obj {
	ps := make([]any, len(parts))
	for i, p := range parts {
		ps[i] = p
	}
	m := obj{"messageId": fmt.Sprintf("conf-%s", e.nextID()), "role": "ROLE_USER", "parts": ps}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

// sendParams wraps a message with the output modes a transcript-aware caller lists.
func sendParams(msg obj, transcript bool) obj {
	modes := []any{client.MarkdownMediaType, client.PrimitivesMediaType}
	if transcript {
		modes = append(modes, client.TranscriptMediaType)
	}
	return obj{"message": msg, "configuration": obj{"acceptedOutputModes": modes}}
}

// partsOf returns an object's parts list as objects.
func partsOf(m obj) []obj {
	var out []obj
	for _, p := range getList(m, "parts") {
		if po, ok := p.(map[string]any); ok {
			out = append(out, po)
		}
	}
	return out
}

// transcriptMessages decodes the transcript parts of an artifact.
func transcriptMessages(art obj) ([]client.Message, error) {
	var out []client.Message
	for _, p := range partsOf(art) {
		if getStr(p, "mediaType") != client.TranscriptMediaType {
			continue
		}
		if raw, ok := p["raw"].(string); ok {
			b, err := base64.StdEncoding.DecodeString(raw)
			if err != nil {
				return nil, fmt.Errorf("transcript raw part is not base64: %w", err)
			}
			msgs, err := client.DecodeEnvelope(b)
			if err != nil {
				return nil, err
			}
			out = append(out, msgs...)
		} else if d, ok := p["data"]; ok {
			b, _ := json.Marshal(d)
			msgs, err := client.DecodeEnvelope(b)
			if err != nil {
				return nil, err
			}
			out = append(out, msgs...)
		}
	}
	return out, nil
}
