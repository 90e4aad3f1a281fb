package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/astraldeep/astralvessel-go/egress/modelproxy"
	"github.com/astraldeep/astralvessel-go/egress/webproxy"
	"github.com/astraldeep/astralvessel-go/runtime/metricdoc"
)

// TestEveryMetricDocumented: docs/operations.md lists exactly the egress_
// series the model passthrough and the web proxy register.
func TestEveryMetricDocumented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rec metricdoc.Recorder
	modelproxy.NewMetrics(&rec)
	webproxy.NewMetrics(&rec)
	for _, m := range metricdoc.Mismatches(rec.Names, metricdoc.Documented(md), "egress_") {
		t.Error(m)
	}
}
