package metricdoc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

var prefixes = []string{"vessel_", "sandboxd_", "egress_"}

// TestDashboardNamesDocumentedMetrics: every expression of
// deploy/grafana-dashboard.json reads only metrics docs/operations.md
// lists (each service's test checks the page lists exactly what it
// registers), and the dashboard shows every listed metric.
func TestDashboardNamesDocumentedMetrics(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := Documented(md)
	if len(doc) < 25 {
		t.Fatalf("only %d metrics found in docs/operations.md", len(doc))
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	exprs, err := DashboardExprs(b)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, e := range exprs {
		names := ExprMetrics(e, prefixes...)
		if len(names) == 0 && e != "prometheus" {
			t.Errorf("expression reads no AstralVessel metric: %s", e)
		}
		for _, n := range names {
			if !doc[n] {
				t.Errorf("the dashboard reads %s, which docs/operations.md does not list: %s", n, e)
			}
			shown[n] = true
		}
	}
	for n := range doc {
		if !shown[n] {
			t.Errorf("the dashboard has no panel on %s", n)
		}
	}
}

func TestExprMetrics(t *testing.T) {
	got := ExprMetrics(`histogram_quantile(0.95, sum by (le, agent) (rate(vessel_turn_duration_seconds_bucket{agent=~"vessel_x"}[5m]))) / on (agent) sum(egress_model_tokens_total)`, prefixes...)
	if !slices.Equal(got, []string{"vessel_turn_duration_seconds", "egress_model_tokens_total"}) {
		t.Fatalf("%v", got)
	}
	if got := ExprMetrics(`label_values(vessel_turns_started_total, agent)`, prefixes...); !slices.Equal(got, []string{"vessel_turns_started_total"}) {
		t.Fatalf("%v", got)
	}
}

func TestRecorderNamesEmptyVectors(t *testing.T) {
	var r Recorder
	r.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "a_total", Help: "h"}, []string{"x"}),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "b", Help: "h"}))
	if !r.Names["a_total"] || !r.Names["b"] || len(r.Names) != 2 {
		t.Fatalf("%v", r.Names)
	}
}

func TestMismatches(t *testing.T) {
	got := Mismatches(map[string]bool{"x_a": true, "x_b": true}, map[string]bool{"x_a": true, "x_c": true, "y_d": true}, "x_")
	if len(got) != 2 || !strings.Contains(got[0], "x_c") || !strings.Contains(got[1], "x_b") {
		t.Fatalf("%v", got)
	}
}
