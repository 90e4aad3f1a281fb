package a2aserver

import (
	"bytes"
	"io"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/a2acompat"
)

// TestLimitBodyReadsOnce: a body of its declared length is read with about
// one copy on its way in (a turn's history makes it hundreds of
// kilobytes): the buffer grows with what arrived, never reserving the
// declared length before its bytes come (TestReadArrivedHoldsWhatArrived),
// and jumps to the declared length once that is near, so the allocations
// stay under 2.25 times the body; and the body arrives whole.
func TestLimitBodyReadsOnce(t *testing.T) {
	s := &Server{cfg: Config{MaxBody: 16 << 20, BodyTimeout: time.Minute}}
	for _, size := range []int{256 << 10, 300 << 10, 1 << 20} {
		limitBodyOnce(t, s, bytes.Repeat([]byte("x"), size))
	}
}

func limitBodyOnce(t *testing.T, s *Server, body []byte) {
	read := func() {
		r := httptest.NewRequest("POST", "/agents/a", bytes.NewReader(body))
		if ref := s.limitBody(httptest.NewRecorder(), r); ref != nil {
			t.Fatalf("refused: %+v", ref)
		}
		got, err := io.ReadAll(r.Body.(*a2acompat.ReadBody))
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("body changed: %d bytes, %v", len(got), err)
		}
	}
	read()
	const n = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		r := httptest.NewRequest("POST", "/agents/a", bytes.NewReader(body))
		if ref := s.limitBody(httptest.NewRecorder(), r); ref != nil {
			t.Fatalf("refused: %+v", ref)
		}
	}
	runtime.ReadMemStats(&after)
	// The body-sized buffer and the smaller ones it grew through, plus the
	// request's own small change.
	if per := float64(after.TotalAlloc-before.TotalAlloc) / n; per > 2.25*float64(len(body)) {
		t.Fatalf("%.0f bytes allocated per %d-byte body: the buffer grew after the body", per, len(body))
	}
}

// trickle hands out its bytes a few at a time, as a slow caller sends them.
type trickle struct {
	left int
	step int
}

func (t *trickle) Read(p []byte) (int, error) {
	if t.left == 0 {
		return 0, io.EOF
	}
	n := min(t.step, t.left, len(p))
	for i := range n {
		p[i] = 'x'
	}
	t.left -= n
	return n, nil
}

// TestReadArrivedHoldsWhatArrived: a body declaring 16 MB and sending 100
// bytes (or 5,000) is held in a buffer of a few KiB, three times what
// arrived at most; a chunked body (no declared length) the same; a body
// over the limit stops at the limit.
func TestReadArrivedHoldsWhatArrived(t *testing.T) {
	for _, tc := range []struct {
		declared int64
		sent     int
	}{{16_000_000, 100}, {16_000_000, 5_000}, {16_000_000, 300_000}, {-1, 5_000}, {-1, 300_000}, {1 << 20, 1 << 20}} {
		tr := &trickle{left: tc.sent, step: 7}
		got, err := readArrived(tr, tc.declared, 16_000_001)
		if err != nil || len(got) != tc.sent {
			t.Fatalf("declared %d, sent %d: read %d, %v", tc.declared, tc.sent, len(got), err)
		}
		if bound := max(3*tc.sent, firstRead) + bytes.MinRead; cap(got) > bound {
			t.Errorf("declared %d, sent %d: a buffer of %d bytes (bound %d)", tc.declared, tc.sent, cap(got), bound)
		}
	}
	got, err := readArrived(&trickle{left: 10_000, step: 1000}, -1, 4_001)
	if err != nil || len(got) < 4_001 || len(got) > 4_001+bytes.MinRead {
		t.Fatalf("over the limit: %d bytes, %v", len(got), err)
	}
}
