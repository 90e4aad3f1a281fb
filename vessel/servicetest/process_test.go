// Package servicetest runs the real vessel binary against the real
// sandboxd binary and the scripted model, as separate processes.
package servicetest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/runtime/tokens"
	"github.com/astraldeep/astralvessel-go/vessel/scripted"
)

const script = `{
  "rules": [
    {"name": "tools", "steps": [
      {"tool_calls": [{"id": "c1", "name": "species"}, {"id": "c2", "name": "bash", "arguments": {"command": "echo from-the-sandbox"}}]},
      {"text": "Found: {{tool_result}}"}
    ]},
    {"name": "sleep", "steps": [
      {"tool_calls": [{"id": "s1", "name": "bash", "arguments": {"command": "sleep 31337"}}]},
      {"text": "woke"}
    ]},
    {"name": "web", "steps": [
      {"tool_calls": [{"id": "w1", "name": "webfetch", "arguments": {"url": "http://docs.example.test/page"}}]},
      {"text": "Fetched: {{tool_result}}"}
    ]},
    {"name": "slow", "steps": [{"text": "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "pieces": 80, "piece_delay_ms": 250}]},
    {"name": "notes", "steps": [
      {"tool_calls": [{"id": "n1", "name": "notes__add_note", "arguments": {"title": "survey", "text": "starts 12 May"}}]},
      {"tool_calls": [{"id": "n2", "name": "notes__list_notes", "arguments": {}}]},
      {"text": "Notes: {{tool_result}}"}
    ]},
    {"name": "brief", "steps": [{"text": "bbbbbbbbbbbbbbbbbbbb", "pieces": 10, "piece_delay_ms": 200}]}
  ]
}`

// build compiles a main package of a module into dir.
func build(t *testing.T, moduleDir, pkg, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type stack struct {
	t         *testing.T
	dir       string
	vesselBin string
	vesselURL string
	vesselEnv []string
	vesselArg []string
	vessel    *exec.Cmd
	logs      *os.File
}

func (s *stack) startVessel() {
	s.t.Helper()
	cmd := exec.Command(s.vesselBin, s.vesselArg...)
	cmd.Env = s.vesselEnv
	cmd.Stdout, cmd.Stderr = s.logs, s.logs
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_, _ = cmd.Process.Wait()
		}
	})
	s.vessel = cmd
	s.waitReady()
}

func (s *stack) waitReady() {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.vesselURL + "/health")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), `"guide":true`) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	logs, _ := os.ReadFile(s.logs.Name())
	s.t.Fatalf("the vessel did not become ready (the sandbox must report confinement; needs root and Landlock):\n%s", logs)
}

func (s *stack) kill() {
	_ = s.vessel.Process.Signal(syscall.SIGKILL)
	_, _ = s.vessel.Process.Wait()
}

// stackConfig varies the stack a test starts.
type stackConfig struct {
	tools      string                          // [tools] enabled, as TOML
	deployment string                          // appended to deployment.toml
	vessel     string                          // added to its [vessel] table
	env        []string                        // extra vessel environment
	model      func(http.Handler) http.Handler // wraps the scripted model
	// pkg, when set, adds files to the agent's package (dir is the
	// package) before the fingerprint is taken.
	pkg func(t *testing.T, dir string)
}

func startStack(t *testing.T) *stack { return startStackWith(t, stackConfig{}) }

func startStackWith(t *testing.T, cfg stackConfig) *stack {
	if cfg.tools == "" {
		cfg.tools = `["bash", "read"]`
	}
	if cfg.model == nil {
		cfg.model = func(h http.Handler) http.Handler { return h }
	}
	testenv.Require(t, os.Geteuid() == 0, "sandboxd confines calls as root; run as root")
	dir := t.TempDir()
	// sandboxd runs calls as an unprivileged user, which must reach the
	// binary and the agent's package.
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bin")
	build(t, "..", "./cmd/vessel", filepath.Join(bin, "vessel"))
	build(t, "../../sandboxd", "./cmd/sandboxd", filepath.Join(bin, "sandboxd"))

	sc, err := scripted.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	model := httptest.NewServer(cfg.model(scripted.NewServer(sc)))
	t.Cleanup(model.Close)

	key := "app-key-for-tests"
	sum := sha256.Sum256([]byte(key))
	write(t, filepath.Join(dir, "agents/guide/vessel.toml"), `name = "Guide"
description = "A test guide."
version = "0.1.0"
[model]
name = "scripted"
max_steps = 4
[tools]
enabled = `+cfg.tools+`
`)
	write(t, filepath.Join(dir, "agents/guide/prompt.md"), "You are a test guide.\n")
	write(t, filepath.Join(dir, "agents/guide/tools/species.toml"), `name = "species"
description = "List species."
command = ["/bin/sh", "-c", "echo '[{\"common_name\":\"Osprey\"}]'"]
scope = "tools:read"
`)
	if cfg.pkg != nil {
		cfg.pkg(t, filepath.Join(dir, "agents/guide"))
	}
	write(t, filepath.Join(dir, "deploy/deployment.toml"), fmt.Sprintf(`[vessel]
project = "svctest"
task_ttl_hours = 1
`+cfg.vessel+`
[egress]
upstream_url = "https://model.invalid/v1"
[[apps]]
id = "app"
key_sha256 = "%s"
agents = ["guide"]
[[agents]]
id = "guide"
package = "../agents/guide"
`, hex.EncodeToString(sum[:]))+cfg.deployment)
	env := func(name string) (string, bool) {
		if name == "VESSEL_MODEL_KEY" {
			return "egress-token", true
		}
		return os.LookupEnv(name)
	}
	d, err := spec.LoadDeployment(filepath.Join(dir, "deploy/deployment.toml"), env)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := spec.Fingerprint(d, "guide")
	if err != nil {
		t.Fatal(err)
	}
	master := "master-token-for-tests"
	write(t, filepath.Join(dir, "secrets/master.token"), master)
	scratch := filepath.Join(dir, "scratch")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "logs.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })

	sbAddr := freePort(t)
	m, err := spec.LoadPackage(filepath.Join(dir, "agents/guide"), os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	sbd := exec.Command(filepath.Join(bin, "sandboxd"), "--agent", "guide", "--package", filepath.Join(dir, "agents/guide"),
		"--tools", m.Toolset().Encode(), "--scratch", scratch, "--listen", sbAddr, "--fingerprint", fp)
	sbd.Env = append(os.Environ(), "VESSEL_SANDBOX_TOKEN="+tokens.DeriveToken(master, "sandbox/guide"))
	sbd.Stdout, sbd.Stderr = logs, logs
	if err := sbd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sbd.Process.Signal(syscall.SIGTERM); _, _ = sbd.Process.Wait() })

	vAddr := freePort(t)
	s := &stack{t: t, dir: dir, vesselBin: filepath.Join(bin, "vessel"), vesselURL: "http://" + vAddr, logs: logs,
		vesselArg: []string{"--deployment", filepath.Join(dir, "deploy/deployment.toml"), "--listen", vAddr,
			"--grpc-listen", freePort(t), "--sandbox-url", "guide=http://" + sbAddr},
		vesselEnv: append(os.Environ(), "VESSEL_SANDBOX_MASTER_TOKEN_FILE="+filepath.Join(dir, "secrets/master.token"),
			"VESSEL_MODEL_KEY=egress-token", "VESSEL_MODEL_BASE_URL="+model.URL+"/v1", "VESSEL_DATA_DIR="+filepath.Join(dir, "data"))}
	// The egress is a critical dependency (agents are out of service while
	// its /health fails): a loopback stand-in answers it, unless the test
	// names an egress of its own (cfg.env comes later and wins).
	egress := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.Error(w, "the egress stand-in serves /health only", http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(egress.Close)
	s.vesselEnv = append(s.vesselEnv, "VESSEL_EGRESS_PROXY="+egress.URL)
	s.vesselEnv = append(s.vesselEnv, cfg.env...)
	s.startVessel()
	return s
}

func (s *stack) client() *a2aclient.Client {
	cl, err := a2aclient.NewFromEndpoints(context.Background(),
		[]*a2a.AgentInterface{a2a.NewAgentInterface(s.vesselURL+"/agents/guide", a2a.TransportProtocolJSONRPC)},
		a2aclient.WithJSONRPCTransport(&http.Client{}))
	if err != nil {
		s.t.Fatal(err)
	}
	return cl
}

func alice() context.Context {
	return a2aclient.AttachServiceParams(context.Background(), a2aclient.ServiceParams{
		"Authorization": {"Bearer app-key-for-tests"}, "X-Vessel-User": {"alice"}})
}

func dataOf(ev a2a.Event) map[string]any {
	su, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok || su.Status.Message == nil || len(su.Status.Message.Parts) == 0 {
		return nil
	}
	m, _ := su.Status.Message.Parts[0].Data().(map[string]any)
	return m
}

// sleepers counts live processes running "sleep 31337".
func sleepers() int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), "31337") && strings.HasPrefix(string(b), "sleep") {
			n++
		}
	}
	return n
}

// editManifestUntilUnserved edits the guide's manifest without a
// redeploy and fails unless a new turn gets 503 within 15 s.
func editManifestUntilUnserved(t *testing.T, s *stack) {
	t.Helper()
	mf := filepath.Join(s.dir, "agents/guide/vessel.toml")
	b, _ := os.ReadFile(mf)
	write(t, mf, strings.Replace(string(b), "A test guide.", "An edited guide.", 1))
	deadline := time.Now().Add(15 * time.Second)
	status := 0
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodPost, s.vesselURL+"/agents/guide", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-edit","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`))
		req.Header.Set("Authorization", "Bearer app-key-for-tests")
		req.Header.Set("X-Vessel-User", "alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if status = resp.StatusCode; status == http.StatusServiceUnavailable {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if status != http.StatusServiceUnavailable {
		t.Fatalf("after an un-redeployed edit: %d", status)
	}
}

// checkTurnLogs: the stack's logs hold no key or token, and at least two
// structured turn lines.
func checkTurnLogs(t *testing.T, s *stack) {
	t.Helper()
	logs, _ := os.ReadFile(s.logs.Name())
	for _, secret := range []string{"app-key-for-tests", "egress-token", "master-token-for-tests"} {
		if strings.Contains(string(logs), secret) {
			t.Fatalf("a secret leaked into the logs: %s", secret)
		}
	}
	turns := 0
	sc := bufio.NewScanner(strings.NewReader(string(logs)))
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"msg":"turn"`) {
			turns++
		}
	}
	if turns < 2 {
		t.Fatalf("turn log lines: %d", turns)
	}
}

func TestRealSandboxTurnCancelRestart(t *testing.T) {
	s := startStack(t)
	cl := s.client()

	// A turn whose tools run in the real sandboxd.
	var finished *a2a.Task
	previews := map[string]string{}
	for ev, err := range cl.SendStreamingMessage(alice(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("#script:tools"))}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			finished = task
		}
		if d := dataOf(ev); d["type"] == "tool.finished" {
			previews[d["name"].(string)], _ = d["preview"].(string)
			if d["ok"] != true {
				t.Fatalf("tool failed in the sandbox: %v", d)
			}
		}
	}
	if !strings.Contains(previews["bash"], "from-the-sandbox") || !strings.Contains(previews["species"], "Osprey") {
		t.Fatalf("previews: %v", previews)
	}

	// Cancel mid tool call: the process is gone afterwards.
	ch := make(chan a2a.Event, 64)
	go func() {
		defer close(ch)
		for ev, err := range cl.SendStreamingMessage(alice(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("#script:sleep"))}) {
			if err != nil {
				return
			}
			ch <- ev
		}
	}()
	var id a2a.TaskID
	var last a2a.Event
	for ev := range ch {
		last = ev
		if task, ok := ev.(*a2a.Task); ok {
			id = task.ID
		}
		if dataOf(ev)["type"] == "tool.started" {
			deadline := time.Now().Add(10 * time.Second)
			for sleepers() == 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if sleepers() == 0 {
				t.Fatal("the sleep never started")
			}
			if _, err := cl.CancelTask(alice(), &a2a.CancelTaskRequest{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if d := dataOf(last); d["status"] != "cancelled" {
		t.Fatalf("cancel: %v", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sleepers() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := sleepers(); n != 0 {
		t.Fatalf("%d sleep processes left after cancel", n)
	}

	// kill -9 mid-turn: after a restart the running task is failed, the
	// finished one still readable.
	sctx, stop := context.WithCancel(alice())
	var running a2a.TaskID
	for ev, err := range cl.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("#script:slow"))}) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			running = task.ID
		}
		if dataOf(ev)["type"] == "text.delta" {
			break
		}
	}
	stop()
	s.kill()
	s.startVessel()
	got, err := cl.GetTask(alice(), &a2a.GetTaskRequest{ID: running})
	if err != nil || got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("running task after restart: %+v %v", got, err)
	}
	got, err = cl.GetTask(alice(), &a2a.GetTaskRequest{ID: finished.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
		t.Fatalf("finished task after restart: %+v %v", got, err)
	}
	// An edit to the manifest that was not redeployed takes the agent out of
	// service at the next readiness poll: a new turn gets 503 (reads of
	// stored tasks are still served, docs/a2a.md "Readiness").
	editManifestUntilUnserved(t, s)

	// One structured log line per turn, with no key or token in the logs.
	checkTurnLogs(t, s)
}
