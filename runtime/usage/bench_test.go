package usage

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
)

// BenchmarkRecord is what the usage log adds to a finished turn: one
// record encoded and appended to a real file (docs/performance.md).
func BenchmarkRecord(b *testing.B) {
	rc, err := Open(filepath.Join(b.TempDir(), "usage.jsonl"), rotlog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	r := &Record{Time: time.Now().UTC(), Task: "01a2370f-bb25-77bc-9cf3-f79972a762f4", Context: "ctx-1", Owner: "app1/alice", App: "app1",
		User: "alice", Agent: "field-guide", Model: "scripted", Status: "ok", TokensIn: 1200, TokensOut: 80, Steps: 2, ToolCalls: 1, DurationMS: 3}
	b.ReportAllocs()
	for b.Loop() {
		if err := rc.Record(r); err != nil {
			b.Fatal(err)
		}
	}
}
