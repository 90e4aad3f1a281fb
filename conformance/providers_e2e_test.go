package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// replayUpstream serves recorded provider streams (vessel/model's replay
// corpus) as the stack's model upstream: the first request of a turn gets
// the case its user message names, a request after a tool result gets a
// short final answer (doneStep). It keeps every request body it received.
type replayUpstream struct {
	dir    string
	mu     sync.Mutex
	bodies []string
}

// doneStep is the answer to a request after a tool result, and its usage.
const (
	doneStep              = `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n"
	doneIn, doneOut int64 = 3, 1
)

func (u *replayUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, string(b))
	u.mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(b, &req)
	w.Header().Set("Content-Type", "text/event-stream")
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		_, _ = io.WriteString(w, doneStep)
		return
	}
	var name string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			_ = json.Unmarshal(req.Messages[i].Content, &name)
			break
		}
	}
	body, err := os.ReadFile(filepath.Join(u.dir, filepath.Clean("/"+name)))
	if err != nil {
		http.Error(w, `{"error":{"message":"no such case"}}`, http.StatusNotFound)
		return
	}
	for bytes.HasPrefix(body, []byte("# ")) { // the source lines
		body = body[bytes.IndexByte(body, '\n')+1:]
	}
	if bytes.HasPrefix(body, []byte("{")) {
		w.Header().Set("Content-Type", "application/json") // a server that ignored stream:true
	}
	_, _ = w.Write(body)
}

// since is the request bodies received from the n-th on.
func (u *replayUpstream) since(n int) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.bodies[n:]...)
}

func (u *replayUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

// replayCall and replayCase are vessel/model's testdata/providers/expect.json
// (conformance does not import the vessel's packages): the exact outcome of
// each corpus file, which vessel/model's TestReplayProviders checks against
// the model client and TestLocalStackProviderReplays against the stack.
type replayCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Extra     string `json:"extra"`
}

type replayCase struct {
	File       string       `json:"file"`
	Text       string       `json:"text"`
	Reasoning  string       `json:"reasoning"`
	Calls      []replayCall `json:"calls"`
	Incomplete string       `json:"incomplete"`
	Error      string       `json:"error"`
	In         int64        `json:"in"`
	Out        int64        `json:"out"`
	Extra      string       `json:"extra"`
	Provider   string       `json:"provider"`
	SendBack   *[]string    `json:"send_back"`
}

// route is the name of the model route (and the agent) a case needs: ""
// for the default route under auto.
func (c *replayCase) route() string {
	if c.Provider == "" && c.SendBack == nil {
		return ""
	}
	r := "p-" + c.Provider
	if c.SendBack != nil {
		sb := strings.Join(*c.SendBack, "-")
		if sb == "" {
			sb = "none"
		}
		r += "-sb-" + sb
	}
	return r
}

// outcome is the case's turn.finished status and reason (docs/models.md,
// "Answer outcomes").
func (c *replayCase) outcome() (string, string) {
	switch {
	case c.Error != "":
		return "model_error", ""
	case c.Incomplete != "":
		return "incomplete", c.Incomplete
	}
	return "ok", ""
}

func loadReplayCases(t *testing.T, dir string) []replayCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Cases, Profiles []replayCase
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return append(e.Cases, e.Profiles...)
}

// replayDeployment adds, for each route the cases need, a [models] route
// with that provider profile (and send_back) pointing at the replay
// upstream and an agent (the field guide) on it, granted to the local app.
func replayDeployment(cases []replayCase, url, guide string) func(string) string {
	return func(text string) string {
		seen := map[string]bool{}
		var agents []string
		for _, c := range cases {
			r := c.route()
			if r == "" || seen[r] {
				continue
			}
			seen[r] = true
			agents = append(agents, `"`+r+`"`)
			text += fmt.Sprintf("\n[models.%s]\nurl = %q\nallow_http = true\nprovider = %q\n", r, url, c.Provider)
			if c.SendBack != nil {
				sb, _ := json.Marshal(*c.SendBack)
				text += "send_back = " + string(sb) + "\n"
			}
			text += fmt.Sprintf("\n[[agents]]\nid = %q\npackage = %q\nmodel_route = %q\n", r, guide, r) +
				"\n[agents.sandbox]\nscratch = \"64MB\"\n"
		}
		return strings.Replace(text, `agents = ["field-guide", "field-guide-reader"]`,
			`agents = ["field-guide", "field-guide-reader", `+strings.Join(agents, ", ")+`]`, 1)
	}
}

// TestLocalStackProviderReplays runs every case of the replay corpus
// (vessel/model/testdata/providers, under auto and under each provider
// profile expect.json names) through the real vessel, egress and sandbox and
// checks its exact outcome against expect.json: the task's state and
// vessel.reason, the answer text (the stream's, or the follow-up step's
// "done" after the tool step), the model's error message, the tool calls
// the next request sends back (ids, names, arguments, provider fields on the
// message and on each call) with a tool result for each (an unknown tool's
// refusal where the agent has no such tool), and the tokens the usage log
// counts for the turn.
func TestLocalStackProviderReplays(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	dir := filepath.Join(repoRoot(t), "vessel", "model", "testdata", "providers")
	cases := loadReplayCases(t, dir)
	up := &replayUpstream{dir: dir}
	srv := httptest.NewServer(up)
	defer srv.Close()

	dep, env := upstreamDeployment(t, replayDeployment(cases, srv.URL+"/v1", filepath.Join(repoRoot(t), "examples", "field-guide")))
	usageLog := filepath.Join(t.TempDir(), "usage.jsonl")
	env = append(env, "VESSEL_UPSTREAM_MODEL_URL="+srv.URL+"/v1", "VESSEL_MODEL_KEY=sk-replay", "VESSEL_USAGE_LOG="+usageLog)
	info := startUp(t, bin, env, dep)
	start := time.Now()
	for i, c := range cases {
		agent := c.route()
		if agent == "" {
			agent = "field-guide"
		}
		t.Run(agent+"/"+c.File, func(t *testing.T) {
			n := up.count()
			code, b := postJSONRPC(t, info, agent, "replay", fmt.Sprintf("m-%d", i), c.File)
			for try := 0; code == http.StatusTooManyRequests && try < 30; try++ { // the app's rate: nothing was started
				time.Sleep(time.Second)
				code, b = postJSONRPC(t, info, agent, "replay", fmt.Sprintf("m-%d", i), c.File)
			}
			if code != http.StatusOK {
				t.Fatalf("HTTP %d: %.1500s", code, b)
			}
			task := decodeReplayTask(t, b)
			reqs := up.since(n)
			checkReplayTask(t, &c, task, reqs)
			checkReplayUsage(t, &c, usageLog, task.id, len(reqs))
		})
	}
	t.Logf("%d cases through the stack in %s", len(cases), time.Since(start).Round(time.Millisecond))
}

// replayTask is what a test reads of a task's answer.
type replayTask struct {
	id, state, reason string
	answer            string         // the answer artifact's text
	finished          map[string]any // the final status message's turn.finished
	raw               []byte
}

// str is the finished event's member k as a string ("" if absent).
func (r *replayTask) str(k string) string {
	s, _ := r.finished[k].(string)
	return s
}

// tokens is the finished event's token counts.
func (r *replayTask) tokens() (int64, int64) {
	in, _ := r.finished["prompt_tokens"].(float64)
	out, _ := r.finished["completion_tokens"].(float64)
	return int64(in), int64(out)
}

func decodeReplayTask(t *testing.T, b []byte) *replayTask {
	t.Helper()
	var r struct {
		Result struct {
			Task *replayA2ATask `json:"task"`
			replayA2ATask
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%v: %.1500s", err, b)
	}
	a := &r.Result.replayA2ATask
	if r.Result.Task != nil {
		a = r.Result.Task
	}
	out := &replayTask{id: a.ID, state: a.Status.State, raw: b}
	if s, ok := a.Metadata["vessel.reason"].(string); ok { // the final status update's metadata
		out.reason = s
	}
	for _, p := range a.Status.Message.Parts {
		if p.Data != nil {
			out.finished = p.Data
		}
	}
	for _, art := range a.Artifacts {
		if art.Name != "answer" {
			continue
		}
		for _, p := range art.Parts {
			out.answer += p.Text
		}
	}
	return out
}

type replayPart struct {
	Text string         `json:"text"`
	Data map[string]any `json:"data"`
}

type replayA2ATask struct {
	ID     string `json:"id"`
	Status struct {
		State   string `json:"state"`
		Message struct {
			Parts []replayPart `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	Metadata  map[string]any `json:"metadata"`
	Artifacts []struct {
		Name  string       `json:"name"`
		Parts []replayPart `json:"parts"`
	} `json:"artifacts"`
}

// checkReplayTask checks the task's state, reason and answer, and the
// requests the upstream received for it.
func checkReplayTask(t *testing.T, c *replayCase, task *replayTask, reqs []string) {
	t.Helper()
	status, reason := c.outcome()
	followUp := status == "ok" && len(c.Calls) > 0
	want := map[bool]string{true: "TASK_STATE_COMPLETED", false: "TASK_STATE_FAILED"}[status == "ok"]
	if task.state != want || task.reason != reason || task.str("status") != status || task.str("reason") != reason {
		t.Fatalf("state %s reason %q, turn.finished %v; want %s %s %q: %.1500s", task.state, task.reason, task.finished, want, status, reason, task.raw)
	}
	if c.Error != "" && !strings.Contains(task.str("error"), c.Error) {
		t.Errorf("turn.finished's error %q lacks the model's %q", task.str("error"), c.Error)
	}
	if c.Incomplete != "" && !strings.HasPrefix(task.str("error"), "incomplete: "+c.Incomplete) {
		t.Errorf("turn.finished's error %q, want it to start %q", task.str("error"), "incomplete: "+c.Incomplete)
	}
	wantIn, wantOut := c.In, c.Out
	if followUp {
		wantIn, wantOut = wantIn+doneIn, wantOut+doneOut
	}
	if in, out := task.tokens(); in != wantIn || out != wantOut {
		t.Errorf("turn.finished counts %d in / %d out, want %d / %d", in, out, wantIn, wantOut)
	}
	// The answer is the last step's text: the stream's, "done" after a tool
	// step, none after a model error (docs/models.md, "Answer outcomes").
	wantAnswer := c.Text
	switch {
	case followUp:
		wantAnswer = "done"
	case status == "model_error":
		wantAnswer = ""
	}
	if task.answer != wantAnswer {
		t.Errorf("answer %q, want %q", task.answer, wantAnswer)
	}
	wantReqs := map[bool]int{false: 1, true: 2}[followUp]
	if len(reqs) != wantReqs {
		t.Fatalf("%d model requests, want %d", len(reqs), wantReqs)
	}
	if followUp {
		checkSentBack(t, c, reqs[0], reqs[1])
	}
}

// checkSentBack checks the request after the tool step: the assistant
// message carries the step's text, calls and provider fields exactly, and a
// tool result answers each call.
func checkSentBack(t *testing.T, c *replayCase, first, next string) {
	t.Helper()
	var tools struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal([]byte(first), &tools)
	known := map[string]bool{}
	for _, tl := range tools.Tools {
		known[tl.Function.Name] = true
	}
	var sent struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(next), &sent); err != nil {
		t.Fatal(err)
	}
	ms := sent.Messages
	k := len(ms) - len(c.Calls) - 1
	if k < 0 {
		t.Fatalf("the next request has %d messages: %.2000s", len(ms), next)
	}
	asst := ms[k]
	var role string
	_ = json.Unmarshal(asst["role"], &role)
	var calls []map[string]json.RawMessage
	_ = json.Unmarshal(asst["tool_calls"], &calls)
	if role != "assistant" || len(calls) != len(c.Calls) {
		t.Fatalf("message %d is %s with %d calls, want the assistant's %d: %.2000s", k, role, len(calls), len(c.Calls), next)
	}
	var content string
	_ = json.Unmarshal(asst["content"], &content)
	if content != c.Text {
		t.Errorf("the assistant message's content %q, want %q", content, c.Text)
	}
	checkMembers(t, "the assistant message", asst, c.Extra, "role", "content", "tool_calls")
	for i, want := range c.Calls {
		var fn struct{ Name, Arguments string }
		var id string
		_ = json.Unmarshal(calls[i]["id"], &id)
		_ = json.Unmarshal(calls[i]["function"], &fn)
		if id != want.ID || fn.Name != want.Name || fn.Arguments != want.Arguments {
			t.Errorf("call %d sent back as %s %s %s, want %s %s %s", i, id, fn.Name, fn.Arguments, want.ID, want.Name, want.Arguments)
		}
		checkMembers(t, "call "+want.ID, calls[i], want.Extra, "id", "type", "function", "index")
		var res struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			Content    string `json:"content"`
		}
		b, _ := json.Marshal(ms[k+1+i])
		_ = json.Unmarshal(b, &res)
		if res.Role != "tool" || res.ToolCallID != want.ID {
			t.Errorf("message %d is %s for %s, want the tool result of %s", k+1+i, res.Role, res.ToolCallID, want.ID)
		}
		if refusal := fmt.Sprintf("error: there is no tool named %q", want.Name); !known[want.Name] && res.Content != refusal {
			t.Errorf("the result of unknown tool %s is %q, want %q", want.Name, res.Content, refusal)
		}
	}
}

// checkMembers checks that msg's members other than own are exactly the
// provider fields extra (a JSON object, "" for none).
func checkMembers(t *testing.T, what string, msg map[string]json.RawMessage, extra string, own ...string) {
	t.Helper()
	got := map[string]any{}
	for k, v := range msg {
		if !slices.Contains(own, k) {
			var x any
			_ = json.Unmarshal(v, &x)
			got[k] = x
		}
	}
	want := map[string]any{}
	if extra != "" {
		_ = json.Unmarshal([]byte(extra), &want)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		t.Errorf("%s sends back provider fields %s, want %s", what, g, extra)
	}
}

// checkReplayUsage checks the tokens the vessel's usage log counts for the
// task: the case's, plus the follow-up step's where there was one.
func checkReplayUsage(t *testing.T, c *replayCase, usageLog, task string, requests int) {
	t.Helper()
	wantIn, wantOut := c.In, c.Out
	if requests == 2 {
		wantIn, wantOut = wantIn+doneIn, wantOut+doneOut
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, err := os.Open(usageLog)
		if err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				var r struct {
					Task string `json:"task"`
					In   int64  `json:"tokens_in"`
					Out  int64  `json:"tokens_out"`
				}
				if json.Unmarshal(sc.Bytes(), &r) == nil && r.Task == task {
					f.Close()
					if r.In != wantIn || r.Out != wantOut {
						t.Errorf("usage log counts %d in / %d out, want %d / %d", r.In, r.Out, wantIn, wantOut)
					}
					return
				}
			}
			f.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no usage record for task %s in %s", task, usageLog)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
