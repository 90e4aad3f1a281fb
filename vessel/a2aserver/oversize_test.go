package a2aserver_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// historyOf is a history of n user and assistant messages.
func historyOf(n int) map[string]any {
	msgs := make([]any, n)
	for i := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs[i] = map[string]any{"role": role, "content": "m"}
	}
	return map[string]any{"version": 1, "messages": msgs}
}

// TestOversizeHistoryRejectedOnEveryBinding: a history over the cap, as a
// raw part or a data part, is a task in TASK_STATE_REJECTED whose message
// says why, answered, streamed and stored as any rejected turn, on every
// binding (JSON-RPC and HTTP+JSON refuse it at the front, before the SDK
// decodes it; gRPC in transcript.Parse, counting the same way); exactly
// the cap is a turn like any other.
func TestOversizeHistoryRejectedOnEveryBinding(t *testing.T) {
	h := newHarnessConfig(t, selfCards)
	want := "the history is malformed: the history holds more than 2000 messages; at most 2000 are allowed"
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			h.t = t
			cl := h.cardClient("field-guide", b)
			alice := as(h.keyApp1, "alice")
			for name, part := range map[string]*a2a.Part{
				"raw 10000":  transcriptPart(historyOf(10_000)),
				"raw 2001":   transcriptPart(historyOf(transcript.MaxMessages + 1)),
				"data 10000": {Content: a2a.Data{Value: historyOf(10_000)}, MediaType: transcript.MediaType},
			} {
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("and now?"), part)
				res, err := cl.SendMessage(alice, &a2a.SendMessageRequest{Message: msg})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				task, ok := res.(*a2a.Task)
				if !ok || task.Status.State != a2a.TaskStateRejected || task.Status.Message == nil || task.Status.Message.Parts[0].Text() != want {
					t.Fatalf("%s: %#v", name, res)
				}
				stored, err := cl.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID})
				if err != nil || stored.Status.State != a2a.TaskStateRejected || stored.Status.Message.Parts[0].Text() != want {
					t.Fatalf("%s: stored %v %#v", name, err, stored)
				}
				var last a2a.Event
				for ev, err := range cl.SendStreamingMessage(alice, &a2a.SendMessageRequest{Message: msg}) {
					if err != nil {
						t.Fatalf("%s: stream: %v", name, err)
					}
					last = ev
				}
				if su, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || su.Status.State != a2a.TaskStateRejected || su.Status.Message.Parts[0].Text() != want {
					t.Fatalf("%s: last frame %#v", name, last)
				}
			}
			for name, part := range map[string]*a2a.Part{
				"raw 2000":  transcriptPart(historyOf(transcript.MaxMessages)),
				"data 2000": {Content: a2a.Data{Value: historyOf(transcript.MaxMessages)}, MediaType: transcript.MediaType},
			} {
				res, err := cl.SendMessage(alice, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("and now?"), part)})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("%s: %#v", name, res)
				}
			}
		})
	}
}

// TestOversizeMarkNotForgeable: what the front leaves of a refused
// history (raw "", data {}) reads, when a caller sends it, as what it is:
// an empty or versionless history, not one over the cap.
func TestOversizeMarkNotForgeable(t *testing.T) {
	h := newHarness(t)
	cl := h.client("field-guide")
	for name, c := range map[string]struct {
		part *a2a.Part
		want string
	}{
		"raw empty":  {&a2a.Part{Content: a2a.Raw{}, MediaType: transcript.MediaType}, "not a valid transcript envelope"},
		"data empty": {&a2a.Part{Content: a2a.Data{Value: map[string]any{}}, MediaType: transcript.MediaType}, "version must be 1"},
	} {
		res, err := cl.SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"), c.part)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateRejected || !strings.Contains(task.Status.Message.Parts[0].Text(), c.want) ||
			strings.Contains(task.Status.Message.Parts[0].Text(), "2000") {
			t.Errorf("%s: %s %v", name, task.Status.State, task.Status.Message.Parts[0].Text())
		}
	}
}

// TestOversizeRefusedAtTheFront: a raw history whose base64 breaks after
// its 2,001st message is refused for its length on JSON-RPC and HTTP+JSON:
// only the front check answers so (the SDK, decoding the whole string,
// answers 400 for the base64), so the test fails if either front check is
// gone.
func TestOversizeRefusedAtTheFront(t *testing.T) {
	h := newHarness(t)
	env, err := json.Marshal(historyOf(10_000))
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.StdEncoding.EncodeToString(env)
	params := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"and now?"},{"mediaType":"` + transcript.MediaType +
		`","raw":"` + enc[:len(enc)-4] + `!!!!"}]}}`
	hdr := appHdr(h.keyApp1, "alice")
	for name, c := range map[string]struct{ path, body string }{
		"HTTP+JSON": {"/agents/field-guide" + a2aserver.RESTPath + "/message:send", params},
		"JSON-RPC":  {"/agents/field-guide", `{"jsonrpc":"2.0","id":"r","method":"SendMessage","params":` + params + `}`},
	} {
		status, _, body := h.rawPost(c.path, c.body, hdr)
		if status != http.StatusOK || !strings.Contains(string(body), `"TASK_STATE_REJECTED"`) ||
			!strings.Contains(string(body), "the history holds more than 2000 messages") {
			t.Errorf("%s: %d %.400s", name, status, body)
		}
	}
}

// TestHistoryNamingMessagesTwice: a raw history naming messages twice is
// refused as malformed; a data one reaches the turn as the SDK decoded it,
// with the last list only (docs/a2a.md).
func TestHistoryNamingMessagesTwice(t *testing.T) {
	h := newHarness(t)
	last := `"messages":[{"role":"user","content":"hi"}]}`
	over, err := json.Marshal(historyOf(transcript.MaxMessages + 1))
	if err != nil {
		t.Fatal(err)
	}
	within := `{"version":1,"messages":[{"role":"user","content":"a"}],` + last
	twice := strings.TrimSuffix(string(over), "}") + "," + last
	send := func(part string) string {
		status, _, body := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":"r","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"and now?"},`+part+`]}}}`, appHdr(h.keyApp1, "alice"))
		if status != http.StatusOK {
			t.Fatalf("%d %.300s", status, body)
		}
		return string(body)
	}
	raw := func(env string) string {
		return `{"mediaType":"` + transcript.MediaType + `","raw":"` + base64.StdEncoding.EncodeToString([]byte(env)) + `"}`
	}
	if body := send(raw(within)); !strings.Contains(body, `"TASK_STATE_REJECTED"`) || !strings.Contains(body, "the history names messages more than once") {
		t.Errorf("raw, both within the cap: %.400s", body)
	}
	if body := send(raw(twice)); !strings.Contains(body, `"TASK_STATE_REJECTED"`) || !strings.Contains(body, "more than 2000 messages") {
		t.Errorf("raw, the first over the cap: %.400s", body)
	}
	if body := send(`{"mediaType":"` + transcript.MediaType + `","data":` + twice + `}`); !strings.Contains(body, `"TASK_STATE_COMPLETED"`) {
		t.Errorf("data, the last within the cap: %.400s", body)
	}
}
