//go:build !linux

package webproxy

import (
	"net"
	"sync/atomic"
)

// copySockets is the Linux fast path; elsewhere the generic copy runs.
func (b *buffers) copySockets(dst, src net.Conn, _ *atomic.Uint64) (int64, bool, error) {
	return 0, false, nil
}
