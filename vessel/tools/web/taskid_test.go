package web

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestTaskIDToEgress: a fetch made for a turn names its task id to the
// egress, on a plain-HTTP request and on a CONNECT alike.
func TestTaskIDToEgress(t *testing.T) {
	e := newEnv(t, nil)
	e.mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello")
	})
	ctx := telemetry.WithTaskID(context.Background(), "task-77")
	if _, err := e.client.Fetch(ctx, "http://site.test/page"); err != nil {
		t.Fatal(err)
	}
	_, _ = e.client.Fetch(ctx, "https://metadata.test/") // refused at CONNECT
	_, _ = e.client.Fetch(context.Background(), "https://metadata.test/")
	e.proxy.mu.Lock()
	got := slices.Clone(e.proxy.tasks)
	e.proxy.mu.Unlock()
	if !slices.Equal(got, []string{"task-77", "task-77", ""}) {
		t.Fatalf("task ids the egress saw: %q (requests %v)", got, e.proxy.requests())
	}
}
