package a2aserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/admission"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// slowBody opens a connection and sends a JSON-RPC request's headers as
// app key/user, declaring a body of declared bytes, and the first few
// bytes of it; the rest never comes. It returns the connection.
func slowBody(t *testing.T, h *harness, key, user string, declared int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /agents/%s HTTP/1.1\r\nHost: vessel\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nX-Vessel-User: %s\r\nContent-Length: %d\r\n\r\n{\"jsonrpc\"",
		h.agentID, key, user, declared)
	return c
}

// answerOf reads the answer on a connection a slow body was refused on.
func answerOf(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestSlowBodiesBoundedByBytesReceived: slow bodies on loopback, each
// declaring 1 MiB and sending 10 bytes, from one app under distinct user
// names. They hold memory for what they sent, not what they declared; the
// app's requests in flight stop at max_requests_per_app however many user
// names it invents (429 naming the limit, with Retry-After), while another
// app is still served.
func TestSlowBodiesBoundedByBytesReceived(t *testing.T) {
	const inFlight = 48
	h := newHarness(t, limitsOf(settings.Limits{MaxRequestsPerOwner: 4, MaxRequestsPerApp: inFlight, MaxStreamsPerOwner: 4,
		RequestsPerSecondPerApp: 1e6, RequestBurstPerApp: 1e6}))
	before := heapInUse()
	for i := range inFlight {
		slowBody(t, h, h.keyApp1, fmt.Sprintf("user-%d", i), 1<<20)
	}
	waitFor(t, "every slow body admitted", func() bool { return h.srv.Admission().Tracked() == inFlight })
	// One more, under yet another name: the app is full.
	extra := slowBody(t, h, h.keyApp1, "one-user-too-many", 1<<20)
	resp, body := answerOf(t, extra)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, admission.LimitRequestsApp) {
		t.Fatalf("request %d of one app: %d %s", inFlight+1, resp.StatusCode, body)
	}
	// Every slow body has been admitted and is being read now: what they
	// hold is what they sent (10 bytes each), not the 48 MiB declared.
	// Buffers, goroutines and connections take some KiB each; 1 MiB per
	// request, as reserved before, would be 48 MiB.
	var grown uint64
	for range 5 {
		if now := heapInUse(); now > before {
			grown = max(grown, now-before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if grown > 16<<20 {
		t.Fatalf("%d slow bodies of 10 bytes grew the heap by %d MiB", inFlight, grown>>20)
	}
	// Another app is served meanwhile.
	st, _, out := h.rawPost("/agents/"+h.agentID, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`,
		map[string]string{"Authorization": "Bearer " + h.keyApp2, "X-Vessel-User": "bob"})
	if st == http.StatusTooManyRequests {
		t.Fatalf("another app was refused: %d %s", st, out)
	}
}
