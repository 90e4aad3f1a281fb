package webproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elazarl/goproxy"
	"go.uber.org/zap"
)

// hijackWriter hands goproxy a connection that remembers the bytes the HTTP
// server had already read past the CONNECT request (a ClientHello sent in
// the same write). goproxy passes ConnectHijack handlers the bare
// connection and would drop them.
type hijackWriter struct {
	http.ResponseWriter
	hj http.Hijacker
}

func (h hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := h.hj.Hijack()
	if err != nil {
		return nil, nil, fmt.Errorf("webproxy: hijack: %w", err)
	}
	hc := &hijackedConn{Conn: c}
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		hc.pending = append([]byte(nil), b...)
	}
	// Whatever reads hc or rw from here on must not see those bytes twice:
	// hc replays them, rw starts empty.
	return hc, bufio.NewReadWriter(bufio.NewReaderSize(hc, 16), rw.Writer), nil
}

// hijackedConn is a client connection plus the bytes already read from it.
type hijackedConn struct {
	net.Conn
	pending []byte
}

func (c *hijackedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// connectAction takes over an allowed CONNECT: dial the checked address,
// answer, and relay bytes ourselves.
func (p *Proxy) connectAction(d *decision) *goproxy.ConnectAction {
	return &goproxy.ConnectAction{
		Action: goproxy.ConnectHijack,
		Hijack: func(req *http.Request, client net.Conn, _ *goproxy.ProxyCtx) { p.tunnel(req, client, d) },
	}
}

// tunnel runs one CONNECT tunnel until both directions have ended.
func (p *Proxy) tunnel(req *http.Request, client net.Conn, d *decision) {
	var pending []byte
	if hc, ok := client.(*hijackedConn); ok {
		client, pending = hc.Conn, hc.pending
	}
	origin, err := p.dial(req.Context(), d)
	if err != nil {
		d.status, d.reason = http.StatusBadGateway, "connect-failed"
		p.logDecision(d, err)
		_ = denial(req, d).Write(client)
		_ = client.Close()
		return
	}
	p.logDecision(d, nil)
	p.opt.Metrics.openTunnels.Inc()
	defer p.opt.Metrics.openTunnels.Dec()
	if _, err := io.WriteString(client, connectOK(req)); err != nil {
		_ = client.Close()
		_ = origin.Close()
		return
	}
	var (
		wg    sync.WaitGroup
		moved atomic.Uint64
	)
	done := make(chan struct{})
	go p.watchIdle(req, &moved, done, client, origin)
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.relay(origin, client, pending, &moved)
	}()
	p.relay(client, origin, nil, &moved)
	wg.Wait()
	close(done)
	_ = client.Close()
	_ = origin.Close()
}

// watchIdle closes both ends of a tunnel once no chunk has moved in either
// direction for TunnelIdleTimeout; it checks a few times per period, so a
// tunnel ends between one and 1.25 periods after its last byte.
func (p *Proxy) watchIdle(req *http.Request, moved *atomic.Uint64, done <-chan struct{}, conns ...net.Conn) {
	idle := p.opt.TunnelIdleTimeout
	t := time.NewTicker(idle / 4)
	defer t.Stop()
	last, quietSince := moved.Load(), time.Now()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			if n := moved.Load(); n != last {
				last, quietSince = n, now
				continue
			}
			if now.Sub(quietSince) < idle {
				continue
			}
			p.log.Info("tunnel closed after idling", zap.String("host", req.Host), zap.Duration("idle", idle))
			for _, c := range conns {
				_ = c.Close()
			}
			return
		}
	}
}

// relay copies src to dst (after pending, bytes src already sent). At src's
// EOF it half-closes dst, so the far end sees the FIN while the other
// direction keeps flowing; on an error it closes both connections, which
// ends the other direction too.
func (p *Proxy) relay(dst, src net.Conn, pending []byte, moved *atomic.Uint64) {
	var (
		err  error
		n, m int64
	)
	if len(pending) > 0 {
		var w int
		w, err = dst.Write(pending)
		n = int64(w)
	}
	if err == nil {
		m, err = p.bufs.copyConn(dst, src, moved)
	}
	p.opt.Metrics.bytes.WithLabelValues("tunnel").Add(float64(n + m))
	if err != nil {
		p.log.Debug("tunnel ended with an error", zap.Error(err))
		_ = dst.Close()
		_ = src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = dst.Close()
}

// connectOK is the tunnel's status line, in the client's HTTP version.
func connectOK(r *http.Request) string {
	major, minor := r.ProtoMajor, r.ProtoMinor
	if major == 0 {
		major, minor = 1, 1
	}
	return fmt.Sprintf("HTTP/%d.%d 200 Connection established\r\n\r\n", major, minor)
}
