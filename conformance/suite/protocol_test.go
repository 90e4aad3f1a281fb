package suite

import (
	"net/http"
	"testing"
)

func TestSameEndpoint(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"http://127.0.0.1:18700/agents/x", "http://127.0.0.1:18700/agents/x/", true},
		{"HTTP://Host:1/agents/x", "http://host:1/agents/x", true},
		{"http://172.31.247.10:8700/agents/x", "http://127.0.0.1:18700/agents/x", false},
		{"https://h/agents/x", "http://h/agents/x", false},
		{"http://h/agents/y", "http://h/agents/x", false},
		{"::", "http://h/agents/x", false},
	} {
		if got := sameEndpoint(c.a, c.b); got != c.want {
			t.Errorf("%s vs %s: %v", c.a, c.b, got)
		}
	}
}

func TestWantRawError(t *testing.T) {
	json := http.Header{"Content-Type": {"application/json"}}
	ok := &httpResult{status: 200, header: json, body: []byte(`{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32600,"message":"invalid request"}}`)}
	if err := wantRawError(ok, -32600, `12345678901234567890`); err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]*httpResult{
		"rounded id": {status: 200, header: json, body: []byte(`{"jsonrpc":"2.0","id":12345678901234567000,"error":{"code":-32600,"message":"x"}}`)},
		"go words":   {status: 200, header: json, body: []byte(`{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32600,"message":"json: cannot unmarshal array into Go value"}}`)},
		"text/plain": {status: 200, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: ok.body},
		"wrong code": {status: 200, header: json, body: []byte(`{"jsonrpc":"2.0","id":12345678901234567890,"error":{"code":-32602,"message":"x"}}`)},
		"a result":   {status: 200, header: json, body: []byte(`{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}`)},
		"HTTP 405":   {status: 405, header: json, body: ok.body},
	} {
		if wantRawError(res, -32600, `12345678901234567890`) == nil {
			t.Errorf("%s: passed", name)
		}
	}
}
