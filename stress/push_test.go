package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/stress/internal/load"
	"github.com/astraldeep/astralvessel-go/stress/internal/stack"
	"github.com/astraldeep/astralvessel-go/vessel/client"
	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

// Issue 17 (5): the vessel is killed (SIGKILL) while it delivers a push
// notification; started again on the same task store, it delivers it,
// with the same delivery id.
func TestLocalStackPushSurvivesKill(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run against the local stack")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := make(chan string, 1)
	var delivered []*webhook.Delivery
	first := true
	rcv := &webhook.Receiver{Token: "tok", Remember: -1, Handle: func(_ context.Context, d *webhook.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		delivered = append(delivered, d)
		return nil
	}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hold := first
		first = false
		mu.Unlock()
		if hold {
			// Keep the first attempt open until the vessel is gone.
			_, _ = io.Copy(io.Discard, r.Body)
			held <- r.Header.Get(webhook.DeliveryIDHeader)
			<-r.Context().Done()
			return
		}
		rcv.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	t.Setenv("VESSEL_PUSH_RESCUE_SECONDS", "30") // the vessels inherit it
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir, err := os.MkdirTemp("", "stress-push-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	hook := "http://" + ln.Addr().String() + "/hooks/"
	st, err := stack.Start(ctx, stack.Config{
		Dir: dir, BinDir: testBin(t), Replicas: 1, Script: load.Script(20), Log: testLog{t},
		AppTOML: `push_urls = ["` + hook + `"]`,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	c, err := client.New(st.Endpoint[0], stack.AgentID, client.Options{AppKey: st.AppKey, User: "pusher"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Submit(ctx, client.TurnRequest{Text: "#script:load push me"}, &client.Webhook{URL: hook + "done", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	select {
	case id = <-held:
	case <-ctx.Done():
		t.Fatal("no delivery attempt")
	}
	st.Vessels[0].Kill()
	if err := st.RestartVessel(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for {
		mu.Lock()
		n := len(delivered)
		mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("not delivered after the restart; log:\n%s", st.LogTail(st.Vessels[0], 40))
		case <-time.After(200 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	d := delivered[0]
	if d.ID != id || d.TaskID != a2a.TaskID(res.TaskID) || d.State != a2a.TaskStateCompleted || d.Attempt < 2 {
		t.Fatalf("after the restart: %+v, want delivery %s of task %s completed", d, id, res.TaskID)
	}
}
