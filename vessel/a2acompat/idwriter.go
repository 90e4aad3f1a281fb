package a2acompat

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
)

// newIDPlaceholder returns a string no caller can predict, sent to the SDK
// in place of the request id and swapped back for the id as sent in every
// answer.
func newIDPlaceholder() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("a2acompat: id placeholder: %w", err)
	}
	return "vessel-rpc-id-" + hex.EncodeToString(b), nil
}

// echoedAsSent returns the string an id is, when the SDK would write it
// back exactly as sent: a JSON string of printable ASCII that
// encoding/json neither unescapes on reading nor escapes on writing (no
// backslash, quote or HTML character), as request ids mostly are.
func echoedAsSent(id []byte) (string, bool) {
	if len(id) < 2 || id[0] != '"' || id[len(id)-1] != '"' {
		return "", false
	}
	in := id[1 : len(id)-1]
	for _, c := range in {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return "", false
		}
	}
	return string(in), true
}

// idWriter replaces the placeholder (with its quotes) by the raw id in
// everything written, plain answers and SSE frames alike, and gives an
// answer without a Content-Type (the SDK's 0.3 handler writes its errors
// that way) application/json. A tail that could be the start of a
// placeholder split across two writes is held back until the next write,
// Flush or finish; an SSE frame ends with a blank line, which never is.
// With no placeholder (from empty) it only sets the Content-Type.
type idWriter struct {
	w       http.ResponseWriter
	from    []byte
	to      []byte
	pending []byte
	wrote   bool
}

func newIDWriter(w http.ResponseWriter, from, to []byte) *idWriter {
	return &idWriter{w: w, from: from, to: to}
}

func (iw *idWriter) Header() http.Header { return iw.w.Header() }

func (iw *idWriter) WriteHeader(status int) {
	iw.defaultType()
	iw.w.WriteHeader(status)
}

func (iw *idWriter) defaultType() {
	if iw.wrote {
		return
	}
	iw.wrote = true
	if iw.w.Header().Get("Content-Type") == "" {
		iw.w.Header().Set("Content-Type", "application/json")
	}
}

func (iw *idWriter) Write(p []byte) (int, error) {
	iw.defaultType()
	if len(iw.from) == 0 {
		if _, err := iw.w.Write(p); err != nil {
			return 0, fmt.Errorf("a2acompat: write answer: %w", err)
		}
		return len(p), nil
	}
	buf := append(iw.pending, p...)
	out := bytes.ReplaceAll(buf, iw.from, iw.to)
	// Hold back the longest tail that is a proper prefix of the placeholder.
	keep := 0
	for k := min(len(iw.from)-1, len(out)); k > 0; k-- {
		if bytes.HasSuffix(out, iw.from[:k]) {
			keep = k
			break
		}
	}
	iw.pending = append(iw.pending[:0:0], out[len(out)-keep:]...)
	if _, err := iw.w.Write(out[:len(out)-keep]); err != nil {
		return 0, fmt.Errorf("a2acompat: write answer: %w", err)
	}
	return len(p), nil
}

func (iw *idWriter) flushPending() {
	if len(iw.pending) > 0 {
		_, _ = iw.w.Write(iw.pending)
		iw.pending = nil
	}
}

// Flush implements http.Flusher for the SDK's SSE writer.
func (iw *idWriter) Flush() {
	iw.flushPending()
	if f, ok := iw.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (iw *idWriter) Unwrap() http.ResponseWriter { return iw.w }

// finish writes what is still held back.
func (iw *idWriter) finish() { iw.flushPending() }
