package statuswriter

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStatusAndFlushThroughRealServer(t *testing.T) {
	var got *Writer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sw := New(w)
		got = sw
		sw.Header().Set("Content-Type", "text/event-stream")
		sw.WriteHeader(http.StatusAccepted)
		sw.WriteHeader(http.StatusTeapot) // superfluous: ignored by net/http, not recorded
		_, _ = io.WriteString(sw, "data: one\n\n")
		sw.Flush()
		_, _ = io.WriteString(sw, "data: two\n\n")
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if got.Status() != http.StatusAccepted || got.Code() != http.StatusAccepted {
		t.Fatalf("recorded %d/%d", got.Status(), got.Code())
	}
}

func TestImplicitOKAndUnwrap(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := New(rec)
	if sw.Status() != 0 || sw.Code() != http.StatusOK {
		t.Fatalf("before write: %d/%d", sw.Status(), sw.Code())
	}
	if _, err := sw.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if sw.Status() != http.StatusOK {
		t.Fatalf("status %d", sw.Status())
	}
	if err := http.NewResponseController(sw).Flush(); err != nil {
		t.Fatalf("controller flush: %v", err)
	}
	if !rec.Flushed || !strings.Contains(rec.Body.String(), "x") {
		t.Fatal("not flushed through")
	}
}
