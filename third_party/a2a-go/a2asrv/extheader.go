// Copyright 2025 The A2A Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package a2asrv

import (
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// extensionsHeaderWriter lists, in the A2A-Extensions response header, the
// extensions activated during the call when the response's header is
// sent (vendored patch, PATCHES.md). The status is held back until the
// first byte of the body (or finish): a streamed response writes its status
// before the call is handled, and its first event comes only after the
// call activated what it activates (a push config saved with the stream's
// request), while net/http fixes the header at WriteHeader.
type extensionsHeaderWriter struct {
	http.ResponseWriter
	callCtx *CallContext
	header  string // the header's name: a2a.SvcParamExtensions unless set
	code    int    // a status written but not yet sent
	done    bool   // the header is sent
}

// ExtensionsHeaderWriter wraps rw so that the response lists, in the header
// named header, the extensions callCtx activated (vendored patch,
// PATCHES.md): the 0.3 transport's X-A2A-Extensions. The caller calls
// finish when its handler returns.
func ExtensionsHeaderWriter(rw http.ResponseWriter, callCtx *CallContext, header string) (w http.ResponseWriter, finish func()) {
	ew := &extensionsHeaderWriter{ResponseWriter: rw, callCtx: callCtx, header: header}
	return ew, ew.finish
}

func (w *extensionsHeaderWriter) send() {
	if w.done {
		return
	}
	w.done = true
	if uris := w.callCtx.Extensions().ActivatedURIs(); len(uris) > 0 {
		name := w.header
		if name == "" {
			name = a2a.SvcParamExtensions
		}
		w.Header().Set(name, strings.Join(uris, ", "))
	}
	if w.code != 0 {
		w.ResponseWriter.WriteHeader(w.code)
	}
}

// finish sends a status written with no body after it; the handlers that
// install the writer call it when they return.
func (w *extensionsHeaderWriter) finish() { w.send() }

// WriteHeader implements http.ResponseWriter; 1xx answers pass at once.
func (w *extensionsHeaderWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if w.done || w.code != 0 {
		return // as net/http: a second status is ignored
	}
	w.code = code
}

// Write implements http.ResponseWriter.
func (w *extensionsHeaderWriter) Write(b []byte) (int, error) {
	w.send()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher (streamed responses need it).
func (w *extensionsHeaderWriter) Flush() {
	w.send()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *extensionsHeaderWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
