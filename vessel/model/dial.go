package model

import (
	"context"
	"io"
	"net"
	"sync"
)

// DialContext dials as http.Transport does when it has no dialer, and
// returns a connection that writes a request body through a pooled copy
// buffer. The transport hands a body with a Content-Length to the
// connection's ReadFrom behind an io.LimitedReader; a TCP connection then
// allocates a 32 KB buffer per request (a turn makes a request per step).
func DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return newPooledCopyConn(c), nil
}

// copyBufSize is the size of io.Copy's own buffer.
const copyBufSize = 32 << 10

// copyBufs holds buffers of copyBufSize; a buffer is in use only during
// one ReadFrom, which writes what it reads before it returns.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

type pooledCopyConn struct {
	net.Conn
	plain io.Writer // the connection without its ReadFrom, made once
}

func newPooledCopyConn(c net.Conn) *pooledCopyConn {
	return &pooledCopyConn{Conn: c, plain: writerOnly{c}}
}

func (c *pooledCopyConn) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	return io.CopyBuffer(c.plain, r, *bp)
}

// writerOnly hides the connection's own ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }
