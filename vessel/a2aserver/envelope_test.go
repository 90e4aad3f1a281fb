package a2aserver_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
)

// rpcAnswer is a decoded JSON-RPC answer with its id kept as sent.
type rpcAnswer struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

func decodeAnswer(t *testing.T, body []byte) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	return a
}

// TestJSONRPCEnvelopeErrors (issue 14, defect 9): every envelope error is
// answered exactly as JSON-RPC 2.0 says, with no Go type names.
func TestJSONRPCEnvelopeErrors(t *testing.T) {
	h := newHarness(t)
	hdr := appHdr(h.keyApp1, "alice")
	for _, c := range []struct {
		name, body string
		code       int
		id         string
	}{
		{"empty batch", `[]`, -32600, `null`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, -32600, `null`},
		{"top-level string", `"GetTask"`, -32600, `null`},
		{"top-level number", `42`, -32600, `null`},
		{"numeric method", `{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, -32600, `1`},
		{"no method", `{"jsonrpc":"2.0","id":1,"params":{}}`, -32600, `1`},
		{"no jsonrpc", `{"id":1,"method":"GetTask","params":{"id":"x"}}`, -32600, `1`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"x"}}`, -32600, `null`},
		{"string params", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}`, -32600, `1`},
		{"positional params", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["x"]}`, -32602, `1`},
		{"missing params", `{"jsonrpc":"2.0","id":1,"method":"GetTask"}`, -32602, `1`},
		{"trailing bytes", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}} {"more":1}`, -32700, `null`},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}x`, -32700, `null`},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"CancelTask","params":{"id":"x"}}`, -32600, `1`},
	} {
		status, rh, body := h.rawPost("/agents/field-guide", c.body, hdr)
		a := decodeAnswer(t, body)
		if status != 200 || a.Error == nil || a.Error.Code != c.code || string(a.ID) != c.id || !strings.HasPrefix(rh.Get("Content-Type"), "application/json") {
			t.Errorf("%s: HTTP %d %s, want %d with id %s", c.name, status, body, c.code, c.id)
			continue
		}
		for _, bad := range []string{"json:", "[]jsonrpc", "Go value", "unmarshal", "struct"} {
			if strings.Contains(a.Error.Message, bad) {
				t.Errorf("%s: message %q names Go internals", c.name, a.Error.Message)
			}
		}
	}
	// Missing params of a method whose params are all optional: served.
	status, _, body := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":7,"method":"ListTasks"}`, hdr)
	if a := decodeAnswer(t, body); status != 200 || a.Error != nil || string(a.ID) != "7" {
		t.Fatalf("ListTasks without params: %d %s", status, body)
	}
}

// TestJSONRPCNotificationsRunNothing (defect 6): a request without an id
// gets 204 and no body, and a SendMessage notification starts no turn.
func TestJSONRPCNotificationsRunNothing(t *testing.T) {
	h := newHarness(t)
	hdr := appHdr(h.keyApp1, "alice")
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"n1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","method":"message/send","params":{"message":{"kind":"message","messageId":"n2","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","method":"CancelTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","method":"NoSuchMethod"}`,
	} {
		status, _, b := h.rawPost("/agents/field-guide", body, hdr)
		if status != http.StatusNoContent || len(b) != 0 {
			t.Fatalf("notification %s: %d %q", body, status, b)
		}
	}
	time.Sleep(300 * time.Millisecond)
	status, _, b := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, hdr)
	var res struct {
		Result struct {
			Tasks []json.RawMessage `json:"tasks"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &res); status != 200 || err != nil || len(res.Result.Tasks) != 0 {
		t.Fatalf("a notification ran a turn: %d %s", status, b)
	}
	// An invalid request without an id is still answered (it is no valid
	// notification), with id null.
	status, _, b = h.rawPost("/agents/field-guide", `{"jsonrpc":"1.0","method":"SendMessage","params":{}}`, hdr)
	if a := decodeAnswer(t, b); status != 200 || a.Error == nil || a.Error.Code != -32600 || string(a.ID) != "null" {
		t.Fatalf("invalid notification: %d %s", status, b)
	}
}

// TestJSONRPCIDEchoedExactly (defect 10): the id comes back byte for byte,
// in plain answers, errors and every SSE frame, for 1.0 and 0.3.
func TestJSONRPCIDEchoedExactly(t *testing.T) {
	h := newHarness(t)
	hdr := appHdr(h.keyApp1, "alice")
	// Plain string ids go to the SDK as they are; the rest (numbers,
	// escapes, HTML characters encoding/json would escape) as a placeholder.
	for _, id := range []string{`12345678901234567890`, `1e3`, `-0.5`, `"\u0041b"`, `"x"`, `null`, `"a<b>&c"`,
		`"req-7 ~!@#$%^*()_+={}[]|:;',.?/"`, `"é"`} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"GetTask","params":{"id":"no-such"}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"tasks/get","params":{"id":"no-such"}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"ListTasks","params":{}}`,
		} {
			status, _, b := h.rawPost("/agents/field-guide", body, hdr)
			if a := decodeAnswer(t, b); status != 200 || string(a.ID) != id {
				t.Fatalf("%s: id %s: %s", body, a.ID, b)
			}
		}
	}
	hdr["Accept"] = "text/event-stream"
	for i, id := range []string{`12345678901234567890`, `"stream-1"`, `"a&b"`} {
		status, rh, b := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":`+id+`,"method":"SendStreamingMessage","params":{"message":{"messageId":"s`+strconv.Itoa(i)+`","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`, hdr)
		if status != 200 || !strings.HasPrefix(rh.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("stream: %d %s", status, b)
		}
		events, err := sse.ReadAll(bytes.NewReader(b), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		frames := 0
		for _, data := range events {
			frames++
			if a := decodeAnswer(t, data); string(a.ID) != id {
				t.Fatalf("frame id %s, want %s: %s", a.ID, id, data)
			}
		}
		if frames < 3 {
			t.Fatalf("%d frames: %s", frames, b)
		}
	}
}

// TestInvalidUTF8Rejected (defect 8): invalid UTF-8 or an unpaired
// surrogate escape in a text part is refused with -32602, not replaced.
func TestInvalidUTF8Rejected(t *testing.T) {
	h := newHarness(t)
	hdr := appHdr(h.keyApp1, "alice")
	for _, text := range []string{"bad \xff byte", "cut \xe2\x82", `lone \ud800 high`, `lone \udc00 low`} {
		for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
			body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"messageId":"u1","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}}`
			status, rh, b := h.rawPost("/agents/field-guide", body, hdr)
			a := decodeAnswer(t, b)
			if status != 200 || a.Error == nil || a.Error.Code != -32602 || !strings.HasPrefix(rh.Get("Content-Type"), "application/json") {
				t.Fatalf("%s %q: %d %s", method, text, status, b)
			}
		}
	}
	// A valid surrogate pair is fine.
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"u2","role":"ROLE_USER","parts":[{"text":"bird \ud83d\udc26"}]}}}`
	if status, _, b := h.rawPost("/agents/field-guide", body, hdr); status != 200 || !strings.Contains(string(b), "You said: bird \U0001F426") {
		t.Fatalf("surrogate pair: %d %s", status, b)
	}
}

// TestJSONRPCOnlyPOST (defect 12): other methods get 405 with Allow: POST,
// whether or not the caller is authenticated.
func TestJSONRPCOnlyPOST(t *testing.T) {
	h := newHarness(t)
	for _, path := range []string{"/agents/field-guide", "/agents/field-guide/", "/agents/field-guide/a2a"} {
		for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch} {
			for _, hdr := range []map[string]string{nil, appHdr(h.keyApp1, "alice")} {
				req, _ := http.NewRequest(m, h.url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`))
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				req.Header.Set("Origin", "https://app.example")
				resp, err := h.httpc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b := readAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
					t.Fatalf("%s %s: %d Allow %q %s", m, path, resp.StatusCode, resp.Header.Get("Allow"), b)
				}
			}
		}
	}
}

// TestA2AVersionQueryParam (defect 13): the A2A-Version query parameter is
// honoured as the header is.
func TestA2AVersionQueryParam(t *testing.T) {
	h := newHarness(t)
	hdr := appHdr(h.keyApp1, "alice")
	get := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"no-such"}}`
	for q, code := range map[string]int{"?A2A-Version=9.9": -32009, "?A2A-Version=0.3": -32009, "?A2A-Version=1.0": -32001, "?A2A-Version=1.0.1": -32001} {
		status, _, b := h.rawPost("/agents/field-guide"+q, get, hdr)
		if a := decodeAnswer(t, b); status != 200 || a.Error == nil || a.Error.Code != code {
			t.Fatalf("%s: %d %s, want %d", q, status, b, code)
		}
	}
	// A header and a parameter that disagree: the unsupported one refuses.
	hdr["A2A-Version"] = "1.0"
	if status, _, b := h.rawPost("/agents/field-guide?A2A-Version=2.0", get, hdr); decodeAnswer(t, b).Error.Code != -32009 {
		t.Fatalf("header 1.0, parameter 2.0: %d %s", status, b)
	}
}

// TestV03ErrorsAreJSON (defect 7): 0.3 error answers are application/json.
func TestV03ErrorsAreJSON(t *testing.T) {
	h := newHarness(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"1","method":"tasks/get","params":{"id":"no-such"}}`,
		`{"jsonrpc":"2.0","id":"1","method":"tasks/cancel","params":{"id":"no-such"}}`,
		`{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":5}}`,
	} {
		for _, path := range []string{"/agents/field-guide", "/agents/field-guide/a2a"} {
			status, rh, b := h.rawPost(path, body, appHdr(h.keyApp1, "alice"))
			if a := decodeAnswer(t, b); status != 200 || a.Error == nil || rh.Get("Content-Type") != "application/json" {
				t.Fatalf("%s %s: %d %q %s", path, body, status, rh.Get("Content-Type"), b)
			}
		}
	}
}
