package a2acompat

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

const history = `{"version":1,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`

var b64 = base64.StdEncoding.EncodeToString([]byte(history))

func sendParams(parts string) string {
	return `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[` + parts + `]},"configuration":{"acceptedOutputModes":["text/markdown"]}}`
}

func transcriptPart(raw string) string {
	return `{"mediaType":"` + transcript.MediaType + `","raw":` + raw + `}`
}

// decodeSend decodes params as the SDK's JSON-RPC handler does.
func decodeSend(t *testing.T, params []byte) (*a2a.SendMessageRequest, error) {
	t.Helper()
	var req a2a.SendMessageRequest
	err := json.Unmarshal(params, &req)
	return &req, err
}

func TestLiftTranscript(t *testing.T) {
	params := []byte(sendParams(`{"text":"question"},` + transcriptPart(`"`+b64+`"`) + `,{"text":"more"}`))
	rest, aside, ok := liftTranscript(params)
	if !ok {
		t.Fatal("not lifted")
	}
	if aside.Part != 1 || string(aside.Bytes) != history {
		t.Fatalf("aside: part %d, %q", aside.Part, aside.Bytes)
	}
	if bytes.Contains(rest, []byte(b64)) || len(rest) != len(params)-len(b64) {
		t.Fatalf("rest still holds the history: %s", rest)
	}
	// The SDK reads the same request, with the part's content empty.
	orig, err := decodeSend(t, params)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSend(t, rest)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Message.Parts[1].Content.(a2a.Raw)) != 0 {
		t.Fatalf("lifted part keeps content %v", got.Message.Parts[1].Content)
	}
	// The turn reads the history from the aside, once, and lets it go.
	in, err := turn.Parse(got.Message, "ctx-1", turn.Options{Aside: aside})
	if err != nil || len(in.History) != 2 || in.Text != "question\nmore" {
		t.Fatalf("turn: %+v %v", in, err)
	}
	if aside.Bytes != nil {
		t.Fatal("the aside still holds the history")
	}
	got.Message.Parts[1].Content = a2a.Raw([]byte(history))
	if !reflect.DeepEqual(orig, got) {
		t.Fatalf("requests differ:\n%+v\n%+v", orig, got)
	}
}

// TestLiftLeavesUnusualRequests: whatever is not plainly shaped is left
// as it is, so the SDK reads and answers it exactly as before the lift.
func TestLiftLeavesUnusualRequests(t *testing.T) {
	tp := transcriptPart(`"` + b64 + `"`)
	for name, params := range map[string]string{
		"no transcript":          sendParams(`{"text":"q"}`),
		"text transcript":        sendParams(`{"mediaType":"` + transcript.MediaType + `","text":"{}"}`),
		"escaped raw":            sendParams(transcriptPart(`"\/` + b64[1:] + `"`)),
		"raw with a \\u escape":  sendParams(transcriptPart(`"\u0041` + b64[1:] + `"`)),
		"raw not base64":         sendParams(transcriptPart(`"not base64!"`)),
		"raw unpadded":           sendParams(transcriptPart(`"` + strings.TrimRight(b64, "=") + "A" + `"`)),
		"raw empty":              sendParams(transcriptPart(`""`)),
		"raw null":               sendParams(transcriptPart(`null`)),
		"raw a number":           sendParams(transcriptPart(`12`)),
		"raw twice":              sendParams(`{"mediaType":"` + transcript.MediaType + `","raw":"` + b64 + `","raw":"` + b64 + `"}`),
		"raw case-folded twin":   sendParams(`{"mediaType":"` + transcript.MediaType + `","raw":"` + b64 + `","RAW":"AAAA"}`),
		"raw case-folded":        sendParams(`{"mediaType":"` + transcript.MediaType + `","Raw":"` + b64 + `"}`),
		"mediaType twice":        sendParams(`{"mediaType":"text/plain","mediaType":"` + transcript.MediaType + `","raw":"` + b64 + `"}`),
		"mediaType case-folded":  sendParams(`{"MediaType":"` + transcript.MediaType + `","raw":"` + b64 + `"}`),
		"mediaType escaped":      sendParams(`{"mediaType":"application\/vnd.astralvessel.transcript+json","raw":"` + b64 + `"}`),
		"escaped key":            sendParams(`{"media\u0054ype":"` + transcript.MediaType + `","raw":"` + b64 + `"}`),
		"parts twice":            `{"message":{"messageId":"m","role":"ROLE_USER","parts":[` + tp + `],"parts":[]}}`,
		"parts case-folded twin": `{"message":{"messageId":"m","role":"ROLE_USER","parts":[` + tp + `],"PARTS":[]}}`,
		"message twice":          `{"message":{"parts":[` + tp + `]},"message":{"parts":[]}}`,
		"message case-folded":    `{"Message":{"parts":[` + tp + `]}}`,
		"message long s":         `{"meſſage":{"parts":[` + tp + `]}}`,
		"parts not a list":       `{"message":{"parts":{"0":` + tp + `}}}`,
		"message not an object":  `{"message":[` + tp + `]}`,
		"trailing data":          sendParams(tp) + ` {}`,
		"truncated":              sendParams(tp)[:60],
	} {
		if rest, aside, ok := liftTranscript([]byte(params)); ok {
			t.Errorf("%s: lifted part %d (%d bytes): %s", name, aside.Part, len(aside.Bytes), rest)
		}
	}
}

// TestLiftMediaTypeSpellings: the media type matches as turn.Parse
// compares it (parameters, space; a spelling in other case is left to the
// SDK and read as before), and only the first transcript
// part is lifted (turn.Parse refuses a second).
func TestLiftMediaTypeSpellings(t *testing.T) {
	for _, mt := range []string{" " + transcript.MediaType + "; charset=utf-8", transcript.MediaType + ";v=1"} {
		params := sendParams(`{"mediaType":"` + mt + `","raw":"` + b64 + `"}`)
		if _, aside, ok := liftTranscript([]byte(params)); !ok || aside.Part != 0 {
			t.Errorf("%q: not lifted", mt)
		}
	}
	two := sendParams(`null,` + transcriptPart(`"`+b64+`"`) + `,` + transcriptPart(`"`+b64+`"`))
	rest, aside, ok := liftTranscript([]byte(two))
	if !ok || aside.Part != 1 || !bytes.Contains(rest, []byte(b64)) {
		t.Fatalf("two parts: %v %+v %s", ok, aside, rest)
	}
	req, err := decodeSend(t, rest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Parse(req.Message, "c", turn.Options{Aside: aside}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("a null part must still be refused: %v", err)
	}
	req.Message.Parts[0] = a2a.NewTextPart("q")
	aside.Bytes = []byte(history)
	if _, err := turn.Parse(req.Message, "c", turn.Options{Aside: aside}); err == nil || !strings.Contains(err.Error(), "more than one transcript") {
		t.Fatalf("a second transcript part must still be refused: %v", err)
	}
}

// captured is what the SDK's handler saw of a request.
type captured struct {
	body  []byte
	aside *turn.Aside
}

func serve(t *testing.T, body string, readBody bool) (*captured, *httptest.ResponseRecorder) {
	t.Helper()
	c := &captured{}
	v1 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.body, _ = io.ReadAll(r.Body)
		c.aside = turn.AsideFrom(r.Context())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(jsonID(c.body)) + `,"result":{}}`))
	})
	v0 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.body, _ = io.ReadAll(r.Body)
		c.aside = turn.AsideFrom(r.Context())
		w.WriteHeader(http.StatusOK)
	})
	r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/", strings.NewReader(body))
	var rb *ReadBody
	if readBody {
		rb = NewReadBody([]byte(body))
		r.Body = rb
	}
	w := httptest.NewRecorder()
	Handler(v1, v0).ServeHTTP(w, r)
	if rb != nil && c.body != nil && rb.b != nil {
		t.Error("the read body is still held while the SDK serves the request")
	}
	return c, w
}

func jsonID(canon []byte) json.RawMessage {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(canon, &env)
	return env.ID
}

// TestHandlerLifts: a streaming send has its transcript lifted, and the
// caller's id comes back as sent; methods that carry no message, and A2A
// 0.3 calls, are passed on whole.
func TestHandlerLifts(t *testing.T) {
	for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
		body := `{"jsonrpc":"2.0","id":7.50,"method":"` + method + `","params":` + sendParams(transcriptPart(`"`+b64+`"`)) + `}`
		c, w := serve(t, body, true)
		if c.aside == nil || string(c.aside.Bytes) != history || bytes.Contains(c.body, []byte(b64)) {
			t.Fatalf("%s: not lifted: %s", method, c.body)
		}
		if !strings.Contains(w.Body.String(), `"id":7.50`) {
			t.Fatalf("%s: id not echoed as sent: %s", method, w.Body)
		}
	}
	for _, method := range []string{"GetTask", "message/stream"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + sendParams(transcriptPart(`"`+b64+`"`)) + `}`
		c, _ := serve(t, body, false)
		if c.aside != nil || !bytes.Contains(c.body, []byte(b64)) {
			t.Fatalf("%s: lifted: %s", method, c.body)
		}
	}
	// snake_case fields are rewritten first, then lifted.
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"media_type":"` +
		transcript.MediaType + `","raw":"` + b64 + `"}]}}}`
	if c, _ := serve(t, body, true); c.aside == nil || bytes.Contains(c.body, []byte(b64)) || !bytes.Contains(c.body, []byte(`"messageId"`)) {
		t.Fatalf("snake_case: %s", c.body)
	}
}

// TestHandlerRefusesBadTextBeforeLift: invalid UTF-8 or an unpaired
// surrogate anywhere in a send request is still refused by the envelope
// check before anything is lifted, as is an oversize or broken body.
func TestHandlerRefusesBadTextBeforeLift(t *testing.T) {
	for name, tc := range map[string]struct {
		params string
		code   string
	}{
		"invalid UTF-8 in a text part": {sendParams("{\"text\":\"q\xff\"}," + transcriptPart(`"`+b64+`"`)), "-32602"},
		"lone surrogate":               {sendParams(`{"text":"\ud800"},` + transcriptPart(`"`+b64+`"`)), "-32602"},
		"invalid UTF-8 in a key":       {sendParams("{\"\xfftext\":\"q\"}," + transcriptPart(`"`+b64+`"`)), "-32602"},
		"not JSON":                     {sendParams(transcriptPart(`"` + b64)), "-32700"},
	} {
		params := tc.params
		body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":` + params + `}`
		c, w := serve(t, body, true)
		if c.body != nil || !strings.Contains(w.Body.String(), tc.code) {
			t.Errorf("%s: reached the SDK (%s) or answered %s", name, c.body, w.Body)
		}
	}
}

// FuzzLiftTranscript: whenever a request is lifted, the SDK reads the
// lifted request as it would have read the original, but for the lifted
// part's content, which is in the aside.
func FuzzLiftTranscript(f *testing.F) {
	tp := transcriptPart(`"` + b64 + `"`)
	for _, s := range []string{
		sendParams(tp),
		sendParams(`{"text":"q"},` + tp + `,{"url":"x"}`),
		sendParams(`{"mediaType":"` + transcript.MediaType + `","raw":"` + b64 + `","text":"x"}`),
		sendParams(`{"mediaType":"` + transcript.MediaType + `","raw":"` + b64 + `","metadata":{"raw":1}}`),
		`{"message":{"parts":[` + tp + `],"metadata":{"message":{"parts":[]}}}}`,
		`{"message":{"parts":[` + tp + `]},"message ":1}`,
		sendParams(`{"mediaType":"` + transcript.MediaType + `","raw":"QUJD\r\nREVG"}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		rest, aside, ok := liftTranscript(params)
		if !ok {
			return
		}
		if aside.Over {
			checkRefused(t, params, rest, aside)
			return
		}
		if len(aside.Bytes) == 0 {
			t.Fatal("lifted nothing")
		}
		orig, oerr := decodeSend(t, params)
		got, gerr := decodeSend(t, rest)
		if (oerr == nil) != (gerr == nil) {
			t.Fatalf("original: %v, lifted: %v", oerr, gerr)
		}
		if oerr != nil {
			return
		}
		if got.Message == nil || aside.Part >= len(got.Message.Parts) || got.Message.Parts[aside.Part] == nil {
			t.Fatalf("lifted part %d is not in %+v", aside.Part, got.Message)
		}
		p := got.Message.Parts[aside.Part]
		if raw, isRaw := p.Content.(a2a.Raw); !isRaw || len(raw) != 0 || turn.MediaType(p.MediaType) != transcript.MediaType {
			t.Fatalf("lifted part %+v", p)
		}
		p.Content = a2a.Raw(aside.Bytes)
		if !reflect.DeepEqual(orig, got) {
			t.Fatalf("requests differ:\n%+v\n%+v", orig, got)
		}
	})
}

// BenchmarkLiftTranscript: the JSON-RPC lift of a send whose raw history
// holds 2,000 messages of about 130 bytes (the cap; a normal turn's cost)
// and 10,000 (refused over the cap).
func BenchmarkLiftTranscript(b *testing.B) {
	for _, n := range []int{transcript.MaxMessages, 10_000} {
		msgs := make([]string, n)
		for i := range msgs {
			msgs[i] = `{"role":"user","content":"` + strings.Repeat("m", 100) + `"}`
		}
		params := []byte(sendParams(`{"text":"q"},` + rawPart(`{"version":1,"messages":[`+strings.Join(msgs, ",")+`]}`)))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(params)))
			b.ReportAllocs()
			for b.Loop() {
				if _, aside, ok := liftTranscript(params); !ok || aside.Over != (n > transcript.MaxMessages) {
					b.Fatalf("lifted %v %+v", ok, aside)
				}
			}
		})
	}
}
