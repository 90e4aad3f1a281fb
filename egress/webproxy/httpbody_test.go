package webproxy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// httpOrigin serves the body shapes an absolute-URI request can meet.
func httpOrigin(t *testing.T, big []byte) (*httptest.Server, netip.AddrPort) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/length", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		_, _ = w.Write(big)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		// No length and several flushes: chunked on the wire.
		for off := 0; off < len(big); off += 700 << 10 {
			_, _ = w.Write(big[off:min(len(big), off+700<<10)])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		// An HTTP/1.0-style answer: no length, the body ends at close.
		c, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n")
		_, _ = bw.Write(big)
		_ = bw.Flush()
	})
	mux.HandleFunc("/head", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1234")
		if r.Method != http.MethodHead {
			_, _ = w.Write(make([]byte, 1234))
		}
	})
	mux.HandleFunc("/204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/304", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusNotModified)
	})
	o := httptest.NewServer(mux)
	t.Cleanup(o.Close)
	return o, netip.MustParseAddrPort(o.Listener.Addr().String())
}

// Content-length, chunked and close-delimited bodies, HEAD, 204 and 304 all
// cross the proxy intact, on one kept-alive client connection.
func TestHTTPBodiesAndKeepAlive(t *testing.T) {
	big := make([]byte, 5<<20+12345)
	_, _ = rand.Read(big)
	want := sha256.Sum256(big)
	_, oa := httpOrigin(t, big)
	h := allowLoopback(t, oa)
	base := "http://" + oa.String()

	var conns, reused int
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		conns++
		if i.Reused {
			reused++
		}
	}}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL), DisableCompression: true}}
	do := func(method, path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s: body: %v", method, path, err)
		}
		return resp, b
	}

	for _, path := range []string{"/length", "/chunked", "/204", "/length", "/304", "/chunked"} {
		resp, b := do(http.MethodGet, path)
		switch path {
		case "/204", "/304":
			if resp.StatusCode != map[string]int{"/204": 204, "/304": 304}[path] || len(b) != 0 {
				t.Fatalf("%s: %s with %d bytes", path, resp.Status, len(b))
			}
			if path == "/304" && resp.Header.Get("ETag") != `"v1"` {
				t.Fatalf("304 lost its ETag: %v", resp.Header)
			}
		default:
			if resp.StatusCode != 200 || sha256.Sum256(b) != want {
				t.Fatalf("%s: %s, %d bytes, checksum differs", path, resp.Status, len(b))
			}
		}
		if path == "/length" && resp.ContentLength != int64(len(big)) {
			t.Fatalf("Content-Length %d, want %d", resp.ContentLength, len(big))
		}
	}
	resp, b := do(http.MethodHead, "/head")
	if resp.StatusCode != 200 || resp.ContentLength != 1234 || len(b) != 0 {
		t.Fatalf("HEAD: %s, length %d, %d body bytes", resp.Status, resp.ContentLength, len(b))
	}
	// Every request after the first reused the client's connection, and the
	// proxy reused its one origin connection.
	if conns != 7 || reused != 6 {
		t.Fatalf("%d requests, %d on a reused connection", conns, reused)
	}
	if d := h.dial.got(); len(d) != 1 {
		t.Fatalf("origin dials %v, want one kept-alive connection", d)
	}

	// A close-delimited answer ends at the origin's close; the client's
	// connection to the proxy survives it.
	resp, b = do(http.MethodGet, "/close")
	if resp.StatusCode != 200 || sha256.Sum256(b) != want {
		t.Fatalf("/close: %s, %d bytes, checksum differs", resp.Status, len(b))
	}
	resp, b = do(http.MethodGet, "/length")
	if resp.StatusCode != 200 || sha256.Sum256(b) != want {
		t.Fatalf("/length after /close: %s, %d bytes", resp.Status, len(b))
	}
	if reused != 8 {
		t.Fatalf("client connection not reused after a close-delimited answer (%d of %d)", reused, conns)
	}
	waitNoTunnels(t, h.proxy) // every big buffer is back
}

// A streamed answer is passed on as it arrives, not when the proxy's
// buffer fills: the origin sends its second part only after the client has
// read the first.
func TestHTTPStreamsWithoutBuffering(t *testing.T) {
	next := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "data: second\n\n")
	}))
	defer origin.Close()
	h := allowLoopback(t, netip.MustParseAddrPort(origin.Listener.Addr().String()))
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL)}}
	resp, err := c.Get(origin.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	got := make(chan string, 1)
	go func() {
		line, _ := br.ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "data: first\n" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(20 * time.Second): // hang guard, not a timing check
		t.Fatal("the first event never arrived: the proxy buffered the stream")
	}
	close(next)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: second\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// A 101 answer (WebSocket upgrade) still hands the raw connection through.
func TestHTTPUpgradeStillRelayed(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = bw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		_ = bw.Flush()
		b := make([]byte, 4)
		if _, err := io.ReadFull(bw, b); err == nil {
			_, _ = c.Write(bytes.ToUpper(b))
		}
	}))
	defer origin.Close()
	oa := netip.MustParseAddrPort(origin.Listener.Addr().String())
	h := allowLoopback(t, oa)
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	u := &url.URL{Scheme: "http", Host: oa.String(), Path: "/ws"}
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n", u, u.Host)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	_, _ = io.WriteString(c, "ping")
	b := make([]byte, 4)
	if _, err := io.ReadFull(br, b); err != nil || string(b) != "PING" {
		t.Fatalf("through the upgraded connection: %q %v", b, err)
	}
}
