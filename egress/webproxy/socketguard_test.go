package webproxy

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/astraldeep/astralvessel-go/egress/guard"
)

// TestDefaultDialerGuardsTheSocket: the proxy's own dialer runs the policy
// again at the socket, on the address actually connected to, so a dial
// that skipped the request-level check still cannot reach a refused
// address; and the forwarding transport never dials without a decision.
// Only a loopback listener is dialled, and it must accept nothing.
func TestDefaultDialerGuardsTheSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := netip.MustParseAddrPort(ln.Addr().String()).Port()
	pol, err := guard.New(guard.Config{AllowPorts: []uint16{port}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.opt.Dialer.DialContext(context.Background(), "tcp", ln.Addr().String())
	var de *guard.DeniedError
	if !errors.As(err, &de) {
		t.Fatalf("default dialer reached a loopback address the policy refuses: %v", err)
	}
	if _, err := p.tr.DialContext(context.Background(), "tcp", ln.Addr().String()); err == nil {
		t.Fatal("the forwarding transport dialled without a policy decision")
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections", n)
	}
}
