//go:build !linux

package webproxy

import "net"

// copySockets is the Linux fast path; elsewhere the generic copy runs.
func (b *buffers) copySockets(dst, src net.Conn) (int64, bool, error) { return 0, false, nil }
