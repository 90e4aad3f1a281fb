// Package statuswriter is the one status-capturing http.ResponseWriter
// wrapper the services share, so logs, metrics, spans and audit events
// read the status a handler answered with.
//
// It is a small own type rather than github.com/felixge/httpsnoop: the
// services only need the status, Flush for SSE and Unwrap for
// http.ResponseController (which reaches Hijack and the rest through it),
// and this keeps the runtime module free of a new dependency.
package statuswriter

import (
	"fmt"
	"net/http"
)

// Writer records the first status written through it.
type Writer struct {
	http.ResponseWriter
	status int
}

// New wraps w.
func New(w http.ResponseWriter) *Writer { return &Writer{ResponseWriter: w} }

// WriteHeader records the first status and passes every call on.
func (s *Writer) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write marks an implicit 200 when no status was written first.
func (s *Writer) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	if err != nil {
		return n, fmt.Errorf("write response: %w", err)
	}
	return n, nil
}

// Status is the status written, 0 when nothing was written yet.
func (s *Writer) Status() int { return s.status }

// Code is the status the client got: 200 when the handler wrote nothing.
func (s *Writer) Code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *Writer) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes flushes through (ReverseProxy and the SSE writers check
// for http.Flusher directly).
func (s *Writer) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
