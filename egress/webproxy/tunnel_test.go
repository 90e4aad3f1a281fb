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
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/egress/guard"
)

// tcpOrigin is a loopback TCP server the test owns; handle runs for every
// accepted connection.
type tcpOrigin struct {
	addr     netip.AddrPort
	accepted atomic.Int32
}

func newTCPOrigin(t *testing.T, handle func(c *net.TCPConn)) *tcpOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &tcpOrigin{addr: netip.MustParseAddrPort(ln.Addr().String())}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			o.accepted.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c.(*net.TCPConn))
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return o
}

// allowLoopback is a harness whose policy reaches the origin only through
// the explicit allow options, as an operator would configure an intranet.
func allowLoopback(t *testing.T, o netip.AddrPort) *harness {
	t.Helper()
	cfg := guard.Config{
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		AllowPorts: []uint16{o.Port()},
	}
	return newHarness(t, cfg, nil, o.String())
}

// openTunnel sends CONNECT (and early, in the same write) and returns the
// connection once the proxy answered 200. Reads must go through br.
func openTunnel(t *testing.T, h *harness, authority string, early []byte) (*net.TCPConn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A hang guard only: no test depends on how long anything takes.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	req := "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"
	if _, err := c.Write(append([]byte(req), early...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", authority, err)
	}
	if resp.StatusCode != http.StatusOK {
		var lines []string
		for _, e := range h.logs.All() {
			lines = append(lines, fmt.Sprintf("%s %v", e.Message, e.ContextMap()))
		}
		t.Fatalf("CONNECT %s: %s (%s %s); proxy log: %v", authority, resp.Status,
			resp.Header.Get(HeaderDenied), resp.Header.Get(HeaderError), lines)
	}
	return c.(*net.TCPConn), br
}

// waitNoTunnels waits until no relay goroutine is left and every big
// buffer is back: each tunnel ended both directions and released its
// buffers.
func waitNoTunnels(t *testing.T, p *Proxy) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		relays := strings.Count(stacks, "webproxy.(*Proxy).relay(")
		if relays == 0 && len(p.bufs.slots) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d relay goroutines and %d big buffers still in use", relays, len(p.bufs.slots))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Bytes the client sends in the same write as CONNECT (a TLS ClientHello)
// reach the origin first; the tunnel goes only to the allow-listed
// loopback origin, dialled by address, and is logged as allowed.
func TestTunnelEarlyClientBytes(t *testing.T) {
	early := []byte("early bytes sent with the CONNECT request")
	o := newTCPOrigin(t, func(c *net.TCPConn) {
		got := make([]byte, len(early))
		if _, err := io.ReadFull(c, got); err != nil {
			return
		}
		_, _ = c.Write(append([]byte("got:"), got...))
	})
	h := allowLoopback(t, o.addr)
	_, br := openTunnel(t, h, o.addr.String(), early)
	want := "got:" + string(early)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != want {
		t.Fatalf("origin answered %q, %v; want %q", got, err, want)
	}
	if d := h.dial.got(); len(d) != 1 || d[0] != o.addr.String() {
		t.Fatalf("dials %v, want [%s]", d, o.addr)
	}
	lines := h.logs.FilterMessage("egress decision").All()
	if len(lines) != 1 {
		t.Fatalf("%d decision lines", len(lines))
	}
	m := lines[0].ContextMap()
	if m["decision"] != "allow" || m["dialed"] != o.addr.String() || m["reason"] != guard.ReasonAllowCIDR || m["method"] != http.MethodConnect {
		t.Fatalf("decision line %v", m)
	}
	for _, k := range []string{"dns_ms", "connect_ms", "resolved"} {
		if _, ok := m[k]; !ok {
			t.Errorf("decision line lacks %s: %v", k, m)
		}
	}
}

// A refused CONNECT never reaches the origin: no dial, nothing accepted,
// the 403 carries the reason, and the proxy closes the connection.
func TestTunnelDeniedWithoutConnection(t *testing.T) {
	o := newTCPOrigin(t, func(c *net.TCPConn) {})
	// The stub dialer would connect, and the port is an operator port, but
	// loopback is not allow-listed: refused.
	h := newHarness(t, guard.Config{AllowPorts: []uint16{o.addr.Port()}}, nil, o.addr.String())
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	// Early bytes too: they must not be forwarded anywhere.
	_, _ = io.WriteString(c, "CONNECT "+o.addr.String()+" HTTP/1.1\r\nHost: "+o.addr.String()+"\r\n\r\nsecret")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != guard.ReasonPort {
		t.Fatalf("%s %q", resp.Status, resp.Header.Get(HeaderDenied))
	}
	if _, err := io.ReadAll(br); err != nil {
		t.Fatalf("proxy did not close the refused connection: %v", err)
	}
	if d := h.dial.got(); len(d) != 0 {
		t.Fatalf("refused CONNECT dialled %v", d)
	}
	if n := o.accepted.Load(); n != 0 {
		t.Fatalf("origin accepted %d connections", n)
	}
	if len(h.logs.FilterField(zap.String("decision", "deny")).All()) != 1 {
		t.Fatalf("no deny line: %v", h.logs.All())
	}
}

// Each side's FIN crosses the tunnel on its own while the other direction
// keeps flowing, and the tunnel ends once both directions have.
func TestTunnelHalfClose(t *testing.T) {
	t.Run("client-first", func(t *testing.T) {
		o := newTCPOrigin(t, func(c *net.TCPConn) {
			req, err := io.ReadAll(c) // until the client's FIN
			if err != nil {
				return
			}
			_, _ = c.Write(append([]byte("reply to "), req...))
		})
		h := allowLoopback(t, o.addr)
		c, br := openTunnel(t, h, o.addr.String(), nil)
		_, _ = io.WriteString(c, "request")
		if err := c.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(br)
		if err != nil || string(got) != "reply to request" {
			t.Fatalf("got %q, %v", got, err)
		}
		waitNoTunnels(t, h.proxy)
	})
	t.Run("origin-first", func(t *testing.T) {
		after := make(chan string, 1)
		o := newTCPOrigin(t, func(c *net.TCPConn) {
			_, _ = io.WriteString(c, "banner")
			_ = c.CloseWrite()
			b, _ := io.ReadAll(c)
			after <- string(b)
		})
		h := allowLoopback(t, o.addr)
		c, br := openTunnel(t, h, o.addr.String(), nil)
		got, err := io.ReadAll(br) // the origin's FIN reaches the client
		if err != nil || string(got) != "banner" {
			t.Fatalf("got %q, %v", got, err)
		}
		// The client can still send after the origin's FIN.
		_, _ = io.WriteString(c, "sent after the origin finished")
		_ = c.CloseWrite()
		if s := <-after; s != "sent after the origin finished" {
			t.Fatalf("origin got %q", s)
		}
		waitNoTunnels(t, h.proxy)
	})
}

// A reset on one side ends the tunnel: the other side is closed too.
func TestTunnelResetEndsBothSides(t *testing.T) {
	o := newTCPOrigin(t, func(c *net.TCPConn) {
		// Reset only once the tunnel is up: a reset racing the proxy's
		// connect makes the dial itself fail (a 502, tested elsewhere).
		one := make([]byte, 1)
		if _, err := io.ReadFull(c, one); err != nil {
			return
		}
		_, _ = io.WriteString(c, "bye")
		_ = c.SetLinger(0) // close with RST
	})
	h := allowLoopback(t, o.addr)
	c, br := openTunnel(t, h, o.addr.String(), nil)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(br) // EOF or reset, but it must end
	if len(b) > 3 {
		t.Fatalf("got %q", b)
	}
	waitNoTunnels(t, h.proxy)
}

// Tens of megabytes in both directions at once arrive intact.
func TestTunnelLargeTransferIntegrity(t *testing.T) {
	const down, up = 24 << 20, 8 << 20
	payload := make([]byte, down)
	_, _ = rand.Read(payload)
	wantDown := sha256.Sum256(payload)
	upload := make([]byte, up)
	_, _ = rand.Read(upload)
	wantUp := sha256.Sum256(upload)

	gotUp := make(chan [32]byte, 1)
	o := newTCPOrigin(t, func(c *net.TCPConn) {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			hs := sha256.New()
			_, _ = io.Copy(hs, c)
			var s [32]byte
			copy(s[:], hs.Sum(nil))
			gotUp <- s
		}()
		// Uneven writes, so chunk boundaries do not line up with buffers.
		for off := 0; off < len(payload); {
			n := min(len(payload)-off, 1+off%(300<<10))
			if _, err := c.Write(payload[off : off+n]); err != nil {
				return
			}
			off += n
		}
		_ = c.CloseWrite()
		wg.Wait()
	})
	h := allowLoopback(t, o.addr)
	c, br := openTunnel(t, h, o.addr.String(), nil)
	go func() {
		_, _ = io.Copy(c, bytes.NewReader(upload))
		_ = c.CloseWrite()
	}()
	hs := sha256.New()
	n, err := io.Copy(hs, br)
	if err != nil || n != down {
		t.Fatalf("downloaded %d bytes, %v", n, err)
	}
	if !bytes.Equal(hs.Sum(nil), wantDown[:]) {
		t.Fatal("download checksum differs")
	}
	if s := <-gotUp; s != wantUp {
		t.Fatal("upload checksum differs")
	}
	waitNoTunnels(t, h.proxy)
}

// A client that goes away in the middle of a download ends the tunnel (the
// proxy's writes fail with EPIPE or a reset, which must not kill it) and the
// origin's connection is closed.
func TestTunnelClientGoneMidTransfer(t *testing.T) {
	originDone := make(chan error, 1)
	o := newTCPOrigin(t, func(c *net.TCPConn) {
		chunk := make([]byte, 256<<10)
		for {
			if _, err := c.Write(chunk); err != nil {
				originDone <- err
				return
			}
		}
	})
	h := allowLoopback(t, o.addr)
	c, br := openTunnel(t, h, o.addr.String(), nil)
	if _, err := io.ReadFull(br, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetLinger(0)
	_ = c.Close()
	if err := <-originDone; err == nil {
		t.Fatal("origin kept writing")
	}
	waitNoTunnels(t, h.proxy)
	// The proxy still serves.
	_, br = openTunnel(t, h, o.addr.String(), nil)
	if _, err := io.ReadFull(br, make([]byte, 1<<10)); err != nil {
		t.Fatalf("after a vanished client: %v", err)
	}
}

// A tunnel on which nothing moves for TunnelIdleTimeout is closed at both
// ends, and the closing is logged.
func TestTunnelIdleClosed(t *testing.T) {
	o := newTCPOrigin(t, func(c *net.TCPConn) { _, _ = io.Copy(c, c) })
	h := allowLoopback(t, o.addr)
	h.proxy.opt.TunnelIdleTimeout = time.Second // roomy: the echo below must come first
	c, br := openTunnel(t, h, o.addr.String(), nil)
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo through the tunnel: %q, %v", got, err)
	}
	// Now idle: the next read ends when the proxy closes the tunnel (the
	// 30 s hang guard in openTunnel would fail it otherwise).
	if n, err := br.Read(got); err == nil {
		t.Fatalf("read %d bytes from an idle tunnel, want it closed", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("idle tunnel was never closed by the proxy")
	}
	waitNoTunnels(t, h.proxy)
	if h.logs.FilterMessage("tunnel closed after idling").Len() != 1 {
		t.Fatalf("want one idle-close log line, got %v", h.logs.All())
	}
}

// Bytes flowing in one direction only keep the tunnel open past the idle
// timeout: a long download with nothing sent up is not idle.
func TestTunnelOneWayTrafficIsNotIdle(t *testing.T) {
	const pieces = 25
	o := newTCPOrigin(t, func(c *net.TCPConn) {
		for i := 0; i < pieces; i++ {
			if _, err := c.Write([]byte{byte('a' + i%26)}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	h := allowLoopback(t, o.addr)
	h.proxy.opt.TunnelIdleTimeout = time.Second
	_, br := openTunnel(t, h, o.addr.String(), nil)
	got, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("reading the download: %v", err)
	}
	if len(got) != pieces {
		t.Fatalf("got %d of %d bytes: the tunnel was cut while data flowed", len(got), pieces)
	}
	if h.logs.FilterMessage("tunnel closed after idling").Len() != 0 {
		t.Fatal("a tunnel with data flowing was logged as idle")
	}
}
