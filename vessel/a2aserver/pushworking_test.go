package a2aserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/vessel/client/webhook"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
)

// asWorking is as, with the push-working extension requested.
func asWorking(key, user string) context.Context {
	return a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{
		"Authorization": {"Bearer " + key}, "X-Vessel-User": {user}, "A2A-Extensions": {store.PushWorkingURI}})
}

// rawRPC posts one A2A 1.0 JSON-RPC call and returns the response's
// A2A-Extensions header and result.
func rawRPC(t *testing.T, h *harness, hdr http.Header, method string, params any) (string, json.RawMessage) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, h.url+"/agents/"+h.agentID, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := h.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Error != nil {
		t.Fatalf("%s: %v %v", method, err, out.Error)
	}
	return resp.Header.Get("A2A-Extensions"), out.Result
}

// workingEvent is the vessel.event of a WORKING delivery ("" for others).
func workingEvent(d *webhook.Delivery) string {
	ev, ok := d.Event.(*a2a.TaskStatusUpdateEvent)
	if !ok || d.State != a2a.TaskStateWorking {
		return ""
	}
	s, _ := ev.Metadata["vessel.event"].(string)
	return s
}

// checkWorkingThen checks one config's deliveries of one task: WORKING
// updates of a turn, starting with turn.started, each tool.started before
// its tool.finished, then want as the last; each delivery once.
func checkWorkingThen(t *testing.T, name string, got []*webhook.Delivery, want a2a.TaskState, firstTurn bool, wantFinished int) {
	t.Helper()
	finished := 0
	defer func() {
		if !t.Failed() && finished != wantFinished {
			t.Fatalf("%s: %d tool.finished pushed, want %d", name, finished, wantFinished)
		}
	}()
	if len(got) < 2 {
		t.Fatalf("%s: %d deliveries, want WORKING ones and then %s: %+v", name, len(got), want, got)
	}
	ids := map[string]bool{}
	started := map[string]bool{}
	for i, d := range got {
		if ids[d.ID] {
			t.Fatalf("%s: delivery %s twice", name, d.ID)
		}
		ids[d.ID] = true
		if i == len(got)-1 {
			if d.State != want {
				t.Fatalf("%s: last delivery is %s, want %s", name, d.State, want)
			}
			break
		}
		ev := workingEvent(d)
		if ev == "" {
			t.Fatalf("%s: delivery %d is %s (%T) before the end", name, i, d.State, d.Event)
		}
		if i == 0 && firstTurn && ev != "turn.started" {
			t.Fatalf("%s: first WORKING update is %s, want turn.started", name, ev)
		}
		data := eventData(d)
		switch ev {
		case "tool.started":
			started[data["call_id"].(string)] = true
		case "tool.finished":
			finished++
			if !started[data["call_id"].(string)] {
				t.Fatalf("%s: tool.finished of %v before its tool.started", name, data["call_id"])
			}
		}
	}
}

// eventData is the event of a WORKING delivery (its message's data part).
func eventData(d *webhook.Delivery) map[string]any {
	ev := d.Event.(*a2a.TaskStatusUpdateEvent)
	if ev.Status.Message == nil || len(ev.Status.Message.Parts) == 0 {
		return nil
	}
	if dp, ok := ev.Status.Message.Parts[0].Content.(a2a.Data); ok {
		m, _ := dp.Value.(map[string]any)
		return m
	}
	return nil
}

// Issue 17: the push-working extension. A config registered with it
// (SendMessage, CreateTaskPushNotificationConfig) gets every WORKING
// update of the task, then the pause, then the follow-up turn's, then the
// end, in order; the response echoes the extension; a config registered
// without it on the same task gets only the pause and the end; Get
// returns the config unchanged; a task whose caller asked for the
// extension without a config, and got one registered without it later,
// gets only its end.
func TestPushWorkingExtension(t *testing.T) { testPushWorking(t, "") }

// TestPushWorkingExtensionPostgres is TestPushWorkingExtension on
// PostgreSQL (deploy/postgres-test.sh).
func TestPushWorkingExtensionPostgres(t *testing.T) {
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	postgres.Register()
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "vt_pushw_" + hex.EncodeToString(b[:])
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	t.Cleanup(func() { dropSchema(t, dsn, schema) })
	testPushWorking(t, dsn+sep+"vessel_schema="+schema)
}

// streamRPC sends SendStreamingMessage, reads the stream to its end and
// returns the A2A-Extensions and Content-Type response headers.
func streamRPC(t *testing.T, h *harness, hdr http.Header, params any) (string, string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, h.url+"/agents/"+h.agentID, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := h.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) {
		t.Fatalf("SendStreamingMessage: HTTP %d %v %.300s", resp.StatusCode, err, b)
	}
	return resp.Header.Get("A2A-Extensions"), resp.Header.Get("Content-Type")
}

// checkCardDeclaresPushWorking: the agent's card lists the push-working
// extension, with a description, not required.
func checkCardDeclaresPushWorking(t *testing.T, h *harness) {
	t.Helper()
	card := getJSON(t, h, "/agents/"+h.agentID+"/.well-known/agent-card.json")
	exts, _ := card["capabilities"].(map[string]any)["extensions"].([]any)
	found := false
	for _, e := range exts {
		m := e.(map[string]any)
		if m["uri"] == store.PushWorkingURI {
			found = true
			if req, _ := m["required"].(bool); req || m["description"] == "" {
				t.Fatalf("card extension %v", m)
			}
		}
	}
	if !found {
		t.Fatalf("card extensions %v lack %s", exts, store.PushWorkingURI)
	}
}

// checkV03PushWorkingEcho: a 0.3 message/send registering a config at
// hook, asking for the extension with X-A2A-Extensions, is answered in it.
func checkV03PushWorkingEcho(t *testing.T, h *harness, hook string) {
	t.Helper()
	v03 := `{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"kind":"message","messageId":"m-echo-03","role":"user","parts":[{"kind":"text","text":"hello"}]},` +
		`"configuration":{"blocking":false,"pushNotificationConfig":{"url":"` + hook + `","token":"tok-1"}}}}`
	if code, hdr, b := h.rawPost("/agents/"+h.agentID+"/a2a", v03, map[string]string{"Authorization": "Bearer " + h.keyApp1,
		"X-Vessel-User": "alice", "X-A2A-Extensions": store.PushWorkingURI}); code != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) ||
		!strings.Contains(hdr.Get("X-A2A-Extensions"), store.PushWorkingURI) {
		t.Fatalf("0.3 message/send with a config: HTTP %d, X-A2A-Extensions %q, %.300s", code, hdr.Get("X-A2A-Extensions"), b)
	}
}

func testPushWorking(t *testing.T, storeURL string) {
	rcv := newReceiver(t)
	rig := &pushRig{}
	so, ho := withPush(t, rig, rcv, nil)
	h := newHarnessStore(t, storeURL, so, ho, withApproval(settings.Approval{Tools: []string{"bash"}}))
	alice, aliceW := as(h.keyApp1, "alice"), asWorking(h.keyApp1, "alice")
	cl := h.client(h.agentID)

	// The card declares the extension, not required.
	checkCardDeclaresPushWorking(t, h)

	// A turn with a config registered in SendMessage with the extension.
	cfgW := pushCfg(rcv.url + "/hooks/w")
	cfgW.ID = "w"
	res, err := cl.SendMessage(aliceW, &a2a.SendMessageRequest{Message: textMsg("#script:twocalls go"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: cfgW}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	waitFor(t, "the pause pushed", func() bool {
		got := rcv.at("/hooks/w")
		return len(got) > 0 && got[len(got)-1].State == a2a.TaskStateInputRequired
	})
	checkWorkingThen(t, "first turn, /hooks/w", rcv.at("/hooks/w"), a2a.TaskStateInputRequired, true, 0)
	firstTurn := len(rcv.at("/hooks/w"))

	// While paused: a second config with the extension (its activation
	// echoed), a third without (nothing echoed).
	auth := http.Header{"Authorization": {"Bearer " + h.keyApp1}, "X-Vessel-User": {"alice"}}
	authW := auth.Clone()
	authW.Set("A2A-Extensions", "urn:example:other:v1, "+store.PushWorkingURI)
	echo, _ := rawRPC(t, h, authW, "CreateTaskPushNotificationConfig",
		map[string]any{"taskId": task.ID, "id": "w2", "url": rcv.url + "/hooks/w2", "token": "tok-1"})
	if !strings.Contains(echo, store.PushWorkingURI) {
		t.Fatalf("A2A-Extensions answered %q, want the extension activated", echo)
	}
	echo, _ = rawRPC(t, h, auth, "CreateTaskPushNotificationConfig",
		map[string]any{"taskId": task.ID, "id": "p", "url": rcv.url + "/hooks/p", "token": "tok-1"})
	if echo != "" {
		t.Fatalf("A2A-Extensions answered %q to a call not asking for it", echo)
	}
	// SendMessage registering a config with the extension echoes it too;
	// without a config nothing is activated.
	echo, _ = rawRPC(t, h, authW, "SendMessage", map[string]any{
		"message": map[string]any{"messageId": "m-echo", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}},
		"configuration": map[string]any{"returnImmediately": true,
			"taskPushNotificationConfig": map[string]any{"url": rcv.url + "/hooks/echo", "token": "tok-1"}}})
	if !strings.Contains(echo, store.PushWorkingURI) {
		t.Fatalf("SendMessage with a config: A2A-Extensions answered %q", echo)
	}
	waitFor(t, "the end pushed to /hooks/echo", func() bool {
		got := rcv.at("/hooks/echo")
		return len(got) > 0 && got[len(got)-1].State == a2a.TaskStateCompleted
	})
	checkWorkingThen(t, "a turn without a pause, /hooks/echo", rcv.at("/hooks/echo"), a2a.TaskStateCompleted, true, 0)
	// A streamed SendStreamingMessage registering one echoes it as well:
	// the status is sent with the first event, after the config was saved.
	if echo, ct := streamRPC(t, h, authW, map[string]any{
		"message": map[string]any{"messageId": "m-echo-s", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}},
		"configuration": map[string]any{
			"taskPushNotificationConfig": map[string]any{"url": rcv.url + "/hooks/echo-s", "token": "tok-1"}}}); !strings.Contains(echo, store.PushWorkingURI) || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("SendStreamingMessage with a config: A2A-Extensions %q, Content-Type %q", echo, ct)
	}
	// A 0.3 caller asks with X-A2A-Extensions and is answered in it.
	checkV03PushWorkingEcho(t, h, rcv.url+"/hooks/echo-03")
	if echo, _ := streamRPC(t, h, authW, map[string]any{
		"message": map[string]any{"messageId": "m-echo-s2", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}}}); echo != "" {
		t.Fatalf("SendStreamingMessage without a config: A2A-Extensions %q", echo)
	}
	echo, _ = rawRPC(t, h, authW, "SendMessage", map[string]any{
		"message":       map[string]any{"messageId": "m-echo2", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hello"}}},
		"configuration": map[string]any{"returnImmediately": true}})
	if echo != "" {
		t.Fatalf("SendMessage without a config: A2A-Extensions answered %q", echo)
	}
	// Get returns the A2A config alone.
	_, got := rawRPC(t, h, authW, "GetTaskPushNotificationConfig", map[string]any{"taskId": task.ID, "id": "w"})
	if bytes.Contains(got, []byte(store.WorkingMember)) || !bytes.Contains(got, []byte("/hooks/w")) {
		t.Fatalf("GetTaskPushNotificationConfig: %s", got)
	}
	list, err := cl.ListTaskPushConfigs(alice, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(list) != 3 {
		t.Fatalf("list %+v %v", list, err)
	}

	// The follow-up turn.
	paused, err := cl.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	ap := pending(t, paused)
	if _, err := h.send(alice, decide(paused, ap.ApprovalID, verdict("e1", "approve"), verdict("e2", "approve"))); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/hooks/w", "/hooks/w2", "/hooks/p"} {
		waitFor(t, "the end pushed to "+p, func() bool {
			got := rcv.at(p)
			return len(got) > 0 && got[len(got)-1].State == a2a.TaskStateCompleted
		})
	}
	checkWorkingThen(t, "second turn, /hooks/w", rcv.at("/hooks/w")[firstTurn:], a2a.TaskStateCompleted, false, 3)
	checkWorkingThen(t, "second turn, /hooks/w2", rcv.at("/hooks/w2"), a2a.TaskStateCompleted, false, 3)
	if ws, w2 := len(rcv.at("/hooks/w"))-firstTurn, len(rcv.at("/hooks/w2")); ws != w2 {
		t.Fatalf("the follow-up turn pushed %d to w, %d to w2", ws, w2)
	}
	states := func(ds []*webhook.Delivery) []a2a.TaskState {
		var out []a2a.TaskState
		for _, d := range ds {
			out = append(out, d.State)
		}
		return out
	}
	if got := states(rcv.at("/hooks/p")); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateCompleted}) {
		t.Fatalf("the config without the extension got %v", got)
	}

	// The extension asked for on a message without a config, the config
	// registered later without it: only the end.
	res, err = cl.SendMessage(aliceW, &a2a.SendMessageRequest{Message: textMsg("#script:twocalls go"),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	task2 := res.(*a2a.Task)
	waitFor(t, "the second task's pause", func() bool {
		got, err := cl.GetTask(alice, &a2a.GetTaskRequest{ID: task2.ID})
		return err == nil && got.Status.State == a2a.TaskStateInputRequired
	})
	if _, err := cl.CreateTaskPushConfig(alice, &a2a.PushConfig{TaskID: task2.ID, ID: "q", URL: rcv.url + "/hooks/q", Token: "tok-1"}); err != nil {
		t.Fatal(err)
	}
	paused, err = cl.GetTask(alice, &a2a.GetTaskRequest{ID: task2.ID})
	if err != nil {
		t.Fatal(err)
	}
	ap = pending(t, paused)
	if _, err := h.send(alice, decide(paused, ap.ApprovalID, verdict("e1", "approve"), verdict("e2", "approve"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the end pushed to /hooks/q", func() bool { return len(rcv.at("/hooks/q")) > 0 })
	if got := states(rcv.at("/hooks/q")); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateCompleted}) {
		t.Fatalf("a config registered without the extension got %v", got)
	}
}
