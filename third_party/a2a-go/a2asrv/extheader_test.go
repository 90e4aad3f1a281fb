// AstralVessel patch test (see third_party/a2a-go/PATCHES.md).

package a2asrv

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestExtensionsHeaderWriter: the status is held until the first byte of
// the body, so an extension activated after WriteHeader (a streamed call's
// push config) is still listed; a status with no body is sent by finish;
// a call that activated nothing gets no header.
func TestExtensionsHeaderWriter(t *testing.T) {
	ext := &a2a.AgentExtension{URI: "urn:example:ext:v1"}
	for _, tc := range []struct {
		name     string
		activate bool
		write    func(w *extensionsHeaderWriter)
		code     int
		header   string
		body     string
	}{
		{"activated after the status, then a body", true, func(w *extensionsHeaderWriter) {
			w.WriteHeader(http.StatusOK)
			w.callCtx.Extensions().Activate(ext)
			_, _ = w.Write([]byte("data: x\n\n"))
		}, http.StatusOK, ext.URI, "data: x\n\n"},
		{"activated after the status, then a flush", true, func(w *extensionsHeaderWriter) {
			w.WriteHeader(http.StatusAccepted)
			w.callCtx.Extensions().Activate(ext)
			w.Flush()
		}, http.StatusAccepted, ext.URI, ""},
		{"a status and no body", false, func(w *extensionsHeaderWriter) {
			w.WriteHeader(http.StatusNoContent)
		}, http.StatusNoContent, "", ""},
		{"a second status is ignored", false, func(w *extensionsHeaderWriter) {
			w.WriteHeader(http.StatusBadRequest)
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("{}"))
		}, http.StatusBadRequest, "", "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			_, callCtx := NewCallContext(context.Background(), NewServiceParams(http.Header{"A2A-Extensions": {ext.URI}}))
			w := &extensionsHeaderWriter{ResponseWriter: rec, callCtx: callCtx}
			tc.write(w)
			w.finish()
			if rec.Code != tc.code || rec.Header().Get(a2a.SvcParamExtensions) != tc.header || rec.Body.String() != tc.body {
				t.Fatalf("got %d %q %q; want %d %q %q", rec.Code, rec.Header().Get(a2a.SvcParamExtensions), rec.Body.String(), tc.code, tc.header, tc.body)
			}
		})
	}
}

// TestExtensionsConcurrent: an execution may activate an extension while
// the transport reads the activated ones for the response header (run
// with -race).
func TestExtensionsConcurrent(t *testing.T) {
	_, callCtx := NewCallContext(context.Background(), NewServiceParams(http.Header{}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			callCtx.Extensions().Activate(&a2a.AgentExtension{URI: fmt.Sprint("urn:example:ext:", i%7)})
		}
	}()
	for range 200 {
		_ = callCtx.Extensions().ActivatedURIs()
	}
	<-done
	if n := len(callCtx.Extensions().ActivatedURIs()); n != 7 {
		t.Fatalf("%d activated, want 7", n)
	}
}
