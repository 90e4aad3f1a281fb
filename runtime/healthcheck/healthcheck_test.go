package healthcheck

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMain: against real loopback servers, a 200 is healthy, anything else
// or nothing listening is not (exit 1, the reason on stderr); WantOK also
// needs ok:true.
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
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	run := func(c Check, args ...string) (int, string) {
		var errb bytes.Buffer
		return Main("svc", c, args, &errb), errb.String()
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
