package a2aserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/cardsign"
	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
	"github.com/astraldeep/astralvessel-go/vessel/push/dest"
	"github.com/astraldeep/astralvessel-go/vessel/push/outbox"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
)

// receiver is a verifying webhook on loopback that records deliveries.
type receiver struct {
	t   *testing.T
	url string // base, e.g. http://127.0.0.1:1234
	srv *httptest.Server
	rcv *webhook.Receiver

	mu sync.Mutex
	// got are the deliveries handled, in arrival order (duplicates of a
	// delivery id included: the Receiver's own dedupe is off).
	got []*webhook.Delivery
	// paths are the URL paths of got.
	paths []string
	// fail, when set, decides the answer before Handle (down, slow, ...).
	fail func(r *http.Request) bool
	raw  []*http.Request
}

func newReceiver(t *testing.T) *receiver { return newReceiverAt(t, "") }

// newReceiverAt listens on addr ("" picks a port); with startLater the
// server is not started (nothing answers there) until start is called.
func newReceiverAt(t *testing.T, addr string) *receiver {
	t.Helper()
	r := &receiver{t: t}
	r.rcv = &webhook.Receiver{Token: "tok-1", Remember: -1, Handle: func(ctx context.Context, d *webhook.Delivery) error {
		path, _ := ctx.Value(pathKey{}).(string)
		r.mu.Lock()
		r.got = append(r.got, d)
		r.paths = append(r.paths, path)
		r.mu.Unlock()
		return nil
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.raw = append(r.raw, req)
		f := r.fail
		r.mu.Unlock()
		if f != nil && f(req) {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if req.URL.Path == "/hooks/redirect" {
			http.Redirect(w, req, "/hooks/target", http.StatusTemporaryRedirect)
			return
		}
		r.rcv.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), pathKey{}, req.URL.Path)))
	})
	r.srv = httptest.NewUnstartedServer(mux)
	if addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		r.srv.Listener.Close()
		r.srv.Listener = ln
	}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	r.url = r.srv.URL
	return r
}

func (r *receiver) deliveries() []*webhook.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*webhook.Delivery(nil), r.got...)
}

// pathKey carries a delivery's URL path to Handle.
type pathKey struct{}

// at are the deliveries handled at one URL path, in arrival order.
func (r *receiver) at(path string) []*webhook.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*webhook.Delivery
	for i, d := range r.got {
		if r.paths[i] == path {
			out = append(out, d)
		}
	}
	return out
}

func (r *receiver) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.raw...)
}

// pushRig is the outbox a harness delivers with.
type pushRig struct {
	ob *outbox.Outbox
}

// withPush grants app1 the receiver's /hooks/ and runs an outbox (fast
// retries) on the harness's SQLite task store, signing with a card key.
func withPush(t *testing.T, rig *pushRig, rcv *receiver, tweak func(c *outbox.Config)) (serverOpt, harnessOpt) {
	t.Helper()
	raw, err := cardsign.Generate()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := cardsign.ParseKeys(raw)
	if err != nil {
		t.Fatal(err)
	}
	so := func(c *a2aserver.Config) {
		c.CardKeys = keys
		rig.ob = openOutbox(t, c, keys, tweak)
		c.Outbox = rig.ob
	}
	ho := func(d *settings.Deployment) { d.Apps[0].PushURLs = []string{rcv.url + "/hooks/"} }
	return so, ho
}

func openOutbox(t *testing.T, c *a2aserver.Config, keys *cardsign.Keys, tweak func(c *outbox.Config)) *outbox.Outbox {
	t.Helper()
	pb := c.Store.(store.PushBackend)
	d := c.Deployment
	oc := outbox.Config{
		Configs:     pb.PushConfigs,
		Policy:      func(owner string) (destPolicy, error) { return a2aserver.PushPolicy(d, owner) },
		Deliver:     outbox.NewDeliverer(nil, keys.SignPush).Deliver,
		BackoffBase: 20 * time.Millisecond, BackoffCap: 200 * time.Millisecond,
		OrderSnooze: 20 * time.Millisecond, PollInterval: 20 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&oc)
	}
	var ob *outbox.Outbox
	closeDB := func() error { return nil }
	var err error
	switch b := c.Store.(type) {
	case store.DB:
		ob, closeDB, err = outbox.OpenSQLite(context.Background(), b.Path(), oc)
	case interface{ Pool() *pgxpool.Pool }:
		ob, err = outbox.OpenPostgres(context.Background(), b.Pool(), oc)
	default:
		t.Fatalf("no outbox for %T", c.Store)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ob.Stop(ctx)
		_ = closeDB()
	})
	return ob
}

func pushCfg(url string) *a2a.PushConfig { return &a2a.PushConfig{URL: url, Token: "tok-1"} }

// Issue 17 (2): the four push config methods, bound to the owner, with
// their limits and the grant.
func TestPushConfigMethods(t *testing.T) {
	rcv := newReceiver(t)
	rig := &pushRig{}
	so, ho := withPush(t, rig, rcv, nil)
	// selfCards: the card names the harness, for the clients of every binding.
	h := newHarnessConfig(t, func(c *a2aserver.Config) { so(c); selfCards(c) }, ho)
	alice, bob := as(h.keyApp1, "alice"), as(h.keyApp1, "bob")
	cl := h.client(h.agentID)

	card := getJSON(t, h, "/agents/"+h.agentID+"/.well-known/agent-card.json")
	if caps, _ := card["capabilities"].(map[string]any); caps["pushNotifications"] != true {
		t.Fatalf("card capabilities %v", card["capabilities"])
	}
	task, err := h.send(alice, textMsg("hello"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := cl.CreateTaskPushConfig(alice, &a2a.PushConfig{TaskID: task.ID, URL: rcv.url + "/hooks/a", Token: "tok-1"})
	if err != nil || created.ID == "" || created.TaskID != task.ID {
		t.Fatalf("create: %+v %v", created, err)
	}
	got, err := cl.GetTaskPushConfig(alice, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
	if err != nil || got.URL != rcv.url+"/hooks/a" || got.Token != "tok-1" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := cl.GetTaskPushConfig(bob, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err == nil {
		t.Fatal("another owner read the config")
	}
	if _, err := cl.CreateTaskPushConfig(bob, &a2a.PushConfig{TaskID: task.ID, URL: rcv.url + "/hooks/b"}); err == nil {
		t.Fatal("another owner added a config to alice's task")
	}
	if err := cl.DeleteTaskPushConfig(bob, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err == nil {
		t.Fatal("another owner deleted on alice's task")
	}
	// Up to ten per task.
	for i := 1; i < store.MaxPushConfigsPerTask; i++ {
		if _, err := cl.CreateTaskPushConfig(alice, &a2a.PushConfig{TaskID: task.ID, URL: rcv.url + "/hooks/n"}); err != nil {
			t.Fatalf("config %d: %v", i+1, err)
		}
	}
	if _, err := cl.CreateTaskPushConfig(alice, &a2a.PushConfig{TaskID: task.ID, URL: rcv.url + "/hooks/n"}); err == nil ||
		!strings.Contains(err.Error(), "at most 10") {
		t.Fatalf("eleventh config: %v", err)
	}
	// Saving an existing id again replaces it, within the limit.
	if _, err := cl.CreateTaskPushConfig(alice, &a2a.PushConfig{TaskID: task.ID, ID: created.ID, URL: rcv.url + "/hooks/again"}); err != nil {
		t.Fatalf("replace: %v", err)
	}
	list, err := cl.ListTaskPushConfigs(alice, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(list) != store.MaxPushConfigsPerTask {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := cl.ListTaskPushConfigs(bob, &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err == nil {
		t.Fatal("another owner listed alice's configs")
	}
	listOverEveryBinding(t, h, task.ID, store.MaxPushConfigsPerTask)
	for range 2 { // idempotent
		if err := cl.DeleteTaskPushConfig(alice, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
			t.Fatalf("delete: %v", err)
		}
	}
	if _, err := cl.GetTaskPushConfig(alice, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err == nil {
		t.Fatal("deleted config still read")
	}
	// Refused at creation, with the reason.
	for _, c := range []struct{ url, token, want string }{
		{"https://elsewhere.invalid/hooks/", "", "outside the push_urls"},
		{rcv.url + "/other/", "", "outside the push_urls"},
		{strings.Replace(rcv.url, "http:", "https:", 1) + "/hooks/", "", "outside the push_urls"},
		{"http://169.254.169.254/latest/", "", "special-purpose"},
		{"http://[::ffff:169.254.169.254]/x", "", "special-purpose"},
		{"http://10.1.2.3/hooks/", "", "internal address"},
		{"ftp://x.invalid/", "", "http:// or https://"},
		{"http://user:pw@x.invalid/", "", "credentials"},
		{rcv.url + "/hooks/" + strings.Repeat("a", 2100), "", "longer than 2048"},
		{rcv.url + "/hooks/", strings.Repeat("t", 513), "longer than 512"},
	} {
		_, err := cl.CreateTaskPushConfig(alice, &a2a.PushConfig{TaskID: task.ID, URL: c.url, Token: c.token})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("create %.60q: %v, want %q", c.url, err, c.want)
		}
	}
	// In SendMessage too: the turn is refused before it starts.
	if _, err := cl.SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("hello"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: pushCfg("http://169.254.169.254/x")}}); err == nil ||
		!strings.Contains(err.Error(), "special-purpose") {
		t.Fatalf("SendMessage with a refused webhook: %v", err)
	}
	// app2 has no grant at all.
	task2, err := h.send(as(h.keyApp2, "carol"), textMsg("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTaskPushConfig(as(h.keyApp2, "carol"), &a2a.PushConfig{TaskID: task2.ID, URL: rcv.url + "/hooks/"}); err == nil {
		t.Fatal("app2 registered a webhook it was not granted")
	}
}

// Issue 17 (4): a background turn with a push config in SendMessage: the
// receiver gets the end, signed, with the token and the A2A media type;
// a turn that pauses for approval pushes INPUT_REQUIRED first, in order.
func TestPushDelivered(t *testing.T) {
	rcv := newReceiver(t)
	rig := &pushRig{}
	so, ho := withPush(t, rig, rcv, nil)
	h := newHarnessConfig(t, so, ho, withApproval(settings.Approval{Tools: []string{"bash"}}))
	keys, err := webhook.NewKeyCache(t.Context(), h.url, webhook.KeyCacheConfig{Refresh: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Err(); err != nil {
		t.Fatalf("the vessel's key set: %v", err)
	}
	// The signature is bound to the URL posted to (aud) and checked.
	rcv.rcv.Keys, rcv.rcv.URL = keys, rcv.url+"/hooks/t"
	alice := as(h.keyApp1, "alice")
	res, err := h.client(h.agentID).SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("#script:twocalls go"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: pushCfg(rcv.url + "/hooks/t")}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	waitFor(t, "the approval push", func() bool { return len(rcv.deliveries()) >= 1 })
	d := rcv.deliveries()[0]
	if d.TaskID != task.ID || d.State != a2a.TaskStateInputRequired || d.KeyID == "" || d.Attempt != 1 {
		t.Fatalf("first delivery %+v", d)
	}
	req := rcv.requests()[0]
	if req.Header.Get("Content-Type") != "application/a2a+json" || req.Header.Get("A2A-Notification-Token") != "tok-1" {
		t.Fatalf("headers %v", req.Header)
	}
	paused, err := h.client(h.agentID).GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	ap := pending(t, paused)
	if _, err := h.send(alice, decide(paused, ap.ApprovalID, verdict("e1", "approve"), verdict("e2", "deny"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the completion push", func() bool { return len(rcv.deliveries()) >= 2 })
	all := rcv.deliveries()
	if len(all) != 2 || all[1].State != a2a.TaskStateCompleted || all[1].ID == all[0].ID {
		t.Fatalf("deliveries %+v", all)
	}
}

// destPolicy keeps the import of dest out of the helpers' signatures.
type destPolicy = dest.Policy

// freePort is a loopback address nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func getJSON(t *testing.T, h *harness, path string) map[string]any {
	t.Helper()
	resp, err := h.httpc.Get(h.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return m
}

// pausedTurns starts n background turns that pause for approval, with a
// push config each, and returns them.
func pausedTurns(t *testing.T, h *harness, n int, url string) []*a2a.Task {
	t.Helper()
	alice := as(h.keyApp1, "alice")
	var out []*a2a.Task
	for range n {
		res, err := h.client(h.agentID).SendMessage(alice, &a2a.SendMessageRequest{Message: textMsg("#script:twocalls go"),
			Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: pushCfg(url)}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.(*a2a.Task))
	}
	for _, task := range out {
		waitFor(t, "the pause", func() bool {
			got, err := h.client(h.agentID).GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
			return err == nil && got.Status.State == a2a.TaskStateInputRequired
		})
	}
	return out
}

// decideAll approves the paused turns.
func decideAll(t *testing.T, h *harness, tasks []*a2a.Task) {
	t.Helper()
	alice := as(h.keyApp1, "alice")
	for _, task := range tasks {
		got, err := h.client(h.agentID).GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		ap := pending(t, got)
		if _, err := h.send(alice, decide(got, ap.ApprovalID, verdict("e1", "approve"), verdict("e2", "approve"))); err != nil {
			t.Fatal(err)
		}
	}
}

// checkInOrder: every task got INPUT_REQUIRED then COMPLETED, each once
// (a repeat only with the same delivery id).
func checkInOrder(t *testing.T, got []*webhook.Delivery, tasks []*a2a.Task) {
	t.Helper()
	for _, task := range tasks {
		var states []a2a.TaskState
		seen := map[string]a2a.TaskState{}
		for _, d := range got {
			if d.TaskID != task.ID {
				continue
			}
			if st, dup := seen[d.ID]; dup {
				if st != d.State {
					t.Fatalf("delivery %s came with %s and %s", d.ID, st, d.State)
				}
				continue
			}
			seen[d.ID] = d.State
			states = append(states, d.State)
		}
		if len(states) != 2 || states[0] != a2a.TaskStateInputRequired || states[1] != a2a.TaskStateCompleted {
			t.Errorf("task %s: pushed %v, want input-required then completed", task.ID, states)
		}
	}
}

// Issue 17 (5): the receiver is down (nothing listens) while turns pause
// and end; once it is up every event arrives, in order per task.
func TestPushReceiverDownThenUp(t *testing.T) {
	addr := freePort(t)
	grant := &receiver{url: "http://" + addr}
	rig := &pushRig{}
	so, ho := withPush(t, rig, grant, nil)
	h := newHarnessConfig(t, so, ho, withApproval(settings.Approval{Tools: []string{"bash"}}))
	tasks := pausedTurns(t, h, 3, grant.url+"/hooks/down")
	decideAll(t, h, tasks)
	// Attempts fail (connection refused) and are retried.
	waitFor(t, "retries", func() bool {
		n, err := rig.ob.Pending(context.Background())
		return err == nil && n == 2*len(tasks)
	})
	time.Sleep(300 * time.Millisecond) // a few refused attempts
	rcv := newReceiverAt(t, addr)
	waitFor(t, "every push", func() bool { return len(rcv.deliveries()) >= 2*len(tasks) })
	checkInOrder(t, rcv.deliveries(), tasks)
	for _, d := range rcv.deliveries() {
		// The later event of each task waits (unattempted) for the first.
		if d.State == a2a.TaskStateInputRequired && d.Attempt < 2 {
			t.Errorf("delivery %s arrived at attempt %d; the receiver was down", d.ID, d.Attempt)
		}
	}
}

// Issue 17 (5): a receiver slower than the timeout: the attempt is cut
// off and retried with the same delivery id.
func TestPushSlowReceiver(t *testing.T) {
	rcv := newReceiver(t)
	var once sync.Once
	first := make(chan string, 1)
	rcv.fail = func(r *http.Request) bool {
		slow := false
		once.Do(func() { slow = true })
		if slow {
			first <- r.Header.Get(webhook.DeliveryIDHeader)
			// Read the body, so the server notices the vessel hanging up,
			// and hold the answer until it does.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return true
		}
		return false
	}
	rig := &pushRig{}
	so, ho := withPush(t, rig, rcv, func(c *outbox.Config) { c.Timeout = outbox.MinTimeout })
	h := newHarnessConfig(t, so, ho)
	_, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hello"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: pushCfg(rcv.url + "/hooks/slow")}})
	if err != nil {
		t.Fatal(err)
	}
	id := <-first
	deadline := time.Now().Add(2 * outbox.MaxTimeout)
	for len(rcv.deliveries()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := rcv.deliveries()
	if len(got) != 1 || got[0].ID != id || got[0].Attempt != 2 || got[0].State != a2a.TaskStateCompleted {
		t.Fatalf("deliveries %+v, want attempt 2 of %s", got, id)
	}
}

// Issue 17 (5): a redirect is not followed; the delivery is a dead letter
// the operator can list.
func TestPushRedirectNotFollowed(t *testing.T) {
	rcv := newReceiver(t)
	rig := &pushRig{}
	so, ho := withPush(t, rig, rcv, nil)
	h := newHarnessConfig(t, so, ho)
	_, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hello"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: pushCfg(rcv.url + "/hooks/redirect")}})
	if err != nil {
		t.Fatal(err)
	}
	var dead []outbox.Dead
	waitFor(t, "the dead letter", func() bool {
		dead, err = rig.ob.Dead(context.Background(), 10)
		return err == nil && len(dead) == 1
	})
	if !strings.Contains(dead[0].LastError, "redirects are not followed") || dead[0].State != string(a2a.TaskStateCompleted) {
		t.Fatalf("dead letter %+v", dead[0])
	}
	for _, r := range rcv.requests() {
		if r.URL.Path != "/hooks/redirect" {
			t.Fatalf("redirect followed to %s", r.URL.Path)
		}
	}
	if len(rcv.requests()) != 1 {
		t.Fatalf("%d requests, want 1 (a redirect is permanent)", len(rcv.requests()))
	}
}

// Issue 17 (5): two replicas on one PostgreSQL, each running an outbox:
// turns started on both are all pushed; a repeat only with the same
// delivery id.
func TestPushTwoReplicas(t *testing.T) {
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	postgres.Register()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "vt_push_" + hex.EncodeToString(b[:])
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	t.Cleanup(func() { dropSchema(t, dsn, schema) })
	url := dsn + sep + "vessel_schema=" + schema
	rcv := newReceiver(t)
	var replicas []*harness
	var rigs []*pushRig
	var tasks []*a2a.Task
	defer func() {
		if t.Failed() {
			for _, r := range rigs {
				n, err := r.ob.Pending(context.Background())
				dead, derr := r.ob.Dead(context.Background(), 5)
				t.Logf("pending %d %v; dead %+v %v; got %d", n, err, dead, derr, len(rcv.deliveries()))
				h := replicas[0]
				l, lerr := h.client(h.agentID).ListTaskPushConfigs(as(h.keyApp1, "alice"), &a2a.ListTaskPushConfigRequest{TaskID: tasks[0].ID})
				tk, gerr := h.client(h.agentID).GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: tasks[0].ID})
				t.Logf("configs %+v %v; task %v %v", l, lerr, tk.Status.State, gerr)
				for _, e := range h.logs.All() {
					if e.Level >= zap.WarnLevel {
						t.Logf("log: %s %v", e.Message, e.ContextMap())
					}
				}
			}
		}
	}()
	for range 2 {
		rig := &pushRig{}
		rigs = append(rigs, rig)
		so, ho := withPush(t, rig, rcv, nil)
		replicas = append(replicas, newHarnessStore(t, url, so, ho))
	}
	const n = 20
	for i := range n {
		h := replicas[i%2]
		res, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hello"),
			Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: pushCfg(rcv.url + "/hooks/r")}})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, res.(*a2a.Task))
	}
	waitFor(t, "every push", func() bool {
		seen := map[a2a.TaskID]bool{}
		for _, d := range rcv.deliveries() {
			seen[d.TaskID] = true
		}
		return len(seen) == n
	})
	byID := map[string]a2a.TaskID{}
	perTask := map[a2a.TaskID]map[string]bool{}
	for _, d := range rcv.deliveries() {
		if prev, ok := byID[d.ID]; ok && prev != d.TaskID {
			t.Fatalf("delivery id %s used for two tasks", d.ID)
		}
		byID[d.ID] = d.TaskID
		if perTask[d.TaskID] == nil {
			perTask[d.TaskID] = map[string]bool{}
		}
		perTask[d.TaskID][d.ID] = true
		if d.State != a2a.TaskStateCompleted {
			t.Errorf("task %s pushed %s", d.TaskID, d.State)
		}
	}
	for _, task := range tasks {
		if len(perTask[task.ID]) != 1 {
			t.Errorf("task %s: %d distinct deliveries, want 1", task.ID, len(perTask[task.ID]))
		}
	}
}

// listOverEveryBinding lists the task's push configs (alice's) over
// HTTP+JSON, gRPC and A2A 0.3 JSON-RPC as well, against the real server:
// each binding must reach the same store (outbox.Configs) under its own
// name for the call, and refuse another owner.
func listOverEveryBinding(t *testing.T, h *harness, task a2a.TaskID, want int) {
	t.Helper()
	alice, bob := as(h.keyApp1, "alice"), as(h.keyApp1, "bob")
	for _, b := range []a2a.TransportProtocol{a2a.TransportProtocolHTTPJSON, a2a.TransportProtocolGRPC} {
		cl := h.cardClient(h.agentID, b)
		list, err := cl.ListTaskPushConfigs(alice, &a2a.ListTaskPushConfigRequest{TaskID: task})
		if err != nil || len(list) != want {
			t.Fatalf("%s list: %d configs, %v; want %d", b, len(list), err, want)
		}
		for _, c := range list {
			if c.TaskID != task || c.ID == "" || c.URL == "" {
				t.Fatalf("%s list: config %+v", b, c)
			}
		}
		if _, err := cl.ListTaskPushConfigs(bob, &a2a.ListTaskPushConfigRequest{TaskID: task}); err == nil {
			t.Fatalf("%s: another owner listed alice's configs", b)
		}
	}
	v03 := `{"jsonrpc":"2.0","id":"l1","method":"tasks/pushNotificationConfig/list","params":{"id":"` + string(task) + `"}}`
	code, _, body := h.rawPost("/agents/"+h.agentID+"/a2a", v03, appHdr(h.keyApp1, "alice"))
	var res struct {
		Result []struct {
			TaskID string `json:"taskId"`
			Config struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			} `json:"pushNotificationConfig"`
		} `json:"result"`
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(body, &res); err != nil || code != http.StatusOK || res.Error != nil || len(res.Result) != want {
		t.Fatalf("0.3 tasks/pushNotificationConfig/list: HTTP %d, %d configs (%v), want %d: %.300s", code, len(res.Result), err, want, body)
	}
	for _, c := range res.Result {
		if c.TaskID != string(task) || c.Config.ID == "" || c.Config.URL == "" {
			t.Fatalf("0.3 list: config %+v", c)
		}
	}
	code, _, body = h.rawPost("/agents/"+h.agentID+"/a2a", v03, appHdr(h.keyApp1, "bob"))
	if code == http.StatusOK && !bytes.Contains(body, []byte(`"error"`)) {
		t.Fatalf("0.3: another owner listed alice's configs: %.300s", body)
	}
}
