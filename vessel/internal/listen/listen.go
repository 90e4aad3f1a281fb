// Package listen opens the TCP listeners of the vessel's commands and turns
// a busy address into one plain sentence.
package listen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// InUseError is a listen address some other process holds.
type InUseError struct {
	Addr string // as asked for
	Flag string // the flag that sets it, e.g. --listen
	Err  error
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("%s is already in use (another process listens there): stop that process or pass %s with another address", e.Addr, e.Flag)
}

func (e *InUseError) Unwrap() error { return e.Err }

// TCP listens on addr. When the address is in use the error is an
// *InUseError naming flag; other errors say which address failed.
func TCP(ctx context.Context, addr, flag string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &InUseError{Addr: addr, Flag: flag, Err: err}
	}
	return nil, fmt.Errorf("listen on %s (%s): %w", addr, flag, err)
}
