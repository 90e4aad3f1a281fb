package webproxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Copy buffers. Between sockets on one host or LAN a proxy's cost is mostly
// wake-ups and system calls per chunk, not copying bytes, so bulk data moves
// in large reads. On the 2-CPU bench machine (make bench-egress) 1 MB reads
// beat 32 KB copies and also splice(2), which moves one queued chunk per
// drain/pump pair through a pipe. Big buffers are bounded in number so slow
// clients cannot grow memory without limit; past the bound copies use small
// ones.
const (
	smallBufSize = 32 << 10
	bigBufSize   = 1 << 20
	maxBigBufs   = 24 // 24 MiB at most, well inside the egress's 256 MiB limit
)

type buffers struct {
	small, big sync.Pool
	slots      chan struct{} // one token per big buffer in use
}

func newBuffers() *buffers {
	return &buffers{
		small: sync.Pool{New: func() any { b := make([]byte, smallBufSize); return &b }},
		big:   sync.Pool{New: func() any { b := make([]byte, bigBufSize); return &b }},
		slots: make(chan struct{}, maxBigBufs),
	}
}

// get returns a big buffer when one is free, else a small one.
func (b *buffers) get() *[]byte {
	select {
	case b.slots <- struct{}{}:
		return b.big.Get().(*[]byte)
	default:
		return b.small.Get().(*[]byte)
	}
}

func (b *buffers) getSmall() *[]byte { return b.small.Get().(*[]byte) }

func (b *buffers) put(p *[]byte) {
	if len(*p) == bigBufSize {
		b.big.Put(p)
		<-b.slots
		return
	}
	b.small.Put(p)
}

// copyConn copies src to dst until src's EOF (returned as nil) or an error,
// counting every chunk written in moved (for the tunnel's idle watch).
func (b *buffers) copyConn(dst, src net.Conn, moved *atomic.Uint64) (int64, error) {
	if n, ok, err := b.copySockets(dst, src, moved); ok {
		return n, err
	}
	return b.copyReader(dst, src, moved)
}

// copyReader copies with a buffer held across reads: it starts small and
// moves to a big buffer only while reads keep filling the buffer, so a slow
// stream (server-sent events) never pins a big one. Every chunk is written as
// soon as it is read: streaming answers keep flowing.
// moved, when not nil, counts the chunks written.
func (b *buffers) copyReader(dst io.Writer, src io.Reader, moved *atomic.Uint64) (int64, error) {
	buf := b.getSmall()
	defer func() { b.put(buf) }()
	var written int64
	for {
		n, rerr := src.Read(*buf)
		if n > 0 {
			w, werr := dst.Write((*buf)[:n])
			written += int64(w)
			if werr != nil {
				return written, werr
			}
			if w != n {
				return written, io.ErrShortWrite
			}
			if moved != nil {
				moved.Add(1)
			}
		}
		if errors.Is(rerr, io.EOF) {
			return written, nil
		}
		if rerr != nil {
			return written, rerr
		}
		switch big := len(*buf) == bigBufSize; {
		case !big && n == len(*buf):
			if nb := b.get(); len(*nb) == bigBufSize {
				b.put(buf)
				buf = nb
			} else {
				b.put(nb)
			}
		case big && n < smallBufSize:
			b.put(buf)
			buf = b.getSmall()
		}
	}
}

// fastBody wraps an upstream response body. goproxy copies the body into
// the client's ResponseWriter with io.Copy, which prefers the source's
// WriteTo: this one reads in large chunks and writes each straight through,
// instead of the 32 KB generic copy behind the ResponseWriter's ReadFrom.
type fastBody struct {
	io.ReadCloser
	bufs  *buffers
	bytes prometheus.Counter // egress_proxy_bytes_total{kind="http"}
}

func (f *fastBody) WriteTo(w io.Writer) (int64, error) {
	n, err := f.bufs.copyReader(w, f.ReadCloser, nil)
	f.bytes.Add(float64(n))
	return n, err
}

func (f *fastBody) Read(p []byte) (int, error) {
	n, err := f.ReadCloser.Read(p)
	f.bytes.Add(float64(n))
	return n, err
}
