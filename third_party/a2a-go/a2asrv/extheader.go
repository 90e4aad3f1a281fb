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
// written (vendored patch, PATCHES.md). A streamed response writes its
// header before the call is handled and so lists none.
type extensionsHeaderWriter struct {
	http.ResponseWriter
	callCtx *CallContext
	done    bool
}

func (w *extensionsHeaderWriter) setHeader() {
	if w.done {
		return
	}
	w.done = true
	if uris := w.callCtx.Extensions().ActivatedURIs(); len(uris) > 0 {
		w.Header().Set(a2a.SvcParamExtensions, strings.Join(uris, ", "))
	}
}

// WriteHeader implements http.ResponseWriter.
func (w *extensionsHeaderWriter) WriteHeader(code int) {
	w.setHeader()
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *extensionsHeaderWriter) Write(b []byte) (int, error) {
	w.setHeader()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher (streamed responses need it).
func (w *extensionsHeaderWriter) Flush() {
	w.setHeader()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *extensionsHeaderWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
