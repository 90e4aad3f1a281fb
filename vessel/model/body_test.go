package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

func bodyOf(parts ...string) *requestBody {
	b := &requestBody{}
	for _, p := range parts {
		b.parts = append(b.parts, []byte(p))
		b.n += int64(len(p))
	}
	return b
}

// TestBodyReader reads a body every way the transport may: as a Reader
// (with iotest's checks of the Read contract), in small reads, through
// WriteTo, and part read then written; each gives the joined pieces, and
// the pieces are unchanged for the next reader (GetBody).
func TestBodyReader(t *testing.T) {
	for _, parts := range [][]string{
		nil,
		{""},
		{"", "", ""},
		{`{"model":"m","messages":[`, `{"role":"user","content":"hi"}`, `]}`},
		{"a", "", "bc", "", "", "def", ""},
		{strings.Repeat("x", 100<<10), "", strings.Repeat("y", 70<<10), "]}"},
	} {
		b := bodyOf(parts...)
		want := b.bytes()
		if err := iotest.TestReader(b.reader(), want); err != nil {
			t.Fatalf("%q: %v", parts, err)
		}
		if got, err := io.ReadAll(iotest.OneByteReader(b.reader())); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q: one byte at a time: %v", parts, err)
		}
		var w bytes.Buffer
		if n, err := b.reader().WriteTo(&w); err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("%q: WriteTo %d, %v", parts, n, err)
		}
		for _, first := range []int{1, 2, 3, 7, max(len(want)/2, 1)} {
			r := b.reader()
			buf := make([]byte, first)
			n, _ := io.ReadFull(r, buf)
			var rest bytes.Buffer
			m, err := r.WriteTo(&rest)
			if err != nil || int(m) != len(want)-n || !bytes.Equal(append(buf[:n], rest.Bytes()...), want) {
				t.Fatalf("%q: read %d then WriteTo %d, %v", parts, n, m, err)
			}
			if m, err := r.WriteTo(&rest); m != 0 || err != nil {
				t.Fatalf("%q: WriteTo after the end: %d, %v", parts, m, err)
			}
			if n, err := r.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("%q: Read after the end: %d, %v", parts, n, err)
			}
		}
		if !bytes.Equal(b.bytes(), want) {
			t.Fatalf("%q: the pieces changed", parts)
		}
	}
}

type shortWriter struct{ max int }

func (w shortWriter) Write(p []byte) (int, error) { return min(len(p), w.max), nil }

type failWriter struct{ after int }

var errWrite = errors.New("write failed")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.after {
		n := w.after
		w.after = 0
		return n, errWrite
	}
	w.after -= len(p)
	return len(p), nil
}

func TestBodyReaderWriteErrors(t *testing.T) {
	b := bodyOf("abc", "defg")
	if n, err := b.reader().WriteTo(shortWriter{2}); n != 2 || !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("short write: %d, %v", n, err)
	}
	r := b.reader()
	if n, err := r.WriteTo(&failWriter{after: 5}); n != 5 || !errors.Is(err, errWrite) {
		t.Fatalf("failed write: %d, %v", n, err)
	}
	// What was not written is still there to read.
	if rest, err := io.ReadAll(r); err != nil || string(rest) != "fg" {
		t.Fatalf("after a failed write: %q, %v", rest, err)
	}
}

// discardConn is a connection that takes every write.
type discardConn struct {
	net.Conn
	n int64
}

func (c *discardConn) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestPooledCopyConn writes a body as the transport does (behind an
// io.LimitedReader, through ReadFrom) without allocating.
func TestPooledCopyConn(t *testing.T) {
	b := bodyOf(strings.Repeat("x", 100<<10), `,{"role":"user"}`, strings.Repeat("y", 50<<10))
	dc := &discardConn{}
	c := newPooledCopyConn(dc)
	r := b.reader()
	lr := &io.LimitedReader{R: r, N: b.n}
	write := func() {
		*r, *lr, dc.n = bodyReader{parts: b.parts}, io.LimitedReader{R: r, N: b.n}, 0
		if n, err := c.ReadFrom(lr); err != nil || n != b.n || dc.n != b.n {
			t.Fatalf("ReadFrom %d of %d (%d written): %v", n, b.n, dc.n, err)
		}
	}
	if a := testing.AllocsPerRun(100, write); a != 0 && !raceEnabled { // the race detector drops pooled items
		t.Fatalf("%v allocations per body", a)
	}
	// Without the pool the connection's copy allocates.
	if a := testing.AllocsPerRun(100, func() {
		*r, *lr = bodyReader{parts: b.parts}, io.LimitedReader{R: r, N: b.n}
		_, _ = io.Copy(writerOnly{dc}, lr)
	}); a == 0 {
		t.Fatal("io.Copy did not allocate: the test measures nothing")
	}
}

// historyRequest is a request with a history long enough that its body
// takes several copy buffers.
func historyRequest(n int) *Request {
	r := &Request{Model: "m", Cache: &MessageCache{}}
	for i := range n {
		r.Messages = append(r.Messages, transcript.Message{Role: []string{"user", "assistant"}[i%2],
			Content: transcript.Text(fmt.Sprintf("message %d of the history, with some words in it", i))})
	}
	return r
}

const okStream = "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// TestBodyOverTheTransport sends requests through a transport that dials
// with DialContext: the server reads exactly the encoded body, on a first
// attempt and on the retry after a 503, over HTTP/1 keep-alive connections.
func TestBodyOverTheTransport(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	fail := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err != nil || r.ContentLength != int64(len(b)) {
			t.Errorf("body: %d of %d bytes, %v", len(b), r.ContentLength, err)
		}
		bodies = append(bodies, b)
		if fail {
			fail = false
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, okStream)
	}))
	defer srv.Close()
	tr := &http.Transport{DialContext: DialContext, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Transport: tr}, Backoff: 1}
	req := historyRequest(2000)
	for range 2 {
		resp, err := c.Complete(context.Background(), req, &rec{})
		if err != nil || resp.Content != "ok" {
			t.Fatalf("%+v, %v", resp, err)
		}
	}
	want, err := encodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 3 {
		t.Fatalf("%d requests", len(bodies))
	}
	for i, b := range bodies {
		if !bytes.Equal(b, want.bytes()) {
			t.Fatalf("request %d: %d bytes, want %d", i, len(b), len(want.bytes()))
		}
	}
}

// TestStreamReaderReuse reads a stream cut short with data still buffered
// (over the line limit), then others, concurrently: a reused reader starts
// empty, so each call sees only its own stream.
func TestStreamReaderReuse(t *testing.T) {
	long := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("z", 200<<10) + "\"}}]}\n\n"
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				tag := fmt.Sprintf("%d-%d", i, j)
				cut := long + strings.Replace(okStream, "ok", "cut"+tag, 1)
				_, _, err := readStream(strings.NewReader(cut), Limits{Line: 100 << 10}.withDefaults(), func() {}, &rec{}, nil)
				if le := (*LimitError)(nil); !errors.As(err, &le) || le.What != LimitLine {
					t.Errorf("cut stream: %v", err)
					return
				}
				var h rec
				stream := strings.Replace(okStream, "ok", "answer"+tag, 1)
				resp, _, err := readStream(iotest.HalfReader(strings.NewReader(stream)), Limits{}.withDefaults(), func() {}, &h, nil)
				if err != nil || resp.Content != "answer"+tag || h.text.String() != resp.Content {
					t.Errorf("stream %s: %+v, %v", tag, resp, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkComplete is one call of a load-scenario turn: a 1,000-message
// history sent over a loopback connection, a short answer read back; with
// the default dialer and with DialContext (no copy buffer per call).
func BenchmarkComplete(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, okStream)
	}))
	defer srv.Close()
	for _, dial := range []struct {
		name string
		tr   *http.Transport
	}{{"default", &http.Transport{}}, {"DialContext", &http.Transport{DialContext: DialContext, ForceAttemptHTTP2: true}}} {
		b.Run(dial.name, func(b *testing.B) {
			defer dial.tr.CloseIdleConnections()
			c := &Client{BaseURL: srv.URL, HTTP: &http.Client{Transport: dial.tr}}
			req := historyRequest(1000)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Complete(context.Background(), req, nopHandler{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
