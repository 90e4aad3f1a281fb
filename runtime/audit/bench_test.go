package audit

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
)

// BenchmarkEmitAPIActivity is what the audit stream adds to one A2A call:
// its event built, encoded and appended to a real file
// (docs/performance.md).
func BenchmarkEmitAPIActivity(b *testing.B) {
	w, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), "vessel", "bench", rotlog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	t0 := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		e := APIActivity(&APICall{Operation: "SendStreamingMessage", ActivityID: APICreate, Start: t0, End: t0.Add(time.Millisecond),
			Owner: "app1/alice", App: "app1", Remote: "172.31.248.20:40000", HTTPMethod: "POST", Path: "/agents/field-guide/a2a",
			Agent: "field-guide", Task: "01a2370f-bb25-77bc-9cf3-f79972a762f4", HTTPStatus: 200})
		if err := w.Emit(e); err != nil {
			b.Fatal(err)
		}
	}
}
