package a2aserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/jackc/pgx/v5"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/store/postgres"
	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// artifactSummary describes artifacts by name, part media types and bytes,
// ignoring their ids (two turns get different ones).
func artifactSummary(t *testing.T, arts []*a2a.Artifact) []string {
	t.Helper()
	var out []string
	for _, a := range arts {
		var parts []string
		for _, p := range a.Parts {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p.MediaType+"="+string(b))
		}
		out = append(out, a.Name+"["+strings.Join(parts, " ")+"]")
	}
	return out
}

// streamedArtifacts merges a stream's artifact frames as a client does.
func streamedArtifacts(evs []a2a.Event) []*a2a.Artifact {
	var arts []*a2a.Artifact
	for _, ev := range evs {
		au, ok := ev.(*a2a.TaskArtifactUpdateEvent)
		if !ok {
			continue
		}
		if au.Append {
			for _, a := range arts {
				if a.ID == au.Artifact.ID {
					a.Parts = append(a.Parts, au.Artifact.Parts...)
				}
			}
			continue
		}
		cp := *au.Artifact
		arts = append(arts, &cp)
	}
	return arts
}

// TestSendMessageReturnsStreamedArtifacts (issue 14, defect 1): SendMessage's
// finished task carries the transcript and files the stream delivers, while
// the stored task keeps only the answer.
func TestSendMessageReturnsStreamedArtifacts(t *testing.T) {
	h := newHarness(t)
	ctx := as(h.keyApp1, "alice")
	cfg := &a2a.SendMessageConfig{AcceptedOutputModes: []string{"text/markdown", transcript.MediaType, "image/png", "text/csv"}}
	for _, text := range []string{"#script:files", "#script:tool"} {
		evs, err := h.stream(ctx, "field-guide", &a2a.SendMessageRequest{Message: textMsg(text), Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		want := artifactSummary(t, streamedArtifacts(evs))
		res, err := h.client("field-guide").SendMessage(ctx, &a2a.SendMessageRequest{Message: textMsg(text), Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("%s: result %T %+v", text, res, res)
		}
		got := artifactSummary(t, task.Artifacts)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: SendMessage artifacts\n%s\nstreamed\n%s", text, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(strings.Join(got, " "), "transcript[") {
			t.Fatalf("%s: no transcript: %v", text, got)
		}
		stored, err := h.client("field-guide").GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(stored.Artifacts) != 1 || stored.Artifacts[0].Name != "answer" {
			t.Fatalf("%s: stored artifacts %v", text, artifactSummary(t, stored.Artifacts))
		}
	}
	// Without the transcript type, no transcript either way.
	res, err := h.client("field-guide").SendMessage(ctx, &a2a.SendMessageRequest{Message: textMsg("#script:tool")})
	if err != nil {
		t.Fatal(err)
	}
	if got := artifactSummary(t, res.(*a2a.Task).Artifacts); len(got) != 1 || !strings.HasPrefix(got[0], "answer[") {
		t.Fatalf("artifacts without the transcript type: %v", got)
	}
}

// listTasks calls ListTasks over JSON-RPC.
func (h *harness) listTasks(t *testing.T, user, params string) []map[string]any {
	t.Helper()
	status, _, b := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":"l","method":"ListTasks","params":`+params+`}`, appHdr(h.keyApp1, user))
	var res struct {
		Result struct {
			Tasks []map[string]any `json:"tasks"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(b, &res); status != 200 || err != nil || res.Error != nil {
		t.Fatalf("ListTasks %s: %d %s", params, status, b)
	}
	return res.Result.Tasks
}

func stateOf(task map[string]any) string {
	st, _ := task["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

// TestListTasksShowsRunningState (defect 3): ListTasks agrees with GetTask
// while a turn runs, and its status filter finds the running task.
func TestListTasksShowsRunningState(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { listTasksShowsRunningState(t, newHarness(t)) })
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv("VESSEL_TEST_POSTGRES")
		if dsn == "" {
			t.Skip("VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
		}
		postgres.Register()
		var b [6]byte
		_, _ = rand.Read(b[:])
		schema := "vt_list_" + hex.EncodeToString(b[:])
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		t.Cleanup(func() { dropSchema(t, dsn, schema) }) // after the harness closes the store
		h := newHarnessStore(t, dsn+sep+"vessel_schema="+schema, nil)
		listTasksShowsRunningState(t, h)
	})
}

func listTasksShowsRunningState(t *testing.T, h *harness) {
	ctx, cancel := context.WithCancel(as(h.keyApp1, "alice"))
	defer cancel()
	cl := h.client("field-guide")
	var id a2a.TaskID
	working := false
	for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMsg("#script:slowtext")}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			id = task.ID
		}
		if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == a2a.TaskStateWorking {
			working = true
			break
		}
	}
	if !working {
		t.Fatal("no working status")
	}
	got, err := cl.GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("GetTask: %v %v", got, err)
	}
	all := h.listTasks(t, "alice", `{}`)
	if len(all) != 1 || all[0]["id"] != string(id) || stateOf(all[0]) != "TASK_STATE_WORKING" {
		t.Fatalf("ListTasks: %v", all)
	}
	if w := h.listTasks(t, "alice", `{"status":"TASK_STATE_WORKING"}`); len(w) != 1 || w[0]["id"] != string(id) {
		t.Fatalf("ListTasks status=WORKING: %v", w)
	}
	if s := h.listTasks(t, "alice", `{"status":"TASK_STATE_SUBMITTED"}`); len(s) != 0 {
		t.Fatalf("ListTasks status=SUBMITTED: %v", s)
	}
	if o := h.listTasks(t, "bob", `{}`); len(o) != 0 {
		t.Fatalf("bob lists alice's task: %v", o)
	}
	// After the end, the final state, listed and filtered.
	waitFor(t, "the turn to end", func() bool {
		got, err := cl.GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: id})
		return err == nil && got.Status.State == a2a.TaskStateCompleted
	})
	if c := h.listTasks(t, "alice", `{"status":"TASK_STATE_COMPLETED"}`); len(c) != 1 || stateOf(c[0]) != "TASK_STATE_COMPLETED" {
		t.Fatalf("ListTasks status=COMPLETED: %v", c)
	}
	if w := h.listTasks(t, "alice", `{"status":"TASK_STATE_WORKING"}`); len(w) != 0 {
		t.Fatalf("ListTasks status=WORKING after the end: %v", w)
	}
}

// rpcCode posts a body and returns the JSON-RPC error code (0 for none).
func (h *harness) rpcCode(t *testing.T, path, body string) int {
	t.Helper()
	_, _, b := h.rawPost(path, body, appHdr(h.keyApp1, "alice"))
	var a struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		// A stream: its one frame is the error.
		if events, _ := sse.ReadAll(bytes.NewReader(b), 1<<20); len(events) > 0 {
			_ = json.Unmarshal(events[0], &a)
		}
	}
	if a.Error == nil {
		return 0
	}
	return a.Error.Code
}

// TestCancelAlreadyCanceledTask (defect 4): a second CancelTask answers
// TaskNotCancelable, over 1.0 and 0.3.
func TestCancelAlreadyCanceledTask(t *testing.T) {
	h := newHarness(t)
	evs := cancelMidTurn(t, h, "#script:slowtext", func(evs []a2a.Event) bool { return len(evs) > 1 })
	id := evs[0].(*a2a.Task).ID
	_, err := h.client("field-guide").CancelTask(as(h.keyApp1, "alice"), &a2a.CancelTaskRequest{ID: id})
	if !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("second CancelTask: %v", err)
	}
	if code := h.rpcCode(t, "/agents/field-guide", `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"`+string(id)+`"}}`); code != -32002 {
		t.Fatalf("CancelTask code %d", code)
	}
	if code := h.rpcCode(t, "/agents/field-guide/a2a", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"`+string(id)+`"}}`); code != -32002 {
		t.Fatalf("tasks/cancel code %d", code)
	}
	// The task stays as it was.
	got, err := h.client("field-guide").GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask: %v %v", got, err)
	}
}

// TestSubscribeToFinishedTask (defect 5): SubscribeToTask and 0.3
// tasks/resubscribe on a finished task answer UnsupportedOperation.
func TestSubscribeToFinishedTask(t *testing.T) {
	h := newHarness(t)
	res, err := h.client("field-guide").SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hi")})
	if err != nil {
		t.Fatal(err)
	}
	id := string(res.(*a2a.Task).ID)
	for ev, err := range h.client("field-guide").SubscribeToTask(as(h.keyApp1, "alice"), &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(id)}) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("SubscribeToTask: %v %v", ev, err)
		}
		break
	}
	if code := h.rpcCode(t, "/agents/field-guide", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`); code != -32004 {
		t.Fatalf("SubscribeToTask code %d", code)
	}
	if code := h.rpcCode(t, "/agents/field-guide/a2a", `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`); code != -32004 {
		t.Fatalf("tasks/resubscribe code %d", code)
	}
	// Another owner still gets "not found", never a hint that it exists.
	_, _, b := h.rawPost("/agents/field-guide", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`, appHdr(h.keyApp1, "bob"))
	if !strings.Contains(string(b), "-32001") {
		t.Fatalf("bob: %s", b)
	}
}

// TestUnknownRoleRefused (defect 11): a message whose role is not an A2A
// role is refused with -32602 and starts no turn.
func TestUnknownRoleRefused(t *testing.T) {
	h := newHarness(t)
	for _, role := range []string{"ROLE_BOGUS", "user", "ROLE_SYSTEM"} {
		for _, method := range []string{"SendMessage", "SendStreamingMessage"} {
			body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"message":{"messageId":"r1","role":"` + role + `","parts":[{"text":"hi"}]}}}`
			if code := h.rpcCode(t, "/agents/field-guide", body); code != -32602 {
				t.Fatalf("%s %s: code %d", method, role, code)
			}
		}
	}
	time.Sleep(100 * time.Millisecond)
	if l := h.listTasks(t, "alice", `{}`); len(l) != 0 {
		t.Fatalf("a refused message made tasks: %v", l)
	}
	// 0.3 spells the role in lower case.
	body := `{"jsonrpc":"2.0","id":"1","method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"bogus","parts":[{"kind":"text","text":"x"}]}}}`
	if code := h.rpcCode(t, "/agents/field-guide/a2a", body); code != -32602 {
		t.Fatalf("0.3 bogus role: code %d", code)
	}
}

// TestPublicURLOverride (defect 2): with Config.PublicURL (the vessel's
// --public-url, which the local stack sets to its listen address) both
// cards and /v1/agents advertise that address, not the deployment's front
// address.
func TestPublicURLOverride(t *testing.T) {
	front := func(d *settings.Deployment) {
		d.Vessel.PublicURL, d.Vessel.FrontAddress = "http://172.31.247.10:8700", "172.31.247.10"
	}
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.PublicURL = "http://127.0.0.1:18700/" }, front)
	for path, want := range map[string]string{
		"/agents/field-guide/.well-known/agent-card.json":     `"url":"http://127.0.0.1:18700/agents/field-guide"`,
		"/agents/field-guide/a2a/.well-known/agent-card.json": `"http://127.0.0.1:18700/agents/field-guide"`,
	} {
		code, _, body := h.get(path, nil)
		if code != 200 || !strings.Contains(string(body), want) || strings.Contains(string(body), "172.31.247.10") {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	code, _, body := h.get("/v1/agents", appHdr(h.keyApp1, "alice"))
	if code != 200 || !strings.Contains(string(body), `"card_url":"http://127.0.0.1:18700/agents/field-guide/.well-known/agent-card.json"`) {
		t.Fatalf("/v1/agents: %d %s", code, body)
	}
	build := func(u string) error {
		srv, err := a2aserver.New(a2aserver.Config{Deployment: h.deploy, Auth: auth.Chain{}, Store: h.backend, PublicURL: u,
			Fingerprint: func(*settings.Deployment, string) (string, error) { return testFP, nil }})
		if err == nil {
			srv.Close()
		}
		return err
	}
	if err := build("https://agents.example/base"); err != nil {
		t.Fatalf("a good public URL refused: %v", err)
	}
	for _, bad := range []string{"ftp://x", "127.0.0.1:18700", "http://", "http://h/?q=1"} {
		if build(bad) == nil {
			t.Fatalf("public URL %q accepted", bad)
		}
	}
}

// dropSchema removes a test schema from the PostgreSQL at dsn.
func dropSchema(t *testing.T, dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Errorf("drop schema: %v", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		t.Errorf("drop schema: %v", err)
	}
}
