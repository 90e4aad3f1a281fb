package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The start-up the local-stack tests with a model upstream of their own
// share: the deployment (upstreamDeployment), the scripted model on
// loopback (startModel) and a turn posted as JSON-RPC (postJSONRPC).

// writeDeployment writes the conformance deployment to a file of the
// test's own, its package paths made absolute and then each edit applied
// to its text, and returns the file's path.
func writeDeployment(t *testing.T, edits ...func(string) string) string {
	t.Helper()
	orig, err := os.ReadFile("testdata/deployment.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(orig), `"../../examples/`, `"`+filepath.Join(repoRoot(t), "examples")+"/")
	for _, edit := range edits {
		text = edit(text)
	}
	dep := filepath.Join(t.TempDir(), "deployment.toml")
	if err := os.WriteFile(dep, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dep
}

// upstreamDeployment writes the conformance deployment allowed a plain-HTTP
// upstream (a model on loopback), then each edit applied (writeDeployment),
// and returns it with the environment without VESSEL_ variables.
func upstreamDeployment(t *testing.T, edits ...func(string) string) (string, []string) {
	t.Helper()
	allowHTTP := func(text string) string {
		return strings.Replace(text, "[egress]\n", "[egress]\nallow_http_upstream = true\n", 1)
	}
	dep := writeDeployment(t, append([]func(string) string{allowHTTP}, edits...)...)
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
// stack's application with X-Vessel-User user and header, name and value
// pairs, set too (traceparent, A2A-Version), and returns the answer's
// status and body; the answer is waited for 2 minutes at most.
func postJSONRPC(t *testing.T, info *localUp, agent, user, msgID, text string, header ...string) (int, []byte) {
	t.Helper()
	if len(header)%2 != 0 {
		t.Fatalf("postJSONRPC: header %q is not name and value pairs", header)
	}
	appKey, err := os.ReadFile(info.AppKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := json.Marshal(msgID)
	txt, _ := json.Marshal(text)
	body := `{"jsonrpc":"2.0","id":"r","method":"SendMessage","params":{"message":{"messageId":` + string(id) +
		`,"role":"ROLE_USER","parts":[{"text":` + string(txt) + `}]}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, info.URL+"/agents/"+agent, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(appKey)))
	req.Header.Set("X-Vessel-User", user)
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b
}
