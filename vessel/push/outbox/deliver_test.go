package outbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
)

// A public webhook (push_public) goes through the egress proxy: the
// request reaches the proxy with the webhook's absolute URL and the
// delivery headers; the vessel resolves and dials nothing itself. Without
// a proxy the public route is refused.
func TestPublicThroughEgress(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent) // the test proxy dials nothing either
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	d := outbox.NewDeliverer(pu, nil)
	// http, so the proxy sees the request itself (https would be a CONNECT
	// tunnel the test proxy cannot open).
	cfg := &a2a.PushConfig{TaskID: "t", ID: "c", URL: "http://hooks.example.com/a2a", Token: "tok"}
	a := outbox.Args{DeliveryID: "d1", Body: []byte(`{"statusUpdate":{}}`)}
	if err := d.Deliver(context.Background(), dest.ViaEgress, cfg, a, 1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0].URL.String() != "http://hooks.example.com/a2a" || seen[0].Header.Get(outbox.TokenHeader) != "tok" ||
		seen[0].Header.Get(outbox.DeliveryIDHeader) != "d1" || seen[0].Header.Get("Content-Type") != outbox.ContentType {
		t.Fatalf("proxy saw %+v", seen)
	}
	mu.Unlock()
	if err := outbox.NewDeliverer(nil, nil).Deliver(context.Background(), dest.ViaEgress, cfg, a, 1); !errors.Is(err, dest.ErrRefused) {
		t.Fatalf("public route without an egress proxy: %v", err)
	}
}

// Direct deliveries refuse a special-purpose address at dial time: the
// dialer's Control runs on the new socket before connect, so no packet
// leaves.
func TestDirectDialRefusesSpecialPurpose(t *testing.T) {
	d := outbox.NewDeliverer(nil, nil)
	for _, u := range []string{"http://169.254.169.254/x", "http://[fe80::1]:80/x", "http://0.0.0.0:9/x"} {
		err := d.Deliver(context.Background(), dest.Direct, &a2a.PushConfig{URL: u}, outbox.Args{DeliveryID: "d"}, 1)
		if !errors.Is(err, dest.ErrRefused) && (err == nil || !strings.Contains(err.Error(), "webhook destination refused")) {
			t.Errorf("%s: %v", u, err)
		}
	}
}
