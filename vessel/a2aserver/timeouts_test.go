package a2aserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// TestSilentModelKeepAliveAndTimeout: a model that sends its headers and
// then nothing ends the turn with model_error once the first-byte timeout
// has passed on every attempt, and the caller's stream carries keep-alive
// comments meanwhile.
func TestSilentModelKeepAliveAndTimeout(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select { // SSE comments are not progress
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := fmt.Fprint(w, ": waiting\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer silent.Close()
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.KeepAlive = 200 * time.Millisecond }, func(d *settings.Deployment) {
		d.Agents[0].Manifest.Model.BaseURL = silent.URL + "/v1"
		d.Agents[0].Manifest.Model.FirstByteTimeoutSecs = 1
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, h.url+"/agents/field-guide", strings.NewReader(body))
	for k, v := range appHdr(h.keyApp1, "alice") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := h.httpc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	keepAlives, last := 0, ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == ": keep-alive":
			keepAlives++
		case strings.HasPrefix(line, "data:"):
			last = line
		}
	}
	// Four attempts of 1 s plus 1.75 s of backoff: several keep-alive periods.
	if keepAlives < 5 {
		t.Fatalf("%d keep-alive comments while the model was silent", keepAlives)
	}
	if !strings.Contains(last, `"turn.finished"`) || !strings.Contains(last, `"model_error"`) || !strings.Contains(last, "sent no data within 1s") {
		t.Fatalf("last frame %s", last)
	}
}

// TestRequestBodyTimeout: an authenticated caller that holds its body open
// gets 408 when the body timeout passes; a streaming answer that lasts far
// longer than the timeout is not cut by it.
func TestRequestBodyTimeout(t *testing.T) {
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.BodyTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /agents/field-guide HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nX-Vessel-User: alice\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", h.keyApp1)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang fails the test instead of blocking it
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not arrive in time") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}

	// 50 pieces 100 ms apart: about 5 s of streaming under a 300 ms body timeout.
	evs, err := h.stream(as(h.keyApp1, "alice"), "field-guide", &a2a.SendMessageRequest{Message: textMsg("#script:slowtext")})
	if err != nil {
		t.Fatal(err)
	}
	if state, data := lastEvent(t, evs); state != a2a.TaskStateCompleted || data["status"] != "ok" {
		t.Fatalf("final: %s %v", state, data)
	}
}
