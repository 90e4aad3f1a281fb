package webproxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/egress/guard"
)

// BenchmarkSmallHTTP is a profiling aid for the per-request cost of the
// absolute-URI path (make bench-egress is the real benchmark).
func BenchmarkSmallHTTP(b *testing.B) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello")
	}))
	defer origin.Close()
	op := netip.MustParseAddrPort(origin.Listener.Addr().String()).Port()
	pol, _ := guard.New(guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{op}})
	dials := &countDialer{}
	p, _ := New(Options{Policy: pol, Logger: zap.NewNop(), Dialer: dials})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: p}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()})}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := c.Get(origin.URL + "/x")
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.StopTimer()
	if dials.n.Load() > 2 {
		b.Fatalf("%d origin dials for %d requests: connections are not reused", dials.n.Load(), b.N)
	}
}

type countDialer struct{ n atomic.Int64 }

func (c *countDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.n.Add(1)
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// BenchmarkConnectNewConn profiles one CONNECT (decision, dial, tunnel) per
// request, the webfetch pattern.
func BenchmarkConnectNewConn(b *testing.B) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello")
	}))
	defer origin.Close()
	oa := origin.Listener.Addr().String()
	op := netip.MustParseAddrPort(oa).Port()
	pol, _ := guard.New(guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{op}})
	p, _ := New(Options{Policy: pol, Logger: zap.NewNop()})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: p}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	buf := make([]byte, 4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.WriteString(c, "CONNECT "+oa+" HTTP/1.1\r\nHost: "+oa+"\r\n\r\n")
		n, err := c.Read(buf)
		if err != nil || n < 12 || string(buf[9:12]) != "200" {
			b.Fatalf("connect: %v %q", err, buf[:n])
		}
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
}
