package listen

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestBusyAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	_, err = TCP(context.Background(), addr, "--listen")
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Addr != addr {
		t.Fatalf("error %T %v, want *InUseError", err, err)
	}
	if msg := err.Error(); msg != addr+" is already in use (another process listens there): stop that process or pass --listen with another address" || strings.Contains(msg, "\n") {
		t.Errorf("message %q", msg)
	}
	ln, err := TCP(context.Background(), "127.0.0.1:0", "--listen")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if _, err := TCP(context.Background(), "256.0.0.1:1", "--listen"); err == nil || errors.As(err, &inUse) || !strings.Contains(err.Error(), "256.0.0.1:1") {
		t.Errorf("bad address: %v", err)
	}
}
