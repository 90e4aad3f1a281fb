package a2aserver

import (
	"net/http"
	"testing"
)

// TestRestStartsSubscribeMethods: the REST mux serves the subscribe route's
// GET to HEAD as well, so a HEAD subscription takes a stream place too; a
// subscription and a GetTask only read (served while the agent is out of
// service).
func TestRestStartsSubscribeMethods(t *testing.T) {
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost} {
		if got := restStarts(m, "/tasks/t1:subscribe"); got != startsStream|readsOnly {
			t.Errorf("%s subscribe: %d, want a stream", m, got)
		}
	}
	if got := restStarts(http.MethodHead, "/tasks/t1"); got != readsOnly {
		t.Errorf("HEAD GetTask starts %d", got)
	}
	if got := restStarts(http.MethodPost, "/message:stream"); got != startsTurn|startsStream {
		t.Errorf("stream send: %d", got)
	}
}
