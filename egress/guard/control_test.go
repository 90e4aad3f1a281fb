package guard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// A dialer carrying DialControl cannot open a socket to a refused address,
// whoever asks; with the allow option the same dial goes through. Only
// loopback is dialled.
func TestDialControl(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := netip.MustParseAddrPort(ln.Addr().String()).Port()

	deny, _ := New(Config{AllowPorts: []uint16{port}})
	d := &net.Dialer{ControlContext: deny.DialControl}
	_, err = d.DialContext(context.Background(), "tcp", ln.Addr().String())
	var de *DeniedError
	if !errors.As(err, &de) || de.Reason != ReasonPort {
		t.Fatalf("dial without allow: %v", err)
	}

	allow, _ := New(Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{port}})
	d = &net.Dialer{ControlContext: allow.DialControl}
	c, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()

	// Allowed by host name only: the name must travel with the dial.
	byHost, _ := New(Config{AllowHosts: []string{"origin.test"}, AllowPorts: []uint16{port}})
	d = &net.Dialer{ControlContext: byHost.DialControl}
	if _, err := d.DialContext(context.Background(), "tcp", ln.Addr().String()); !errors.As(err, &de) {
		t.Fatalf("dial without the host: %v", err)
	}
	c, err = d.DialContext(WithHost(context.Background(), "origin.test"), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial with the host: %v", err)
	}
	c.Close()

	if err := allow.DialControl(context.Background(), "udp", "127.0.0.1:53", nil); err == nil {
		t.Fatal("udp allowed")
	}
}
