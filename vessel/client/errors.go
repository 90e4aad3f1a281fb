package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
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
	// Reason and Domain are the ErrorInfo of a google.rpc.Status body (the
	// HTTP+JSON binding's errors), for example "AGENT_UNAVAILABLE" in
	// domain "astralvessel".
	Reason, Domain string
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

// httpError decodes an error body: {"error": "..."}, a JSON-RPC error, or a
// google.rpc.Status.
func httpError(resp *http.Response, body []byte) *HTTPError {
	e := &HTTPError{StatusCode: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}
	var doc struct {
		JSONRPC *string         `json:"jsonrpc"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &doc) == nil && len(doc.Error) > 0 {
		var s string
		var obj struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
			Details []struct {
				Type   string `json:"@type"`
				Reason string `json:"reason"`
				Domain string `json:"domain"`
			} `json:"details"`
		}
		switch {
		case json.Unmarshal(doc.Error, &s) == nil:
			e.Message = s
		case json.Unmarshal(doc.Error, &obj) == nil:
			e.Message = obj.Message
			if doc.JSONRPC != nil || obj.Status == "" {
				e.Code = obj.Code
			}
			for _, d := range obj.Details {
				if d.Type == errorInfoType {
					e.Reason, e.Domain = d.Reason, d.Domain
				}
			}
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(bytes.ToValidUTF8(body[:min(len(body), 200)], nil)))
	}
	return e
}

const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// statusTransport turns the vessel's own non-200 answers into an
// *HTTPError. a2a-go's JSON-RPC transport reports such answers as a plain
// string, which callers cannot match; returning the error from the
// RoundTripper keeps it in the wrapped chain instead. On HTTP+JSON, where
// every A2A error is a non-200 answer, an error of the A2A layer (ErrorInfo
// domain a2a-protocol.org, other than 401 and 403, which the vessel
// answers) goes on to a2a-go, which reads it as its A2A error
// (a2a.ErrTaskNotFound and so on).
type statusTransport struct {
	base http.RoundTripper
	rest bool
}

func (t *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	e := httpError(resp, body)
	if t.rest && e.Domain == a2a.ProtocolDomain && e.StatusCode != http.StatusUnauthorized && e.StatusCode != http.StatusForbidden {
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return nil, e
}
