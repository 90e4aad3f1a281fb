package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/stress/internal/stack"
	"github.com/astraldeep/astralvessel-go/vessel/client"
	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
)

// restartReason is the status text of a task failed at start
// (vessel/restartReason; this module does not import the vessel).
const restartReason = "the vessel stopped before this turn's end was stored"

// hangScript is a scripted model whose "#script:hang " turn streams for
// about 100 s: long enough to be killed mid-turn.
const hangScript = `{"rules": [{"name": "hang", "match": {"contains": "#script:hang "},
	"steps": [{"text": "` + "ok ok ok ok ok ok ok ok ok ok" + `", "pieces": 10, "piece_delay_ms": 10000}]}]}`

// Issue 17: a task the vessel fails itself is pushed too. The vessel is
// killed (SIGKILL) mid-turn; started again on the same SQLite task store,
// it fails the task (the restart rule) and the webhook gets that FAILED
// status with the restart reason.
func TestLocalStackPushSelfFailedAfterKill(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run against the local stack")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var delivered []*webhook.Delivery
	rcv := &webhook.Receiver{Token: "tok", Remember: -1, Handle: func(_ context.Context, d *webhook.Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		delivered = append(delivered, d)
		return nil
	}}
	srv := &http.Server{Handler: rcv}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir, err := os.MkdirTemp("", "stress-selffailed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	hook := "http://" + ln.Addr().String() + "/hooks/"
	st, err := stack.Start(ctx, stack.Config{
		Dir: dir, BinDir: testBin(t), Replicas: 1, Script: []byte(hangScript), Log: testLog{t},
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
	res, err := c.Submit(ctx, client.TurnRequest{Text: "#script:hang please"}, &client.Webhook{URL: hook + "failed", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	for {
		got, err := c.Get(ctx, res.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == string(a2a.TaskStateWorking) {
			break
		}
		if got.State != string(a2a.TaskStateSubmitted) {
			t.Fatalf("the turn is %s before the kill", got.State)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the turn never worked")
		case <-time.After(50 * time.Millisecond):
		}
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
			t.Fatalf("no push after the restart; log:\n%s", st.LogTail(st.Vessels[0], 40))
		case <-time.After(200 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	d := delivered[0]
	su, _ := d.Event.(*a2a.TaskStatusUpdateEvent)
	if d.TaskID != a2a.TaskID(res.TaskID) || d.State != a2a.TaskStateFailed || su == nil || su.Status.Message == nil ||
		!strings.Contains(su.Status.Message.Parts[0].Text(), restartReason) {
		t.Fatalf("after the restart: %+v (%+v), want task %s failed with %q", d, su, res.TaskID, restartReason)
	}
}
