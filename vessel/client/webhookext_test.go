package client

import (
	"net/http"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

// TestWebhookWorkingRequestsExtension: a Webhook with Working registers
// with the push-working extension in A2A-Extensions (AddWebhook and
// Submit); without it no extension is requested. (The fake serves no push
// configs: only the requests are checked.)
func TestWebhookWorkingRequestsExtension(t *testing.T) {
	fv := newFakeVessel(t)
	c := newTestClient(t, fv, "birds")
	last := func() http.Header {
		fv.mu.Lock()
		defer fv.mu.Unlock()
		return fv.hdrs[len(fv.hdrs)-1]
	}
	asked := func(h http.Header) bool {
		return strings.Contains(strings.Join(h.Values("A2A-Extensions"), ","), webhook.WorkingExtension)
	}
	_, _ = c.AddWebhook(t.Context(), "t1", Webhook{URL: "http://127.0.0.1:1/h", Token: "k", Working: true})
	if !asked(last()) {
		t.Fatalf("AddWebhook with Working sent %v", last())
	}
	_, _ = c.AddWebhook(t.Context(), "t1", Webhook{URL: "http://127.0.0.1:1/h", Token: "k"})
	if asked(last()) {
		t.Fatalf("AddWebhook without Working sent %v", last())
	}
	_, _ = c.Submit(t.Context(), TurnRequest{Text: "hi"}, &Webhook{URL: "http://127.0.0.1:1/h", Token: "k", Working: true})
	if !asked(last()) {
		t.Fatalf("Submit with a Working webhook sent %v", last())
	}
	if _, err := c.Submit(t.Context(), TurnRequest{Text: "hi"}, nil); err != nil {
		t.Fatal(err)
	}
	if asked(last()) {
		t.Fatalf("Submit without a webhook sent %v", last())
	}
}
