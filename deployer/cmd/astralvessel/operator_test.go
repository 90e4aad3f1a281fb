package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/localstack"
)

// The commands send the token and show what the operator API answers; the
// API itself is tested in vessel/a2aserver (TestOperatorTurnsAndCancel).
func TestTurnsAndCancelCommands(t *testing.T) {
	const tok = "operator-token-0123456789abcdef0123"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+tok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"operator token required"}`))
			return
		}
		switch {
		case r.Method == "GET" && r.URL.Path == "/v1/operator/turns":
			_, _ = w.Write([]byte(`{"turns":[{"task":"t-1","agent":"field-guide","owner":"app/alice","state":"working","started":"2026-12-02T10:00:00Z"},{"task":"t-2","agent":"field-guide","owner":"app/bob","state":"input-required"}]}`))
		case r.Method == "POST" && r.URL.Path == "/v1/operator/turns/t-1/cancel":
			_, _ = w.Write([]byte(`{"task":"t-1","state":"TASK_STATE_CANCELED"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"no such turn on this replica"}`))
		}
	}))
	defer api.Close()
	tf := filepath.Join(t.TempDir(), "op.token")
	if err := os.WriteFile(tf, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := dispatch(args, &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("turns", "--vessel", api.URL, "--token-file", tf)
	if code != 0 || !strings.Contains(out, "t-1") || !strings.Contains(out, "app/alice") || !strings.Contains(out, "input-required") {
		t.Fatalf("turns: %d %q %q", code, out, errs)
	}
	if code, out, errs := run("cancel", "--vessel", api.URL, "--token-file", tf, "t-1"); code != 0 || out != "t-1: TASK_STATE_CANCELED\n" {
		t.Fatalf("cancel: %d %q %q", code, out, errs)
	}
	if code, _, errs := run("cancel", "--vessel", api.URL, "--token-file", tf, "t-9"); code != 1 || !strings.Contains(errs, "no such turn") {
		t.Fatalf("cancel unknown: %d %q", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.token")
	_ = os.WriteFile(bad, []byte("wrong"), 0o600)
	if code, _, errs := run("turns", "--vessel", api.URL, "--token-file", bad); code != 1 || !strings.Contains(errs, "operator token required") {
		t.Fatalf("wrong token: %d %q", code, errs)
	}
	if code, _, _ := run("cancel", "--vessel", api.URL, "--token-file", tf); code != 2 {
		t.Fatalf("cancel without a task: %d", code)
	}
	if code, _, errs := run("turns", "--vessel", "ftp://x", "--token-file", tf); code != 1 || !strings.Contains(errs, "want http(s)") {
		t.Fatalf("bad URL: %d %q", code, errs)
	}
}

// operatorAPI is a fake operator API that accepts only tok.
func operatorAPI(t *testing.T, tok string) *httptest.Server {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+tok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"operator token required"}`))
			return
		}
		_, _ = w.Write([]byte(`{"turns":[]}`))
	}))
	t.Cleanup(api.Close)
	return api
}

// TestTurnsFindsTheDeployedToken: after astralvessel deploy, turns finds
// the operator token the deploy wrote in its output folder (--deploy-dir,
// the current folder by default), the same token the vessel's container
// is given; --token-file still wins.
func TestTurnsFindsTheDeployedToken(t *testing.T) {
	setExampleEnv(t)
	t.Setenv("VESSEL_OPERATOR_TOKEN_FILE", "")
	t.Setenv("VESSEL_OPERATOR_TOKEN", "")
	t.Setenv("VESSEL_OPERATOR_URL", "")
	out := deployExample(t)
	tok, err := os.ReadFile(filepath.Join(out, ".generated", "operator.token"))
	if err != nil {
		t.Fatal(err)
	}
	vesselCopy, err := os.ReadFile(filepath.Join(out, ".generated", "vessel-operator.token"))
	if err != nil || !bytes.Equal(tok, vesselCopy) {
		t.Fatalf("the vessel's copy differs from the operator's: %v", err)
	}
	api := operatorAPI(t, strings.TrimSpace(string(tok)))
	noStack := t.TempDir()
	if code, stdout, errs := run("turns", "--vessel", api.URL, "--deploy-dir", out, "--state", noStack); code != 0 || stdout != "no turns running\n" {
		t.Fatalf("turns --deploy-dir: %d %q %q", code, stdout, errs)
	}
	// The current folder is the default.
	t.Chdir(out)
	if code, stdout, errs := run("turns", "--vessel", api.URL, "--state", noStack); code != 0 || stdout != "no turns running\n" {
		t.Fatalf("turns in the deploy folder: %d %q %q", code, stdout, errs)
	}
	other := filepath.Join(t.TempDir(), "other.token")
	_ = os.WriteFile(other, []byte("another-token-0123456789abcdef0123456789"), 0o600)
	if code, _, errs := run("turns", "--vessel", api.URL, "--token-file", other); code != 1 || !strings.Contains(errs, "operator token required") {
		t.Fatalf("--token-file did not win: %d %q", code, errs)
	}
	// Nowhere to find one: the error says where it looked.
	t.Chdir(t.TempDir())
	if code, _, errs := run("turns", "--vessel", api.URL, "--state", noStack); code != 1 || !strings.Contains(errs, "no operator token") || !strings.Contains(errs, "--deploy-dir") {
		t.Fatalf("no token anywhere: %d %q", code, errs)
	}
}

// TestTurnsFindsTheLocalStack: with no deploy folder, turns reads the
// running local stack's stack.json for its operator API and token.
func TestTurnsFindsTheLocalStack(t *testing.T) {
	t.Setenv("VESSEL_OPERATOR_TOKEN_FILE", "")
	t.Setenv("VESSEL_OPERATOR_TOKEN", "")
	t.Setenv("VESSEL_OPERATOR_URL", "")
	t.Chdir(t.TempDir())
	const tok = "local-operator-token-0123456789abcdef0123"
	api := operatorAPI(t, tok)
	state := t.TempDir()
	tf := filepath.Join(state, "operator.token")
	if err := os.WriteFile(tf, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(localstack.Info{URL: "http://127.0.0.1:1", OperatorURL: api.URL, OperatorURLs: []string{api.URL}, OperatorTokenFile: tf})
	if err := os.WriteFile(filepath.Join(state, "stack.json"), info, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, errs := run("turns", "--state", state); code != 0 || stdout != "no turns running\n" {
		t.Fatalf("turns --state: %d %q %q", code, stdout, errs)
	}
}

// TestTurnsNeedsNoOverrideAfterDeploy: deploy writes the operator API's URL
// beside the Compose file (operator.url, the vessel's address on the
// metrics network), so turns and cancel need neither --vessel nor a token
// flag in the deploy folder; with the URL file gone, or the API not
// answering, the error says what to set.
func TestTurnsNeedsNoOverrideAfterDeploy(t *testing.T) {
	setExampleEnv(t)
	t.Setenv("VESSEL_OPERATOR_TOKEN_FILE", "")
	t.Setenv("VESSEL_OPERATOR_TOKEN", "")
	t.Setenv("VESSEL_OPERATOR_URL", "")
	out := deployExample(t, "--metrics-subnet", "10.254.9.0/24")
	urlFile := filepath.Join(out, "operator.url")
	b, err := os.ReadFile(urlFile)
	if err != nil || strings.TrimSpace(string(b)) != "http://10.254.9.2:9700" {
		t.Fatalf("operator.url %q %v, want the vessel's metrics address", b, err)
	}
	tok, err := os.ReadFile(filepath.Join(out, ".generated", "operator.token"))
	if err != nil {
		t.Fatal(err)
	}
	// The deployment's API on loopback stands in for the metrics address.
	api := operatorAPI(t, strings.TrimSpace(string(tok)))
	if err := os.WriteFile(urlFile, []byte(api.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noStack := t.TempDir()
	t.Chdir(out)
	if code, stdout, errs := run("turns", "--state", noStack); code != 0 || stdout != "no turns running\n" {
		t.Fatalf("turns with only the generated files: %d %q %q", code, stdout, errs)
	}
	api.Close()
	if code, _, errs := run("turns", "--state", noStack); code != 1 || !strings.Contains(errs, "VESSEL_OPERATOR_URL") || !strings.Contains(errs, "--vessel") {
		t.Fatalf("API down: %d %q, want what to set", code, errs)
	}
	if err := os.Remove(urlFile); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run("turns", "--state", noStack); code != 1 || !strings.Contains(errs, "operator.url") || !strings.Contains(errs, "--vessel") {
		t.Fatalf("no operator.url: %d %q, want what to set", code, errs)
	}
}

// deployExample runs deploy on the example deployment into a temporary
// folder, with extra flags, and returns the folder.
func deployExample(t *testing.T, extra ...string) string {
	t.Helper()
	out := t.TempDir()
	seccomp := filepath.Join(out, "sandbox.json")
	if err := os.WriteFile(seccomp, []byte(`{"defaultAction":"SCMP_ACT_ERRNO"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"deploy", exampleDeployment, "--out", out, "--seccomp", seccomp}, extra...)
	if code, stdout, errOut := run(args...); code != 0 {
		t.Fatalf("deploy: exit %d\n%s%s", code, stdout, errOut)
	}
	return out
}
