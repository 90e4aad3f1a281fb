package a2acompat

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseEnvelope(t *testing.T) {
	for _, c := range []struct {
		body string
		code int    // 0: accepted
		id   string // the id as sent, or "" for none/null answer
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`, 0, `1`},
		{`  {"jsonrpc":"2.0","id":"a","method":"ListTasks"}  `, 0, `"a"`},
		{`{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{}}`, 0, `null`},
		{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"GetTask","params":{}}`, 0, `12345678901234567890`},
		{`{"jsonrpc":"2.0","method":"GetTask","params":{}}`, 0, ``}, // a notification
		{``, CodeParseError, ``},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{`, CodeParseError, ``},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}} trailing`, CodeParseError, ``},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}{}`, CodeParseError, ``},
		{`[]`, CodeInvalidRequest, ``},
		{`[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}]`, CodeInvalidRequest, ``},
		{`"GetTask"`, CodeInvalidRequest, ``},
		{`5`, CodeInvalidRequest, ``},
		{`null`, CodeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1,"params":{}}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"","params":{}}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{}}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":2.0,"id":1,"method":"GetTask","params":{}}`, CodeInvalidRequest, `1`},
		{`{"id":1,"method":"GetTask","params":{}}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{}}`, CodeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":true,"method":"GetTask","params":{}}`, CodeInvalidRequest, ``},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":"x"}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":null}`, CodeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["t"]}`, CodeInvalidParams, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"CancelTask","params":{}}`, CodeInvalidRequest, `1`},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"parts\":[{\"text\":\"a\xffb\"}]}}}", CodeInvalidParams, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"a\ud800b"}]}}}`, CodeInvalidParams, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"a\udc00b"}]}}}`, CodeInvalidParams, `1`},
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":[{"text":"\ud83d\ude00 \\ud800"}]}}}`, 0, `1`},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"Get\xffTask\",\"params\":{}}", CodeInvalidRequest, `1`},
		{`{"jsonrpc":"2.0","id":"\ud800","method":"GetTask","params":{}}`, CodeInvalidRequest, ``},
	} {
		env, err := ParseEnvelope([]byte(c.body))
		if c.code == 0 {
			if err != nil {
				t.Errorf("%s: refused: %v", c.body, err)
				continue
			}
			if got := string(env.ID); got != c.id {
				t.Errorf("%s: id %q, want %q", c.body, got, c.id)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want %d", c.body, c.code)
			continue
		}
		if err.Code != c.code {
			t.Errorf("%s: code %d (%s), want %d", c.body, err.Code, err.Message, c.code)
		}
		if got := string(err.ID); got != c.id {
			t.Errorf("%s: error id %q, want %q", c.body, got, c.id)
		}
		if strings.Contains(err.Message, "json:") || strings.Contains(err.Message, "Go ") || strings.Contains(err.Message, "[]") {
			t.Errorf("%s: message %q names Go internals", c.body, err.Message)
		}
	}
}

func TestParseEnvelopeMissingParams(t *testing.T) {
	env, err := ParseEnvelope([]byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`))
	if err != nil || string(env.Params) != `{}` || env.Method != "ListTasks" {
		t.Fatalf("%+v %v", env, err)
	}
}

// TestIDWriterSplits checks the placeholder is replaced however the
// writes cut it, and nothing else changes.
func TestIDWriterSplits(t *testing.T) {
	from := []byte(`"vessel-rpc-id-0123"`)
	msg := []byte(`data: {"jsonrpc":"2.0","id":"vessel-rpc-id-0123","result":{}}` + "\n\n" + `"vessel-rpc-id-01` + "\n\n")
	want := bytes.ReplaceAll(msg, from, []byte(`12345678901234567890`))
	for cut := 0; cut <= len(msg); cut++ {
		rec := httptest.NewRecorder()
		iw := newIDWriter(rec, from, []byte(`12345678901234567890`))
		_, _ = iw.Write(msg[:cut])
		_, _ = iw.Write(msg[cut:])
		iw.finish()
		if !bytes.Equal(rec.Body.Bytes(), want) {
			t.Fatalf("cut %d: %s", cut, rec.Body.Bytes())
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("content type %q", ct)
		}
	}
}

// TestEchoedAsSent: only string ids that encoding/json reads and writes
// back unchanged pass to the SDK as they are.
func TestEchoedAsSent(t *testing.T) {
	for id, want := range map[string]bool{
		`"abc-123"`: true, `"req 7 ~!@#$%^*()_+={}[]|:;',.?/"`: true, `""`: true,
		`"a<b"`: false, `"a>b"`: false, `"a&b"`: false, `"\u0041"`: false, `"a\"b"`: false, `"é"`: false,
		"\"a\tb\"": false, `12`: false, `1e3`: false, `null`: false, `"`: false, ``: false, `"x`: false,
	} {
		s, ok := echoedAsSent([]byte(id))
		if ok != want {
			t.Errorf("%s: %v, want %v", id, ok, want)
			continue
		}
		if ok {
			if b, _ := json.Marshal(s); string(b) != id {
				t.Errorf("%s: encoding/json writes it back as %s", id, b)
			}
		}
	}
}

// TestIDWriterPlain: without a placeholder every write passes unchanged.
func TestIDWriterPlain(t *testing.T) {
	rec := httptest.NewRecorder()
	iw := newIDWriter(rec, nil, []byte(`"x"`))
	for _, p := range []string{`data: {"id":"x"}`, "\n\n", `"vessel-rpc-id-`} {
		if n, err := iw.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("%q: %d %v", p, n, err)
		}
	}
	iw.Flush()
	if got := rec.Body.String(); got != `data: {"id":"x"}`+"\n\n"+`"vessel-rpc-id-` || !rec.Flushed {
		t.Fatalf("%q", got)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
}

func TestHandlerMethodsAndNotifications(t *testing.T) {
	ran := 0
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran++ }))
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodHead, http.MethodPatch} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(m, "/agents/x", nil))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
			t.Errorf("%s: %d, Allow %q", m, rec.Code, rec.Header().Get("Allow"))
		}
	}
	for _, body := range []string{`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{}}}`, `{"jsonrpc":"2.0","method":"message/send","params":{}}`} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/agents/x", strings.NewReader(body)))
		if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
			t.Errorf("notification %s: %d %q", body, rec.Code, rec.Body.String())
		}
	}
	if ran != 0 {
		t.Fatalf("%d requests reached the SDK", ran)
	}
}

// FuzzParseEnvelope: no input panics; an accepted request is a valid JSON
// object with valid text whose canonical form reads back the same.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`,
		`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"parts":[{"text":"\ud83d\ude00"}]}}}`,
		`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":"\ud800","method":"m"}`, "{\"a\":\"\xff\"}", `{}`, `"x"`, `{"id":1e400}`,
		`{"jsonrpc":"2.0","id":-0.5e-3,"method":"m","params":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		env, eerr := ParseEnvelope(body)
		if eerr != nil {
			if eerr.Code != CodeParseError && eerr.Code != CodeInvalidRequest && eerr.Code != CodeInvalidParams {
				t.Fatalf("code %d", eerr.Code)
			}
			if eerr.ID != nil && !json.Valid(eerr.ID) {
				t.Fatalf("error id %q is not JSON", eerr.ID)
			}
			return
		}
		if !json.Valid(body) || env.Method == "" {
			t.Fatalf("accepted %q", body)
		}
		if env.Notification() {
			return // its params are never read: nothing is run
		}
		if !utf8.Valid(body) || checkText(body) != "" {
			t.Fatalf("accepted invalid text %q", body)
		}
		canon, err := canonicalBody(env.Method, "ph", env.Params)
		if err != nil {
			t.Fatalf("canonical body: %v", err)
		}
		again, eerr := ParseEnvelope(canon)
		if eerr != nil || again.Method != env.Method || string(again.ID) != `"ph"` {
			t.Fatalf("canonical %s: %+v %v", canon, again, eerr)
		}
	})
}

// BenchmarkParseEnvelopeLarge measures the check on a body near the
// 16,000,000-byte limit (a long base64 history, as a transcript part is).
func BenchmarkParseEnvelopeLarge(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"},{"raw":"` +
		strings.Repeat("QUJD", 3_900_000) + `","mediaType":"application/vnd.astralvessel.transcript+json"}]}}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		env, err := ParseEnvelope(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := canonicalBody(env.Method, "ph", env.Params); err != nil {
			b.Fatal(err)
		}
	}
}

// skipStringBytewise is skipString as it was, reading the escapes pair by
// pair: the reference for the IndexByte scan.
func skipStringBytewise(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// FuzzSkipString checks skipString against the pair-by-pair reading, from
// every start.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"\\"x"`, `"\\\"x"`, `x"\\\\"`, `"\`, `"abc`, `""`, `"\"\\"`, `"a\\\\\"b"c"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := range b {
			if got, want := skipString(b, i), skipStringBytewise(b, i); got != want {
				t.Fatalf("skipString(%q, %d) = %d, pair by pair %d", b, i, got, want)
			}
		}
	})
}
