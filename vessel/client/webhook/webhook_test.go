package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

func keys(t testing.TB) (*cardsig.Keys, []byte) {
	t.Helper()
	raw, err := cardsig.Generate()
	if err != nil {
		t.Fatal(err)
	}
	k, err := cardsig.ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := k.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	return k, jwks
}

func body(t testing.TB, state a2a.TaskState) []byte {
	t.Helper()
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: state}}
	b, err := json.Marshal(a2a.StreamResponse{Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func post(t *testing.T, url string, b []byte, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", webhook.ContentType)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A signed delivery with the token is handled once; a repeat of its id is
// acknowledged without a second call; forgeries are refused.
func TestReceiver(t *testing.T) {
	k, jwks := keys(t)
	other, _ := keys(t)
	var mu sync.Mutex
	var got []*webhook.Delivery
	rcv := &webhook.Receiver{Token: "tok", Keys: func(context.Context) ([]byte, error) { return jwks, nil },
		Handle: func(_ context.Context, d *webhook.Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, d)
			return nil
		}}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	b := body(t, a2a.TaskStateCompleted)
	sig, err := k.SignPush(b, "d1")
	if err != nil {
		t.Fatal(err)
	}
	good := map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d1", webhook.SignatureHeader: sig, webhook.AttemptHeader: "3"}
	for range 2 {
		if c := post(t, srv.URL, b, good); c != http.StatusNoContent {
			t.Fatalf("good delivery: %d", c)
		}
	}
	if len(got) != 1 || got[0].TaskID != "t1" || got[0].State != a2a.TaskStateCompleted || got[0].Attempt != 3 || got[0].KeyID != k.KeyID() {
		t.Fatalf("handled %+v", got)
	}
	otherSig, _ := other.SignPush(b, "d2")
	movedSig, _ := k.SignPush(b, "d3")
	for name, c := range map[string]struct {
		body []byte
		hdr  map[string]string
		want int
	}{
		"no token":       {b, map[string]string{webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: sig}, 401},
		"wrong token":    {b, map[string]string{webhook.TokenHeader: "x", webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: sig}, 401},
		"no signature":   {b, map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d2"}, 401},
		"another key":    {b, map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: otherSig}, 401},
		"replayed id":    {b, map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: movedSig}, 401},
		"changed body":   {body(t, a2a.TaskStateFailed), map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d3", webhook.SignatureHeader: movedSig}, 401},
		"no delivery id": {b, map[string]string{webhook.TokenHeader: "tok", webhook.SignatureHeader: sig}, 400},
		"not JSON":       {[]byte("{"), map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d4"}, 401},
		"signature junk": {b, map[string]string{webhook.TokenHeader: "tok", webhook.DeliveryIDHeader: "d2", webhook.SignatureHeader: "a.b.c.d"}, 401},
	} {
		if code := post(t, srv.URL, c.body, c.hdr); code != c.want {
			t.Errorf("%s: %d, want %d", name, code, c.want)
		}
	}
	if len(got) != 1 {
		t.Fatalf("a refused delivery was handled: %+v", got)
	}
	// The vessel's keys out of reach is a passing fault: 503, so the vessel
	// delivers again (4xx would be final), and the id is not remembered.
	down := &webhook.Receiver{Keys: func(context.Context) ([]byte, error) { return nil, errors.New("connection refused") }}
	ds := httptest.NewServer(down)
	defer ds.Close()
	if c := post(t, ds.URL, b, good); c != http.StatusServiceUnavailable {
		t.Fatalf("keys unavailable: %d, want 503", c)
	}
	// A failing handler answers 500 and the id is not remembered.
	fail := &webhook.Receiver{Handle: func(context.Context, *webhook.Delivery) error { return errors.New("busy") }}
	fs := httptest.NewServer(fail)
	defer fs.Close()
	for range 2 {
		if c := post(t, fs.URL, b, map[string]string{webhook.DeliveryIDHeader: "d9"}); c != 500 {
			t.Fatalf("failing handler: %d", c)
		}
	}
}

func FuzzRead(f *testing.F) {
	k, jwks := keys(f)
	b := body(f, a2a.TaskStateCompleted)
	sig, _ := k.SignPush(b, "d1")
	f.Add(b, sig, "d1")
	f.Add([]byte(`{"task":{"id":"x","status":{"state":"TASK_STATE_FAILED"}}}`), "", "d2")
	f.Add([]byte(`{"message":{}}`), "e30..", "d3")
	rcv := &webhook.Receiver{Keys: func(context.Context) ([]byte, error) { return jwks, nil }}
	plain := &webhook.Receiver{}
	f.Fuzz(func(t *testing.T, body []byte, sig, id string) {
		for _, r := range []*webhook.Receiver{rcv, plain} {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", webhook.ContentType)
			req.Header.Set(webhook.DeliveryIDHeader, id)
			req.Header.Set(webhook.SignatureHeader, sig)
			d, err := r.Read(req)
			if err == nil && (d.TaskID == "" && d.State == "" && d.Event == nil) {
				t.Fatalf("accepted an empty delivery")
			}
			if err == nil && r == rcv && d.KeyID == "" {
				t.Fatalf("signed receiver accepted without a key id")
			}
		}
	})
}
