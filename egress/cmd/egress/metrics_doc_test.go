package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/metricdoc"
	"github.com/astraldeep/astralvessel-go/egress/modelproxy"
	"github.com/astraldeep/astralvessel-go/egress/webproxy"
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
	doc := metricdoc.Documented(md)
	for n := range rec.Names {
		if !doc[n] {
			t.Errorf("%s is registered but docs/operations.md does not list it", n)
		}
	}
	for n := range doc {
		if strings.HasPrefix(n, "egress_") && !rec.Names[n] {
			t.Errorf("docs/operations.md lists %s, which is not registered", n)
		}
	}
}
