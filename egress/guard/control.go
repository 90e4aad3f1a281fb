package guard

import (
	"context"
	"fmt"
	"net/netip"
	"syscall"
)

type hostKey struct{}

// WithHost records the name a dial is for, so DialControl can apply the
// host allow-list.
func WithHost(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, hostKey{}, host)
}

// DeniedError is a dial refused at the socket by DialControl.
type DeniedError struct {
	Addr   netip.AddrPort
	Reason string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("egress guard: connection to %s refused: %s", e.Addr, e.Reason)
}

// DialControl is a net.Dialer ControlContext hook: it runs the policy again
// on the exact address the kernel is about to connect to, so a code path
// that dials anything else (a name, an unchecked address) still cannot get
// a socket to a refused destination.
func (p *Policy) DialControl(ctx context.Context, network, address string, _ syscall.RawConn) error {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("egress guard: network %q refused", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress guard: dial address %q: %w", address, err)
	}
	host, _ := ctx.Value(hostKey{}).(string)
	a := ap.Addr().Unmap()
	if d := p.Check(host, a, ap.Port()); !d.Allow {
		return &DeniedError{Addr: netip.AddrPortFrom(a, ap.Port()), Reason: d.Reason}
	}
	return nil
}
