package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// rawAnswer is a JSON-RPC answer whose id is kept as sent on the wire.
type rawAnswer struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

func decodeRaw(b []byte) (*rawAnswer, error) {
	var a rawAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("answer is not a JSON object (%s): %w", snippet(b), err)
	}
	return &a, nil
}

// goWords are fragments of Go's own error texts that must never reach a
// client in an error message.
var goWords = []string{"json: ", "Go value", "Go struct", "unmarshal", "[]jsonrpc", "map[string]"}

// wantRawError checks a plain (non-stream) answer is a JSON-RPC error with
// code and id (the id exactly as on the wire, e.g. `null` or `1`).
func wantRawError(res *httpResult, code int, id string) error {
	if res.status != 200 {
		return fmt.Errorf("HTTP %d, want 200 (%s)", res.status, snippet(res.body))
	}
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("Content-Type %q, want application/json", ct)
	}
	a, err := decodeRaw(res.body)
	if err != nil {
		return err
	}
	if a.Error == nil {
		return fmt.Errorf("a result, want error %d: %s", code, snippet(res.body))
	}
	if a.Error.Code != code {
		return fmt.Errorf("code %d (%q), want %d", a.Error.Code, a.Error.Message, code)
	}
	if string(a.ID) != id {
		return fmt.Errorf("id %s, want %s", a.ID, id)
	}
	for _, w := range goWords {
		if strings.Contains(a.Error.Message, w) {
			return fmt.Errorf("the message %q shows the server's implementation (%q)", a.Error.Message, w)
		}
	}
	return nil
}

// checkEnvelope checks the JSON-RPC 2.0 envelope rules (issue 14).
func checkEnvelope(ctx context.Context, e *env, r *reporter) {
	post := func(body string, hdr map[string]string) (*httpResult, error) {
		return e.post(ctx, e.cfg.Agent, strings.NewReader(body), int64(len(body)), e.me, hdr)
	}
	raw := func(name, body string, code int, id string) {
		res, err := post(body, nil)
		if err == nil {
			err = wantRawError(res, code, id)
		}
		r.check(name, err, fmt.Sprintf("HTTP 200 / %d, id %s", code, id))
	}
	raw("jsonrpc: empty batch", `[]`, -32600, `null`)
	raw("jsonrpc: batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, -32600, `null`)
	raw("jsonrpc: top-level string", `"GetTask"`, -32600, `null`)
	raw("jsonrpc: numeric method", `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, -32600, `1`)
	raw("jsonrpc: missing params", `{"jsonrpc":"2.0","id":1,"method":"GetTask"}`, -32602, `1`)
	raw("jsonrpc: bytes after the request", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}} {}`, -32700, `null`)

	// Large ids come back digit for digit.
	big := `12345678901234567890`
	res, err := post(`{"jsonrpc":"2.0","id":`+big+`,"method":"GetTask","params":{"id":"`+e.run+`-no-such"}}`, nil)
	if err == nil {
		err = wantRawError(res, -32001, big)
	}
	r.check("jsonrpc: id echoed exactly", err, "id "+big+" came back as sent")

	// Text must be valid UTF-8, checked before decoding.
	for _, c := range []struct{ name, text string }{
		{"jsonrpc: invalid UTF-8 refused", "bad \xff byte"},
		{"jsonrpc: unpaired surrogate refused", `lone \ud800 half`},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"` + e.nextID() +
			`","role":"ROLE_USER","parts":[{"text":"` + c.text + `"}]}}}`
		res, err := post(body, nil)
		if err == nil {
			err = wantRawError(res, -32602, `1`)
		}
		r.check(c.name, err, "-32602, not replaced with U+FFFD")
	}

	// An unknown role is refused.
	params, _ := json.Marshal(obj{"message": obj{"messageId": e.nextID(), "role": "ROLE_BOGUS", "parts": []any{textPart("hi")}}})
	res, err = post(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+string(params)+`}`, nil)
	if err == nil {
		err = wantRawError(res, -32602, `1`)
	}
	r.check("jsonrpc: unknown role refused", err, "ROLE_BOGUS → -32602")

	// A2A-Version as a query parameter counts as the header does.
	res, err = e.postURL(ctx, e.base+"/agents/"+e.cfg.Agent+"?A2A-Version=9.9",
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, e.me, map[string]string{"A2A-Version": ""})
	if err == nil {
		err = wantRawError(res, -32009, `1`)
	}
	r.check("jsonrpc: A2A-Version query parameter", err, "?A2A-Version=9.9 → -32009")

	// Only POST.
	var errs []string
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodOptions} {
		req, err := http.NewRequestWithContext(ctx, m, e.base+"/agents/"+e.cfg.Agent, nil)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		e.setAuth(req, e.me)
		res, err := e.do(req)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if res.status != http.StatusMethodNotAllowed || res.header.Get("Allow") != "POST" {
			errs = append(errs, fmt.Sprintf("%s: HTTP %d, Allow %q", m, res.status, res.header.Get("Allow")))
		}
	}
	r.check("jsonrpc: only POST", joinErrs(errs), "GET, PUT, DELETE, OPTIONS → 405, Allow: POST")

	// A notification gets no answer and runs nothing.
	cid := e.run + "-notification"
	msg := e.message(cid, textPart("This notification must not run."))
	nb, _ := json.Marshal(obj{"jsonrpc": "2.0", "method": "SendMessage", "params": obj{"message": msg}})
	res, err = post(string(nb), nil)
	if err == nil && (res.status != http.StatusNoContent || len(bytes.TrimSpace(res.body)) != 0) {
		err = fmt.Errorf("HTTP %d %s, want 204 with no body", res.status, snippet(res.body))
	}
	r.check("jsonrpc: notification gets no reply", err, "204 No Content")
	{
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
		}
		status, m, err := e.rpc(ctx, e.cfg.Agent, "ListTasks", obj{"contextId": cid}, e.me, nil)
		if err == nil {
			if code, msg, isErr := rpcError(m); isErr || status != 200 {
				err = fmt.Errorf("ListTasks: HTTP %d, error %d %s", status, code, msg)
			} else if n := len(getList(getObj(m, "result"), "tasks")); n != 0 {
				err = fmt.Errorf("the notification made %d task(s)", n)
			}
		}
		r.check("jsonrpc: notification runs nothing", err, "no task in its context")
	}

	// 0.3 errors are JSON too.
	res, err = post(`{"jsonrpc":"2.0","id":"v03","method":"tasks/get","params":{"id":"`+e.run+`-no-such"}}`, nil)
	if err == nil {
		err = wantRawError(res, -32001, `"v03"`)
	}
	r.check("compat: 0.3 errors are JSON", err, "tasks/get on an unknown task: application/json, -32001")
}

// postURL posts body to a full URL; an empty header value removes it.
func (e *env) postURL(ctx context.Context, u, body string, a auth, hdr map[string]string) (*httpResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	e.setAuth(req, a)
	return e.do(req)
}

// checkCardAddress checks both cards advertise the address the agent is
// served at: the URL given (or --public-url) plus /agents/<id>. Nothing is
// sent to the advertised address itself.
func checkCardAddress(ctx context.Context, e *env, r *reporter) {
	base := strings.TrimRight(e.cfg.PublicURL, "/")
	if base == "" {
		base = e.base
	}
	want := base + "/agents/" + e.cfg.Agent
	for _, c := range []struct{ name, path, field string }{
		{"card: interface address", "/agents/" + e.cfg.Agent + "/.well-known/agent-card.json", ""},
		{"card: 0.3 card address", "/agents/" + e.cfg.Agent + "/a2a/.well-known/agent-card.json", "url"},
	} {
		res, err := e.get(ctx, c.path, nil)
		if err != nil {
			r.fail(c.name, "%v", err)
			continue
		}
		card, err := res.json()
		if err != nil || res.status != 200 {
			r.fail(c.name, "HTTP %d: %s", res.status, snippet(res.body))
			continue
		}
		var got, under, hosts []string // JSON-RPC addresses; other bindings' addresses; gRPC host:port
		if c.field != "" {
			got = append(got, getStr(card, c.field))
		}
		for _, i := range getList(card, "supportedInterfaces") {
			if im, ok := i.(map[string]any); ok {
				if getStr(im, "protocolBinding") == bindingGRPC {
					hosts = append(hosts, getStr(im, "url"))
					continue
				}
				if b := getStr(im, "protocolBinding"); b != "" && b != bindingJSONRPC {
					under = append(under, getStr(im, "url"))
					continue
				}
				got = append(got, getStr(im, "url"))
			}
		}
		var errs []string
		for _, u := range got {
			if !sameEndpoint(u, want) {
				errs = append(errs, fmt.Sprintf("advertises %q, want %q", u, want))
			}
		}
		for _, u := range under {
			// Another binding lives under the agent's address (HTTP+JSON: <address>/v1).
			if pu, err := url.Parse(u); err != nil || !sameEndpoint(pu.Scheme+"://"+pu.Host+path.Dir(pu.Path), want) && !sameEndpoint(u, want) {
				errs = append(errs, fmt.Sprintf("advertises %q, want an address under %q", u, want))
			}
		}
		wu, _ := url.Parse(want)
		for _, hp := range hosts {
			// gRPC has a port of its own on the same host.
			if h, _, err := net.SplitHostPort(hp); err != nil || wu == nil || !strings.EqualFold(h, wu.Hostname()) {
				errs = append(errs, fmt.Sprintf("advertises gRPC at %q, want host %q", hp, wu.Hostname()))
			}
		}
		if len(got) == 0 {
			errs = append(errs, "no address advertised")
		}
		r.check(c.name, joinErrs(errs), want)
	}
}

// sameEndpoint compares two URLs by scheme, host, port and path (a final
// slash aside).
func sameEndpoint(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host) &&
		strings.TrimRight(ua.Path, "/") == strings.TrimRight(ub.Path, "/")
}

// subscribeCode calls a streaming method on a task and returns the JSON-RPC
// error code of its answer, a plain error or the stream's first frame.
func (e *env) subscribeCode(ctx context.Context, method, taskID string) (int, error) {
	res, frames, err := e.stream(ctx, e.cfg.Agent, method, obj{"id": taskID}, e.me, func(frame) bool { return false })
	if err != nil {
		return 0, err
	}
	if len(frames) > 0 {
		if e.rest() {
			// A2A 1.0 §11.6: an error known before the stream starts is
			// the HTTP status, not an SSE error frame.
			return 0, fmt.Errorf("HTTP %d and an SSE %s frame, want the error's HTTP status with its body", res.status, frames[0].kind)
		}
		if frames[0].kind != "error" {
			return 0, fmt.Errorf("the first frame is a %s, want an error", frames[0].kind)
		}
		code, _ := frames[0].body["code"].(float64)
		return int(code), nil
	}
	if e.rest() {
		eo, err := restStatusError(res.body)
		if err != nil {
			return 0, fmt.Errorf("HTTP %d: %w", res.status, err)
		}
		code, _ := eo["code"].(float64)
		if want := e.errorStatus(int(code)); res.status != want {
			return 0, fmt.Errorf("HTTP %d for %s, want %d", res.status, getStr(eo, "reason"), want)
		}
		return int(code), nil
	}
	m, err := res.json()
	if err != nil {
		return 0, err
	}
	code, _, ok := rpcError(m)
	if !ok {
		return 0, fmt.Errorf("HTTP %d without an error: %s", res.status, snippet(res.body))
	}
	return code, nil
}
