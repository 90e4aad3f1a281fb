// Checks of the HTTP and JSON-RPC envelope: authentication, the request
// size limit and JSON-RPC errors.

package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// wantHTTPError checks an HTTP status and, for A2A calls, the JSON-RPC code in the body.
func wantHTTPError(res *httpResult, status, code int) error {
	if res.status != status {
		return fmt.Errorf("HTTP %d, want %d (%s)", res.status, status, snippet(res.body))
	}
	m, err := res.json()
	if err != nil {
		return err
	}
	got, _, ok := rpcError(m)
	if !ok {
		return fmt.Errorf("HTTP %d but no JSON-RPC error object: %s", status, snippet(res.body))
	}
	if got != code {
		return fmt.Errorf("JSON-RPC code %d, want %d", got, code)
	}
	return nil
}

func checkAuth(ctx context.Context, e *env, r *reporter) {
	body, _ := json.Marshal(obj{"jsonrpc": "2.0", "id": "auth", "method": "GetTask", "params": obj{"id": "no-such-task"}})
	try := func(name string, agent string, a auth, status, code int, ok string) {
		res, err := e.post(ctx, agent, bytes.NewReader(body), int64(len(body)), a, nil)
		if err == nil {
			err = wantHTTPError(res, status, code)
		}
		r.check(name, err, ok)
	}
	try("auth: no key", e.cfg.Agent, auth{noKey: true, user: e.cfg.User}, 401, -32001, "401 / -32001")
	try("auth: bad key", e.cfg.Agent, auth{key: e.cfg.Key + "x", user: e.cfg.User}, 401, -32001, "401 / -32001")
	try("auth: no X-Vessel-User", e.cfg.Agent, auth{key: e.cfg.Key, noUser: true}, 401, -32001, "401 / -32001")
	if e.cfg.OtherAgent == "" {
		r.skip("auth: ungranted agent", "no --other-agent given (an agent this key may not call)")
	} else {
		try("auth: ungranted agent", e.cfg.OtherAgent, e.me, 403, -32003, "403 / -32003")
	}
}

// padReader yields a JSON-RPC request padded to exactly n bytes without
// holding it in memory.
type padReader struct {
	prefix, suffix []byte
	pad            int64
}

func newPadReader(n int64) *padReader {
	p := []byte(`{"jsonrpc":"2.0","id":"big","method":"SendMessage","params":{"pad":"`)
	s := []byte(`"}}`)
	return &padReader{prefix: p, suffix: s, pad: n - int64(len(p)+len(s))}
}

func (p *padReader) Read(b []byte) (int, error) {
	switch {
	case len(p.prefix) > 0:
		n := copy(b, p.prefix)
		p.prefix = p.prefix[n:]
		return n, nil
	case p.pad > 0:
		n := min(int64(len(b)), p.pad)
		for i := range n {
			b[i] = 'a'
		}
		p.pad -= n
		return int(n), nil
	case len(p.suffix) > 0:
		n := copy(b, p.suffix)
		p.suffix = p.suffix[n:]
		return n, nil
	}
	return 0, io.EOF
}

func checkLimit(ctx context.Context, e *env, r *reporter) {
	for _, v := range []struct {
		name    string
		chunked bool
	}{{"limit: 413 over 16,000,000 bytes", false}, {"limit: 413 over 16,000,000 bytes, chunked", true}} {
		length := int64(maxBody + 1)
		var body io.Reader = newPadReader(length)
		if v.chunked {
			length = -1
			body = io.MultiReader(body) // hides the length so the request is chunked
		}
		res, err := e.post(ctx, e.cfg.Agent, body, length, e.me, nil)
		if err != nil {
			r.fail(v.name, "%v", err)
			continue
		}
		if res.status != http.StatusRequestEntityTooLarge {
			r.fail(v.name, "HTTP %d, want 413 (%s)", res.status, snippet(res.body))
			continue
		}
		m, err := res.json()
		if err != nil || getStr(m, "error") == "" {
			r.fail(v.name, "413 without a JSON {\"error\": ...} body: %s", snippet(res.body))
			continue
		}
		r.pass(v.name, "413 %s", snippet(res.body))
	}
}

func checkJSONRPC(ctx context.Context, e *env, r *reporter) {
	raw := func(name, body string, code int) {
		res, err := e.post(ctx, e.cfg.Agent, strings.NewReader(body), int64(len(body)), e.me, nil)
		if err == nil {
			err = wantHTTPError(res, 200, code)
		}
		r.check(name, err, fmt.Sprintf("HTTP 200 / %d", code))
	}
	raw("jsonrpc: malformed JSON", `{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {`, -32700)
	raw("jsonrpc: invalid request", `{"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}`, -32600)
	raw("jsonrpc: unknown method", `{"jsonrpc": "2.0", "id": 1, "method": "message/teleport", "params": {}}`, -32601)

	status, m, err := e.rpc(ctx, e.cfg.Agent, "GetTask", obj{"id": "x"}, e.me, map[string]string{"A2A-Version": "9.9"})
	if err == nil {
		if code, _, ok := rpcError(m); status != 200 || !ok || code != -32009 {
			err = fmt.Errorf("HTTP %d, code %d; want 200 / -32009", status, code)
		}
	}
	r.check("jsonrpc: unsupported A2A-Version", err, "A2A-Version 9.9 → -32009")
}
