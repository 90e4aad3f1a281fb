package client

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

func TestImagesAndSkillParts(t *testing.T) {
	req, err := buildRequest(TurnRequest{Text: "what bird?", ContextID: "c1", Images: []Image{{MediaType: "image/png", Data: []byte{1, 2}, Name: "b.png"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := req.Message.Parts[1]
	if raw, ok := p.Content.(a2a.Raw); !ok || len(raw) != 2 || p.MediaType != "image/png" || p.Filename != "b.png" {
		t.Errorf("image part %+v", p)
	}
	if req.Message.ContextID != "c1" || req.Message.Role != a2a.MessageRoleUser {
		t.Errorf("message %+v", req.Message)
	}
	if _, err := buildRequest(TurnRequest{Text: "x", Images: []Image{{Data: []byte{1}}}}); err == nil {
		t.Error("image without media type accepted")
	}
}

func TestTokenAuthHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/", "birds", Options{Token: "jwt-here", Scopes: []string{"tools:read", "tools:files"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint() != srv.URL+"/agents/birds" {
		t.Errorf("endpoint %s", c.Endpoint())
	}
	if _, err := c.Get(t.Context(), "x"); err == nil {
		t.Fatal("401 not reported")
	}
	h := <-got
	if h.Get("Authorization") != "Bearer jwt-here" || h.Get("X-Vessel-User") != "" || h.Get("X-Vessel-Scopes") != "tools:read tools:files" {
		t.Errorf("headers %v", h)
	}
}

func TestSubscribeThenCancel(t *testing.T) {
	fv := newFakeVessel(t)
	c := newTestClient(t, fv, "birds")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := c.Turn(ctx, TurnRequest{Text: "slow"})
	next, stop := iter.Pull2(s.Events())
	defer stop()
	// Read until the working status: the execution is registered.
	for {
		ev, err, ok := next()
		if err != nil || !ok {
			t.Fatal(err, ok)
		}
		if ts, ok := ev.(TurnStarted); ok && ts.Data != nil {
			break
		}
	}
	id := <-fv.exec.started
	sub := c.Subscribe(t.Context(), string(id))
	done := make(chan *Result, 1)
	subscribed := make(chan struct{})
	go func() {
		first := true
		for _, err := range sub.Events() {
			if first {
				// The snapshot frame arrived: the subscription is live, so the
				// cancel below cannot win the race against it.
				close(subscribed)
				first = false
			}
			if err != nil {
				t.Errorf("subscription: %v", err)
				break
			}
		}
		if first {
			close(subscribed)
		}
		done <- sub.Result()
	}()
	<-subscribed
	if _, err := c.Cancel(t.Context(), string(id)); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.TaskID != string(id) || r.Finished == nil || r.Finished.Status != "cancelled" {
		t.Errorf("subscription result %+v finished %+v", r, r.Finished)
	}
}
