package healthcheck

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMain: against real loopback servers, a 200 is healthy, anything else
// or nothing listening is not (exit 1, the reason on stderr); WantOK also
// needs ok:true; a token is read from its _FILE variable and presented.
func TestMainExits(t *testing.T) {
	var ok atomic.Bool
	ok.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			if ok.Load() {
				_, _ = w.Write([]byte(`{"ok":true,"checks":{}}`))
			} else {
				_, _ = w.Write([]byte(`{"ok":false,"checks":{"egress":{"ok":false,"error":"refused"}}}`))
			}
		case "/status":
			if r.Header.Get("Authorization") != "Bearer tok-1" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	tokFile := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(tokFile, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"T_FILE": tokFile}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	run := func(c Check, args ...string) (int, string) {
		var errb bytes.Buffer
		return Main("svc", c, args, getenv, &errb), errb.String()
	}
	if code, msg := run(Check{URL: srv.URL + "/health", WantOK: true}); code != 0 {
		t.Fatalf("healthy: %d %s", code, msg)
	}
	ok.Store(false)
	if code, msg := run(Check{URL: srv.URL + "/health", WantOK: true}); code != 1 || !strings.Contains(msg, "egress") {
		t.Fatalf("ok false: %d %s", code, msg)
	}
	if code, _ := run(Check{URL: srv.URL + "/health"}); code != 0 {
		t.Fatal("without WantOK a 200 is healthy")
	}
	if code, msg := run(Check{URL: "http://unused"}, srv.URL+"/other"); code != 1 || !strings.Contains(msg, "503") {
		t.Fatalf("503: %d %s", code, msg)
	}
	if code, msg := run(Check{URL: srv.URL + "/status", TokenVar: "T"}); code != 0 {
		t.Fatalf("token: %d %s", code, msg)
	}
	delete(env, "T_FILE")
	if code, msg := run(Check{URL: srv.URL + "/status", TokenVar: "T"}); code != 1 || !strings.Contains(msg, "no token") {
		t.Fatalf("no token: %d %s", code, msg)
	}
	ln := srv.Listener.Addr().String()
	srv.Close()
	if code, _ := run(Check{URL: "http://" + ln + "/health"}); code != 1 {
		t.Fatal("nothing listening is healthy")
	}
	for _, bad := range [][]string{{"--url", "x"}, {"a", "b"}} {
		if code, _ := run(Check{URL: "http://127.0.0.1:1/"}, bad...); code != 2 {
			t.Errorf("%v: exit %d", bad, code)
		}
	}
	if code, _ := run(Check{URL: "ftp://127.0.0.1/"}); code != 1 {
		t.Error("an ftp URL probed")
	}
}
