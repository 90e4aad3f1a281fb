package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
)

// Protocol bindings as agent cards name them.
const (
	bindingJSONRPC = "JSONRPC"
	bindingREST    = "HTTP+JSON"
)

// rest reports whether the checks now run over the HTTP+JSON binding.
func (e *env) rest() bool { return e.binding == bindingREST }

// reasonCodes maps A2A ErrorInfo reasons to the JSON-RPC codes of the same
// errors, so that a check reads an HTTP+JSON error as it reads JSON-RPC's.
var reasonCodes = map[string]int{
	"PARSE_ERROR": -32700, "INVALID_REQUEST": -32600, "METHOD_NOT_FOUND": -32601, "INVALID_PARAMS": -32602,
	"INTERNAL_ERROR": -32603, "TASK_NOT_FOUND": -32001, "TASK_NOT_CANCELABLE": -32002,
	"PUSH_NOTIFICATION_NOT_SUPPORTED": -32003, "UNSUPPORTED_OPERATION": -32004, "CONTENT_TYPE_NOT_SUPPORTED": -32005,
	"INVALID_AGENT_RESPONSE": -32006, "EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007, "EXTENSION_SUPPORT_REQUIRED": -32008,
	"VERSION_NOT_SUPPORTED": -32009,
}

// errorStatus is the HTTP status an A2A error (by JSON-RPC code) must have
// on the current binding: always 200 on JSON-RPC (and on gRPC, where
// grpcCall checks the status code instead); A2A 1.0's mapping on HTTP+JSON.
func (e *env) errorStatus(code int) int {
	if !e.rest() {
		return http.StatusOK
	}
	switch code {
	case -32001:
		return http.StatusNotFound
	case -32002:
		return http.StatusConflict
	case -32601:
		return http.StatusNotImplemented
	case -32603:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// restRequest maps an A2A method and its JSON-RPC params to the HTTP+JSON
// request: the HTTP method, the path under the interface URL, the body.
func restRequest(method string, params obj) (string, string, []byte, error) {
	id := url.PathEscape(getStr(params, "id"))
	switch method {
	case "SendMessage", "SendStreamingMessage":
		b, err := json.Marshal(params)
		path := "/message:send"
		if method == "SendStreamingMessage" {
			path = "/message:stream"
		}
		return http.MethodPost, path, b, err
	case "GetTask":
		q := url.Values{}
		if h, ok := params["historyLength"]; ok {
			q.Set("historyLength", fmt.Sprint(h))
		}
		return http.MethodGet, "/tasks/" + id + query(q), nil, nil
	case "ListTasks":
		q := url.Values{}
		for k, v := range params {
			q.Set(k, fmt.Sprint(v))
		}
		return http.MethodGet, "/tasks" + query(q), nil, nil
	case "CancelTask":
		return http.MethodPost, "/tasks/" + id + ":cancel", nil, nil
	case "SubscribeToTask":
		return http.MethodPost, "/tasks/" + id + ":subscribe", nil, nil
	}
	return "", "", nil, fmt.Errorf("%s has no HTTP+JSON form in this suite", method)
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// restURL is the agent's HTTP+JSON interface on the suite's base URL: the
// card's interface path under /agents/<id> (its host may be a public one).
func (e *env) restURL(agent string) string {
	return e.base + "/agents/" + agent + e.restSuffix
}

// restNewRequest builds an HTTP+JSON request for method.
func (e *env) restNewRequest(ctx context.Context, agent, method string, params any, a auth, hdr map[string]string, streaming bool) (*http.Request, error) {
	p, _ := params.(obj)
	if p == nil {
		p = obj{}
	}
	hm, path, body, err := restRequest(method, p)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, hm, e.restURL(agent)+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if streaming {
		req.Header.Set("Accept", "text/event-stream")
	}
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	e.setAuth(req, a)
	return req, nil
}

// restStatusError reads a google.rpc.Status body as a JSON-RPC-like error
// object ({"code": <JSON-RPC code of its reason>, "message", "reason",
// "status"}), or an error when the body is no such Status.
func restStatusError(b []byte) (obj, error) {
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
			Details []struct {
				Type   string `json:"@type"`
				Reason string `json:"reason"`
				Domain string `json:"domain"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Error == nil {
		return nil, fmt.Errorf("the error body is not a google.rpc.Status: %s", snippet(b))
	}
	reason := ""
	for _, d := range m.Error.Details {
		if d.Type == "type.googleapis.com/google.rpc.ErrorInfo" {
			reason = d.Reason
		}
	}
	if reason == "" {
		return nil, fmt.Errorf("the google.rpc.Status has no ErrorInfo: %s", snippet(b))
	}
	code, ok := reasonCodes[reason]
	if !ok {
		code = -32603
	}
	return obj{"code": float64(code), "message": m.Error.Message, "reason": reason, "status": m.Error.Status, "httpCode": float64(m.Error.Code)}, nil
}

// restCall is rpc over HTTP+JSON: the answer comes back as a JSON-RPC
// answer would ({"result": ...} or {"error": {...}}) with the real HTTP
// status, which the checks compare with errorStatus.
func (e *env) restCall(ctx context.Context, agent, method string, params any, a auth, hdr map[string]string) (int, obj, error) {
	req, err := e.restNewRequest(ctx, agent, method, params, a, hdr, false)
	if err != nil {
		return 0, nil, err
	}
	res, err := e.do(req)
	if err != nil {
		return 0, nil, err
	}
	if res.status == http.StatusOK {
		var v any
		if err := json.Unmarshal(res.body, &v); err != nil {
			return res.status, nil, fmt.Errorf("body is not JSON (%s): %w", snippet(res.body), err)
		}
		return res.status, obj{"result": v}, nil
	}
	eo, err := restStatusError(res.body)
	if err != nil {
		return res.status, nil, fmt.Errorf("HTTP %d: %w", res.status, err)
	}
	if hc, _ := eo["httpCode"].(float64); int(hc) != res.status {
		return res.status, nil, fmt.Errorf("HTTP %d but the google.rpc.Status code is %v", res.status, hc)
	}
	return res.status, obj{"error": eo}, nil
}

// restStream is stream over HTTP+JSON: each SSE data payload is one of
// task, statusUpdate, artifactUpdate, message or error, unwrapped.
func (e *env) restStream(ctx context.Context, agent, method string, params any, a auth, each func(frame) bool) (*httpResult, []frame, error) {
	req, err := e.restNewRequest(ctx, agent, method, params, a, nil, true)
	if err != nil {
		return nil, nil, err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
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
			b, _ := json.Marshal(m)
			if eo, err := restStatusError(b); err == nil {
				f.kind, f.body = "error", eo
			} else {
				f.kind, f.body = "error", er
			}
			return f
		}
		for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
			if v := getObj(m, k); v != nil {
				f.kind, f.body = k, v
				break
			}
		}
		return f
	})
	return hr, frames, err
}

// maxFrameBytes bounds one line of a stream the suite reads.
const maxFrameBytes = 32 << 20

// readFrames reads SSE events (runtime/sse), decodes each one's data with
// decode and hands it to each until the stream ends or each returns false.
func readFrames(ctx context.Context, body io.Reader, each func(frame) bool, decode func(obj) frame) ([]frame, error) {
	var frames []frame
	r := sse.NewReader(body, maxFrameBytes)
	defer r.Release()
	for {
		ev, err := r.Event()
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return frames, nil
			}
			return frames, fmt.Errorf("reading the stream: %w", err)
		}
		var m obj
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			return frames, fmt.Errorf("SSE frame is not JSON (%s): %w", snippet(ev.Data), err)
		}
		f := decode(m)
		frames = append(frames, f)
		if !each(f) {
			return frames, nil
		}
	}
}

// checkBindings reads the card's interfaces beyond the first (JSON-RPC):
// each must be A2A 1.0 at an http(s) URL; an HTTP+JSON one must live under
// the agent's JSON-RPC URL; a GRPC one at host:port with the agent id as
// tenant (checkGRPCInterface); the per-binding checks then run over each
// again. A binding the suite does not speak is reported as skipped.
func checkBindings(e *env, r *reporter, ifaces []any) {
	if len(ifaces) < 2 {
		r.skip("card: other bindings", "the card declares JSON-RPC only")
		return
	}
	i0, _ := ifaces[0].(map[string]any)
	rpcURL := strings.TrimRight(getStr(i0, "url"), "/")
	var errs, found []string
	for _, it := range ifaces[1:] {
		iface, _ := it.(map[string]any)
		b, u := getStr(iface, "protocolBinding"), getStr(iface, "url")
		if v := getStr(iface, "protocolVersion"); v != "1.0" {
			errs = append(errs, fmt.Sprintf("%s protocolVersion %q, want 1.0", b, v))
		}
		if b == bindingGRPC {
			if err := checkGRPCInterface(e, iface); err != nil {
				errs = append(errs, err.Error())
			} else {
				found = append(found, b+" at "+u+" (tenant "+e.grpcTenant+")")
			}
			continue
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			errs = append(errs, fmt.Sprintf("%s url %q is not http(s)", b, u))
			continue
		}
		switch b {
		case bindingREST:
			suffix, ok := strings.CutPrefix(strings.TrimRight(u, "/"), rpcURL)
			if !ok || (suffix != "" && !strings.HasPrefix(suffix, "/")) {
				errs = append(errs, fmt.Sprintf("HTTP+JSON url %q is not under the agent's URL %q", u, rpcURL))
				continue
			}
			e.restSuffix = suffix
			e.bindings = append(e.bindings, bindingREST)
			found = append(found, b+" at "+u)
		default:
			r.skip("card: "+b+" binding", "the suite does not speak %s", b)
		}
	}
	r.check("card: other bindings", joinErrs(errs), fmt.Sprintf("%v; the core checks run over each again", found))
}

// checkRESTRefusals: over HTTP+JSON the vessel's refusals have the HTTP
// statuses JSON-RPC gets, as google.rpc.Status bodies with an ErrorInfo.
func checkRESTRefusals(ctx context.Context, e *env, r *reporter) {
	if !slices.Contains(e.bindings, bindingREST) {
		r.skip("HTTP+JSON auth", "the card declares no HTTP+JSON interface")
		return
	}
	prev := e.binding
	e.binding = bindingREST
	defer func() { e.binding = prev }()
	try := func(name, agent string, a auth, status int, reason string) {
		st, m, err := e.restCall(ctx, agent, "GetTask", obj{"id": "no-such-task"}, a, nil)
		if err == nil {
			got := getStr(getObj(m, "error"), "reason")
			if st != status || got != reason {
				err = fmt.Errorf("HTTP %d, reason %q; want %d / %s", st, got, status, reason)
			}
		}
		r.check(name, err, fmt.Sprintf("%d / %s", status, reason))
	}
	try("HTTP+JSON auth: no key", e.cfg.Agent, auth{noKey: true, user: e.cfg.User}, 401, "UNAUTHENTICATED")
	try("HTTP+JSON auth: bad key", e.cfg.Agent, auth{key: e.cfg.Key + "x", user: e.cfg.User}, 401, "UNAUTHENTICATED")
	try("HTTP+JSON auth: no X-Vessel-User", e.cfg.Agent, auth{key: e.cfg.Key, noUser: true}, 401, "UNAUTHENTICATED")
	if e.cfg.OtherAgent == "" {
		r.skip("HTTP+JSON auth: ungranted agent", "no --other-agent given (an agent this key may not call)")
	} else {
		try("HTTP+JSON auth: ungranted agent", e.cfg.OtherAgent, e.me, 403, "UNAUTHORIZED")
	}
	try("HTTP+JSON tasks: unknown task", e.cfg.Agent, e.me, 404, "TASK_NOT_FOUND")

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.restURL(e.cfg.Agent)+"/message:send", newPadReader(maxBody+1))
	if err == nil {
		req.ContentLength = maxBody + 1
		req.Header.Set("Content-Type", "application/json")
		e.setAuth(req, e.me)
		var res *httpResult
		if res, err = e.do(req); err == nil {
			if res.status != http.StatusRequestEntityTooLarge {
				err = fmt.Errorf("HTTP %d, want 413 (%s)", res.status, snippet(res.body))
			} else if _, serr := restStatusError(res.body); serr != nil {
				err = serr
			}
		}
	}
	r.check("HTTP+JSON limit: 413 over 16,000,000 bytes", err, "413 as a google.rpc.Status")
}
