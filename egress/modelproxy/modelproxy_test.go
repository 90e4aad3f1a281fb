package modelproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

const (
	testKey   = "sk-test-REAL-MODEL-KEY-0123456789"
	testToken = "egress-token-abc"
)

// syncBuf collects every log byte the handler writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuf) Sync() error { return nil }
func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newLogger() (*zap.Logger, *syncBuf) {
	buf := &syncBuf{}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), buf, zapcore.DebugLevel)
	return zap.New(core), buf
}

func start(t *testing.T, upstream string, logger *zap.Logger) *httptest.Server {
	t.Helper()
	h, err := New(Config{Upstream: upstream, Key: testKey, Token: testToken, AllowHTTP: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func do(t *testing.T, method, url, token string, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestConfigValidation(t *testing.T) {
	if _, err := New(Config{Upstream: "http://model.test/v1", Token: "t"}); err == nil || !strings.Contains(err.Error(), "VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM") {
		t.Fatalf("plain HTTP upstream accepted: %v", err)
	}
	if _, err := New(Config{Upstream: "https://model.test/v1"}); err == nil {
		t.Fatal("missing token accepted")
	}
	for _, u := range []string{"", "model.test/v1", "ftp://model.test", "https://u:p@model.test/v1", "https://model.test/v1#x"} {
		if _, err := New(Config{Upstream: u, Token: "t"}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	if _, err := New(Config{Upstream: "https://model.test/v1", Token: "t", Key: "k"}); err != nil {
		t.Fatal(err)
	}
}

func TestTokenKeyAndPath(t *testing.T) {
	type seen struct{ auth, path, query, xff, cookie string }
	got := make(chan seen, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Forwarded-For"), r.Header.Get("Cookie")}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[]}`)
	}))
	defer up.Close()
	logger, logs := newLogger()
	s := start(t, up.URL+"/api/v1/", logger)

	for _, tok := range []string{"", "wrong", testToken + "x", testKey} {
		resp, body := do(t, "GET", s.URL+"/v1/models", tok, nil)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"code":"unauthorized"`) {
			t.Fatalf("token %q: %d %s", tok, resp.StatusCode, body)
		}
	}
	select {
	case s := <-got:
		t.Fatalf("upstream reached without a token: %+v", s)
	default:
	}

	req, _ := http.NewRequest("GET", s.URL+"/v1/models?limit=2", nil)
	req.Header.Set("Authorization", "bearer "+testToken)
	req.Header.Set("X-Forwarded-For", "10.9.9.9")
	req.Header.Set("Cookie", "a=b")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	g := <-got
	if g.auth != "Bearer "+testKey || g.path != "/api/v1/models" || g.query != "limit=2" || g.xff != "" || g.cookie != "" {
		t.Fatalf("upstream saw %+v", g)
	}
	resp, _ = do(t, "GET", s.URL+"/admin", testToken, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("non-/v1 path: %d", resp.StatusCode)
	}
	resp, _ = do(t, "GET", s.URL+"/health", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
	if strings.Contains(logs.String(), testKey) {
		t.Fatal("key in logs")
	}
}

// The first streamed chunk must reach the caller while the upstream is
// still holding the rest back: nothing is buffered.
func TestStreamingUnbuffered(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"first\":true}\n\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer up.Close()
	defer close(release)
	s := start(t, up.URL+"/v1", nil)
	req, _ := http.NewRequest("POST", s.URL+"/v1/chat/completions", strings.NewReader(`{"stream":true}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if !strings.Contains(l, `"first":true`) {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(20 * time.Second): // a deadlock guard, not a timing assertion
		t.Fatal("first chunk held back by the proxy")
	}
}

func TestUpstreamDownAndKeyNeverLeaks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	logger, logs := newLogger()
	s := start(t, dead+"/v1", logger)
	resp, body := do(t, "POST", s.URL+"/v1/chat/completions", testToken, strings.NewReader(`{}`))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, `"code":"upstream_unavailable"`) {
		t.Fatalf("down: %d %s", resp.StatusCode, body)
	}
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}

	// An upstream that echoes the key it was given, in body and header.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Debug", r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
	}))
	defer echo.Close()
	s2 := start(t, echo.URL+"/v1", logger)
	resp, body = do(t, "POST", s2.URL+"/v1/chat/completions", testToken, strings.NewReader(`{}`))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("echo status %d", resp.StatusCode)
	}
	if strings.Contains(body, testKey) || strings.Contains(resp.Header.Get("X-Debug"), testKey) {
		t.Fatalf("key leaked in response: %s / %v", body, resp.Header)
	}
	if !strings.Contains(body, "[redacted]") {
		t.Fatalf("body %s", body)
	}
	if strings.Contains(logs.String(), testKey) {
		t.Fatalf("key in logs: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "model upstream unreachable") {
		t.Fatalf("no upstream error logged: %s", logs.String())
	}
}

func TestRequestSizeBound(t *testing.T) {
	var reached int
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached++
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer up.Close()
	s := start(t, up.URL+"/v1", nil)
	big := bytes.Repeat([]byte("a"), MaxRequestBytes+1)
	resp, body := do(t, "POST", s.URL+"/v1/chat/completions", testToken, bytes.NewReader(big))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("declared length: %d %s", resp.StatusCode, body)
	}
	mu.Lock()
	if reached != 0 {
		t.Fatal("oversized request forwarded")
	}
	mu.Unlock()
	// Same size without a declared length (chunked).
	resp, body = do(t, "POST", s.URL+"/v1/chat/completions", testToken, io.MultiReader(bytes.NewReader(big)))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: %d %s", resp.StatusCode, body)
	}
	// At the limit: forwarded.
	resp, _ = do(t, "POST", s.URL+"/v1/chat/completions", testToken, bytes.NewReader(big[:MaxRequestBytes]))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("at limit: %d", resp.StatusCode)
	}
}

// TestDuplicateAuthorizationRefused: two Authorization headers are refused
// even when one of them carries the right token; the upstream is never
// reached.
func TestDuplicateAuthorizationRefused(t *testing.T) {
	reached := make(chan struct{}, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
	}))
	defer up.Close()
	logger, _ := newLogger()
	s := start(t, up.URL+"/v1", logger)
	for _, pair := range [][2]string{{testToken, "wrong"}, {"wrong", testToken}, {testToken, testToken}} {
		req, _ := http.NewRequest("GET", s.URL+"/v1/models", nil)
		req.Header.Add("Authorization", "Bearer "+pair[0])
		req.Header.Add("Authorization", "Bearer "+pair[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("two Authorization headers %v: %d", pair, resp.StatusCode)
		}
	}
	select {
	case <-reached:
		t.Fatal("the upstream was reached with two Authorization headers")
	default:
	}
}

// TestConfigPrintsNoSecret: a Config printed or logged by mistake shows
// neither the model key nor the callers' token.
func TestConfigPrintsNoSecret(t *testing.T) {
	c := Config{Upstream: "https://model.test/v1", Key: testKey, Token: testToken}
	logger, logs := newLogger()
	logger.Info("config", zap.Any("config", c))
	for _, s := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", &c), logs.String()} {
		if strings.Contains(s, testKey) || strings.Contains(s, testToken) {
			t.Fatalf("a secret printed: %s", s)
		}
	}
}
