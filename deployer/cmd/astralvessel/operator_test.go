package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
