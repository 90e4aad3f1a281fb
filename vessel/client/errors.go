package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Sentinel errors for the HTTP statuses the vessel answers before the A2A
// layer runs. Match them with errors.Is; errors.As with *HTTPError gives the
// status and body.
var (
	ErrUnauthorized = errors.New("vessel: unauthorized (401)")
	ErrForbidden    = errors.New("vessel: agent not granted to caller (403)")
	ErrNotFound     = errors.New("vessel: not found (404)")
	ErrTooLarge     = errors.New("vessel: request too large (413)")
	ErrUnavailable  = errors.New("vessel: agent unavailable (503)")
	// ErrIncomplete means a turn's stream ended before its final status.
	ErrIncomplete = errors.New("vessel: stream ended before the turn finished")
)

// HTTPError is a non-200 HTTP answer from the vessel.
type HTTPError struct {
	StatusCode int
	// Message is the "error" field of a JSON body, the JSON-RPC error
	// message, or the start of a plain body.
	Message string
	// Code is the JSON-RPC error code when the body is a JSON-RPC error.
	Code int
	// RetryAfter is the Retry-After header, if any.
	RetryAfter string
}

func (e *HTTPError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	if e.Code != 0 {
		return fmt.Sprintf("vessel: HTTP %d (code %d): %s", e.StatusCode, e.Code, msg)
	}
	return fmt.Sprintf("vessel: HTTP %d: %s", e.StatusCode, msg)
}

// Is lets errors.Is(err, ErrUnauthorized) and friends match by status.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrTooLarge:
		return e.StatusCode == http.StatusRequestEntityTooLarge
	case ErrUnavailable:
		return e.StatusCode == http.StatusServiceUnavailable
	}
	return false
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// newHTTPError reads (a bounded part of) resp's body into an HTTPError.
func newHTTPError(resp *http.Response) *HTTPError {
	e := &HTTPError{StatusCode: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var doc struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Error) > 0 {
		var s string
		var rpc struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(doc.Error, &s) == nil:
			e.Message = s
		case json.Unmarshal(doc.Error, &rpc) == nil:
			e.Code, e.Message = rpc.Code, rpc.Message
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(bytes.ToValidUTF8(body[:min(len(body), 200)], nil)))
	}
	return e
}

// statusTransport turns every non-200 answer into an *HTTPError. a2a-go's
// JSON-RPC transport reports such answers as a plain string, which callers
// cannot match; returning the error from the RoundTripper keeps it in the
// wrapped chain instead.
type statusTransport struct {
	base http.RoundTripper
}

func (t *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	e := newHTTPError(resp)
	_ = resp.Body.Close()
	return nil, e
}
