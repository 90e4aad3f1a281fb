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

// TestLimitBodyReadsOnce: a body of its declared length is read into one
// buffer of about its size, not grown (copied) again after its last byte
// (a turn's history makes it hundreds of kilobytes), and arrives whole.
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
	// One body-sized buffer per read, plus the request's own small change.
	if per := float64(after.TotalAlloc-before.TotalAlloc) / n; per > 1.25*float64(len(body)) {
		t.Fatalf("%.0f bytes allocated per %d-byte body: the buffer grew after the body", per, len(body))
	}
}
