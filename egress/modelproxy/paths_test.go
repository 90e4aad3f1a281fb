package modelproxy

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a real upstream on loopback that keeps the request target
// and Authorization of every request it receives.
type recorder struct {
	mu   sync.Mutex
	seen []string
	auth []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.seen = append(rec.seen, r.RequestURI)
	rec.auth = append(rec.auth, r.Header.Get("Authorization"))
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"object":"list","data":[]}`))
}

func (rec *recorder) take() ([]string, []string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	s, a := rec.seen, rec.auth
	rec.seen, rec.auth = nil, nil
	return s, a
}

// rawGet sends target byte for byte (no client-side cleaning or
// escaping) and returns the status and the X-Egress-Error header.
func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + target + " HTTP/1.1\r\nHost: egress\r\nAuthorization: Bearer " + testToken + "\r\nConnection: close\r\n\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Egress-Error")
}

// hostilePaths climb out of /v1 (and so out of the upstream's base) in
// the ways an upstream or a proxy in front of it might resolve.
var hostilePaths = []string{
	"/v1/../admin",
	"/v1/..",
	"/v1/./models",
	"/v1/chat/../../admin",
	"/v1/%2e%2e/admin",
	"/v1/%2E%2E/admin",
	"/v1/%2e%2E/admin",
	"/v1/.%2e/admin",
	"/v1/%2e./admin",
	"/v1/%2e/models",
	"/v1/models/%2e%2e/%2e%2e/%2e%2e/keys",
	"/v1/..%2fadmin",
	"/v1/..%2Fadmin",
	"/v1/%2e%2e%2fadmin",
	"/v1/a%2f..%2f..%2fadmin",
	"/v1/..%5cadmin",
	"/v1/..%5Cadmin",
	"/v1/%2e%2e%5cadmin",
	`/v1/..\admin`,
	`/v1/models\..\..\admin`,
	"/v1/%252e%252e/admin",
	"/v1/%25252e%25252e/admin",
	"/v1/..%252fadmin",
	"/v1/..;/admin",
	"/v1/%2e%2e;x=1/admin",
	"/v1/models%00",
	"/v1/models%0d%0aX-Injected:%201",
	"/v1/" + strings.Repeat(encodedDot(4), 2) + "/admin", // ".." encoded 4 times: still decoded
	"/v1/" + strings.Repeat(encodedDot(6), 2) + "/admin", // 6 times: refused as too deep
}

// encodedDot is "." percent-encoded n times (n >= 1).
func encodedDot(n int) string { return "%" + strings.Repeat("25", n-1) + "2e" }

// TestHostilePathsNeverReachTheUpstream: each is refused with 400 and
// logged, and the upstream (a real server that records what it receives)
// never sees it, so the key is never sent with it; plain paths, with dots
// inside names and an encoded space, still go through to exactly base +
// rest.
func TestHostilePathsNeverReachTheUpstream(t *testing.T) {
	rec := &recorder{}
	up := httptest.NewServer(rec)
	defer up.Close()
	logger, logs := newLogger()
	s := start(t, up.URL+"/base/v1", logger)
	addr := strings.TrimPrefix(s.URL, "http://")

	for _, p := range hostilePaths {
		code, why := rawGet(t, addr, p)
		if code != http.StatusBadRequest || why != "bad_path" {
			t.Errorf("%s: %d %q, want 400 bad_path", p, code, why)
		}
		if seen, _ := rec.take(); len(seen) != 0 {
			t.Errorf("%s reached the upstream as %v", p, seen)
		}
	}
	if n := strings.Count(logs.String(), "path refused"); n != len(hostilePaths) {
		t.Errorf("%d refusals logged for %d hostile paths:\n%s", n, len(hostilePaths), logs.String())
	}

	for p, want := range map[string]string{
		"/v1/models":                    "/base/v1/models",
		"/v1/chat/completions":          "/base/v1/chat/completions",
		"/v1/models/gpt-4.1-mini":       "/base/v1/models/gpt-4.1-mini",
		"/v1/files/a..b/content":        "/base/v1/files/a..b/content",
		"/v1/models/my%20model?limit=2": "/base/v1/models/my%20model?limit=2",
		"/v1/models/...":                "/base/v1/models/...",
		"/v1/models/50%25?q=a/../b":     "/base/v1/models/50%25?q=a/../b",
		"/v1":                           "/base/v1",
	} {
		code, why := rawGet(t, addr, p)
		seen, auth := rec.take()
		if code != http.StatusOK || len(seen) != 1 || seen[0] != want || auth[0] != "Bearer "+testKey {
			t.Errorf("%s: %d %q, upstream saw %v %v, want %s with the key", p, code, why, seen, auth, want)
		}
	}
}

// FuzzPathProblem: whatever path is accepted, the one sent upstream stays
// beneath the base however many times it is decoded.
func FuzzPathProblem(f *testing.F) {
	for _, p := range hostilePaths {
		f.Add(strings.TrimPrefix(p, "/v1/"))
	}
	for _, p := range []string{"models", "chat/completions", "a..b", "%41", "x%2", "%%", ";", "..."} {
		f.Add(p)
	}
	const base = "/base/v1"
	f.Fuzz(func(t *testing.T, rest string) {
		u, err := url.ParseRequestURI("/v1/" + rest)
		if err != nil || u.RawQuery != "" || pathProblem(u.EscapedPath()) != "" {
			return
		}
		out := base + strings.TrimPrefix(u.Path, "/v1")
		s := (&url.URL{Path: out}).EscapedPath()
		for range maxDecodeRounds {
			if c := path.Clean(strings.ReplaceAll(s, `\`, "/")); c != base && !strings.HasPrefix(c, base+"/") {
				t.Fatalf("%q accepted, upstream path %q resolves to %q", rest, s, c)
			}
			for _, seg := range strings.Split(strings.ReplaceAll(s, `\`, "/"), "/") {
				if seg == ".." || seg == "." {
					t.Fatalf("%q accepted, upstream path %q has a dot segment", rest, s)
				}
			}
			d, err := url.PathUnescape(s)
			if err != nil {
				return
			}
			s = d
		}
	})
}
