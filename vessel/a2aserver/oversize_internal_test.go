package a2aserver

import (
	"encoding/base64"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
	"github.com/astraldeep/astralvessel-go/vessel/turn"
)

// TestRefuseOversizeRequest: an HTTP+JSON send whose history is over the
// cap goes on with the history emptied, the mark in its context and its
// length headers those of the new body; any other send goes on as it came.
func TestRefuseOversizeRequest(t *testing.T) {
	send := func(n int) string {
		env := `{"version":1,"messages":[` + strings.Repeat(`{"role":"user","content":"m"},`, n-1) + `{"role":"user","content":"m"}]}`
		return `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"q"},{"mediaType":"` + transcript.MediaType +
			`","raw":"` + base64.StdEncoding.EncodeToString([]byte(env)) + `"}]}}`
	}
	body := send(transcript.MaxMessages + 1)
	r := httptest.NewRequest("POST", "/message:send", nil)
	r.Body = a2acompat.NewReadBody([]byte(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	got := refuseOversize(r)
	a := turn.AsideFrom(got.Context())
	if a == nil || !a.Over || a.Part != 1 || a.Bytes != nil {
		t.Fatalf("aside %+v", a)
	}
	rest, err := io.ReadAll(got.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"q"},{"mediaType":"` + transcript.MediaType + `","raw":""}]}}`
	if string(rest) != want || got.ContentLength != int64(len(want)) || got.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Fatalf("body %q, length %d, header %q", rest, got.ContentLength, got.Header.Get("Content-Length"))
	}
	if turn.AsideFrom(r.Context()) != nil || r.ContentLength != int64(len(body)) {
		t.Fatal("the original request changed")
	}
	within := httptest.NewRequest("POST", "/message:send", nil)
	within.Body = a2acompat.NewReadBody([]byte(send(transcript.MaxMessages)))
	if refuseOversize(within) != within || turn.AsideFrom(within.Context()) != nil {
		t.Fatal("a history within the cap was changed")
	}
	other := httptest.NewRequest("POST", "/message:send", strings.NewReader(body))
	if refuseOversize(other) != other {
		t.Fatal("a body not read by the front was changed")
	}
}
