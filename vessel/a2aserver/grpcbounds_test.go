package a2aserver_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/astraldeep/astralvessel-go/runtime/limits"
	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// h2conn is a raw HTTP/2 connection to a gRPC listener, for the frames a
// gRPC client never sends (too many streams, a ping flood).
type h2conn struct {
	t   *testing.T
	c   net.Conn
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
}

// dialH2 opens the connection and sends the client preface and SETTINGS.
func dialH2(t *testing.T, addr string) *h2conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Only so that a broken server fails the test instead of hanging it.
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	h := &h2conn{t: t, c: c, fr: http2.NewFramer(c, c)}
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	h.enc = hpack.NewEncoder(&h.hb)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := h.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return h
}

// settings reads up to the server's SETTINGS, acknowledges them and
// returns them.
func (h *h2conn) settings() map[http2.SettingID]uint32 {
	h.t.Helper()
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.t.Fatalf("before the server's SETTINGS: %v", err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		got := map[http2.SettingID]uint32{}
		_ = sf.ForeachSetting(func(s http2.Setting) error { got[s.ID] = s.Val; return nil })
		if err := h.fr.WriteSettingsAck(); err != nil {
			h.t.Fatal(err)
		}
		return got
	}
}

// open starts a call of method on stream id, with authorization metadata
// (any: the credentials are checked once the message is in) and no
// message, so the call stays open (its handler waits for the request)
// until the body timeout.
func (h *h2conn) open(id uint32, method string) {
	h.t.Helper()
	h.openWith(id, method, [2]string{"authorization", "Bearer not-checked-before-the-message"})
}

// openWith is open with the extra header fields given (none: no
// authorization).
func (h *h2conn) openWith(id uint32, method string, extra ...[2]string) {
	h.t.Helper()
	h.hb.Reset()
	for _, f := range append([][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/lf.a2a.v1.A2AService/" + method},
		{":authority", "vessel"}, {"content-type", "application/grpc"}, {"te", "trailers"}}, extra...) {
		_ = h.enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.hb.Bytes(), EndHeaders: true}); err != nil {
		h.t.Fatal(err)
	}
}

// TestGRPCStreamsPerConnection: the server announces its bound on the
// calls of one connection, and a client that opens one more than that
// has exactly that stream refused (RST_STREAM REFUSED_STREAM, which
// grpc-go's client never sees: it queues calls over the bound); the calls
// below it stay open. Metadata over the header bound is refused too.
func TestGRPCStreamsPerConnection(t *testing.T) {
	h := newHarness(t)
	b := h.srv.GRPCBounds()
	if b.MaxConcurrentStreams != a2aserver.GRPCMinStreams {
		t.Fatalf("streams per connection %d, want %d (max_requests_per_owner %d is below the floor)",
			b.MaxConcurrentStreams, a2aserver.GRPCMinStreams, limits.DefaultMaxRequestsPerOwner)
	}
	c := dialH2(t, h.grpcAddr)
	set := c.settings()
	if set[http2.SettingMaxConcurrentStreams] != b.MaxConcurrentStreams || set[http2.SettingMaxHeaderListSize] != http.DefaultMaxHeaderBytes {
		t.Fatalf("server SETTINGS %v", set)
	}
	n := b.MaxConcurrentStreams
	for i := uint32(0); i <= n; i++ {
		c.open(2*i+1, "SendStreamingMessage")
	}
	over := 2*n + 1
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("no refusal of stream %d: %v", over, err)
		}
		if rst, ok := f.(*http2.RSTStreamFrame); ok {
			if rst.StreamID != over || rst.ErrCode != http2.ErrCodeRefusedStream {
				t.Fatalf("RST_STREAM %d %v, want stream %d REFUSED_STREAM", rst.StreamID, rst.ErrCode, over)
			}
			break
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			t.Fatalf("GOAWAY %v", g.ErrCode)
		}
	}

	// A raised owner allowance raises the bound with it.
	h2 := newHarness(t, limitsOf(settings.Limits{MaxRequestsPerOwner: 300, MaxStreamsPerOwner: 16}))
	if got := h2.srv.GRPCBounds().MaxConcurrentStreams; got != 300 {
		t.Fatalf("with max_requests_per_owner 300: %d streams per connection", got)
	}

	// Metadata over the bound: grpc-go's client reads the server's
	// SETTINGS and does not send it; a small header is served as before.
	cl := h.grpcClient()
	big := md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice", "x-pad", strings.Repeat("p", http.DefaultMaxHeaderBytes))
	if _, err := cl.SendMessage(big, grpcSend("field-guide", "hi")); status.Code(err) == codes.OK {
		t.Fatal("a call with metadata over the bound was served")
	}
	if _, err := cl.SendMessage(md("authorization", "Bearer "+h.keyApp1, "x-vessel-user", "alice"), grpcSend("field-guide", "hi")); err != nil {
		t.Fatalf("after the refused metadata: %v", err)
	}
}

// TestGRPCPingFlood: a client pinging faster than the enforcement policy's
// MinTime, with a call open or without one (PermitWithoutStream false),
// gets GOAWAY ENHANCE_YOUR_CALM and its connection closed.
func TestGRPCPingFlood(t *testing.T) {
	h := newHarness(t)
	if b := h.srv.GRPCBounds(); b.MinPingInterval != a2aserver.GRPCMinPingInterval || b.MinPingInterval < time.Second {
		t.Fatalf("MinPingInterval %v", b.MinPingInterval)
	}
	for _, withCall := range []bool{true, false} {
		c := dialH2(t, h.grpcAddr)
		c.settings()
		if withCall {
			c.open(1, "SendStreamingMessage")
		}
		// Back to back: far closer together than MinPingInterval.
		for i := range 10 {
			if err := c.fr.WritePing(false, [8]byte{byte(i)}); err != nil {
				break // the server may have closed the connection already
			}
		}
		var away *http2.GoAwayFrame
		for away == nil {
			f, err := c.fr.ReadFrame()
			if err != nil {
				t.Fatalf("with a call open %v: no GOAWAY: %v", withCall, err)
			}
			away, _ = f.(*http2.GoAwayFrame)
		}
		if away.ErrCode != http2.ErrCodeEnhanceYourCalm || string(away.DebugData()) != "too_many_pings" {
			t.Fatalf("with a call open %v: GOAWAY %v %q", withCall, away.ErrCode, away.DebugData())
		}
		for {
			if _, err := c.fr.ReadFrame(); err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset by peer") {
					t.Fatalf("with a call open %v: after GOAWAY: %v, want the connection closed", withCall, err)
				}
				break
			}
		}
	}
}

// TestGRPCHandshakeTimeout: a connection that never sends its preface is
// closed once the handshake bound passes (shortened here).
func TestGRPCHandshakeTimeout(t *testing.T) {
	h := newHarness(t)
	if b := h.srv.GRPCBounds(); b.HandshakeTimeout != a2aserver.GRPCHandshakeTimeout {
		t.Fatalf("HandshakeTimeout %v", b.HandshakeTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := h.srv.GRPCServer(grpc.ConnectionTimeout(200 * time.Millisecond))
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a guard, not the bound
	// The server sends its SETTINGS first; then it must close.
	for err == nil {
		_, err = c.Read(make([]byte, 256))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("a silent connection was not closed by the server: %v", err)
	}
}

// TestGRPCMessageBounds: a call that sends its message slowly, or never,
// with credentials or without (they are checked once the message is in),
// is ended after the body timeout, as the HTTP bindings end a slow body
// (408).
func TestGRPCMessageBounds(t *testing.T) {
	h := newHarnessConfig(t, func(c *a2aserver.Config) { c.BodyTimeout = 200 * time.Millisecond })
	ended := func(c *h2conn, id uint32) string {
		t.Helper()
		_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				t.Fatalf("stream %d still open (or the connection failed): %v", id, err)
			}
			switch f := f.(type) {
			case *http2.HeadersFrame:
				if f.StreamID == id && f.StreamEnded() {
					fields, err := hpack.NewDecoder(4096, nil).DecodeFull(f.HeaderBlockFragment())
					if err != nil {
						t.Fatal(err)
					}
					for _, hf := range fields {
						if hf.Name == "grpc-status" {
							return hf.Value
						}
					}
					return "no grpc-status"
				}
			case *http2.RSTStreamFrame:
				if f.StreamID == id {
					return "RST_STREAM " + f.ErrCode.String()
				}
			case *http2.GoAwayFrame:
				t.Fatalf("GOAWAY %v", f.ErrCode)
			}
		}
	}
	c := dialH2(t, h.grpcAddr)
	c.settings()
	c.openWith(1, "SendMessage") // no authorization, no message
	if got := ended(c, 1); !endedByServer(got) {
		t.Fatalf("no credentials, no message: %s", got)
	}
	// Credentials, then a message header announcing 1,000 bytes and 10 of them.
	c.open(3, "SendMessage")
	if err := c.fr.WriteData(3, false, append([]byte{0, 0, 0, 3, 232}, make([]byte, 10)...)); err != nil {
		t.Fatal(err)
	}
	if got := ended(c, 3); !endedByServer(got) {
		t.Fatalf("slow message: %s", got)
	}
	// Credentials and no message at all, on a streaming method.
	c.open(5, "SendStreamingMessage")
	if got := ended(c, 5); !endedByServer(got) {
		t.Fatalf("no message: %s", got)
	}
}

// endedByServer reports whether a stream's end (what ended returned) is
// the server giving up on the call: its trailers with a deadline or
// cancellation status, or a reset (grpc-go resets a stream whose context
// ended while it read the message).
func endedByServer(got string) bool {
	return got == fmt.Sprint(int(codes.DeadlineExceeded)) || got == fmt.Sprint(int(codes.Canceled)) || strings.HasPrefix(got, "RST_STREAM")
}
