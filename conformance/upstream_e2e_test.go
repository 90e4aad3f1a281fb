package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The start-up the local-stack tests with a model upstream of their own
// share: the deployment (upstreamDeployment), the scripted model on
// loopback (startModel) and a turn posted as JSON-RPC (postJSONRPC).

// upstreamDeployment writes the conformance deployment allowed a plain-HTTP
// upstream (a model on loopback), with its package paths made absolute and
// then each edit applied to its text, and returns it with the environment
// without VESSEL_ variables.
func upstreamDeployment(t *testing.T, edits ...func(string) string) (string, []string) {
	t.Helper()
	orig, err := os.ReadFile("testdata/deployment.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(orig), "[egress]\n", "[egress]\nallow_http_upstream = true\n", 1)
	text = strings.ReplaceAll(text, `"../../examples/`, `"`+filepath.Join(repoRoot(t), "examples")+"/")
	for _, edit := range edits {
		text = edit(text)
	}
	dep := filepath.Join(t.TempDir(), "deployment.toml")
	if err := os.WriteFile(dep, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VESSEL_") {
			env = append(env, kv)
		}
	}
	return dep, env
}

// startModel starts the product's scripted model on a free loopback
// address, stopped when the test ends, and returns the address once it
// listens.
func startModel(t *testing.T, bin string) string {
	t.Helper()
	addr := freeAddr(t)
	model := exec.Command(filepath.Join(bin, "scripted-model"), "--listen", addr)
	model.Env = []string{"PATH=" + os.Getenv("PATH")}
	if err := model.Start(); err != nil {
		t.Fatalf("scripted-model: %v", err)
	}
	t.Cleanup(func() { _ = model.Process.Kill(); _ = model.Wait() })
	waitTCP(t, addr)
	return addr
}

// postJSONRPC sends agent a SendMessage of text (message id msgID) as the
// stack's application with X-Vessel-User user, and returns the answer's
// status and body.
func postJSONRPC(t *testing.T, info *localUp, agent, user, msgID, text string) (int, []byte) {
	t.Helper()
	appKey, err := os.ReadFile(info.AppKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := json.Marshal(msgID)
	txt, _ := json.Marshal(text)
	body := `{"jsonrpc":"2.0","id":"r","method":"SendMessage","params":{"message":{"messageId":` + string(id) +
		`,"role":"ROLE_USER","parts":[{"text":` + string(txt) + `}]}}}`
	req, _ := http.NewRequest(http.MethodPost, info.URL+"/agents/"+agent, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(appKey)))
	req.Header.Set("X-Vessel-User", user)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}
