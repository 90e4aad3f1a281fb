// Package metricdoc ties the metrics the services register, the ones
// docs/operations.md lists and the ones deploy/grafana-dashboard.json
// queries together, for the tests that keep the three in step.
package metricdoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// rowName is a metrics table row: "| `name` | type | ...".
var rowName = regexp.MustCompile("^\\| `([a-z_][a-z0-9_]*)` \\| (counter|gauge|histogram|summary) \\|")

// Documented is every metric name a metrics table of the Markdown page md
// lists.
func Documented(md []byte) map[string]bool {
	out := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(md))
	for sc.Scan() {
		if m := rowName.FindStringSubmatch(sc.Text()); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// Recorder is a prometheus.Registerer that keeps the names of the
// metrics registered through it (each collector's descriptions), series or
// not: a vector with no children yet is named too.
type Recorder struct {
	Names map[string]bool
}

// Register records c's metric names.
func (r *Recorder) Register(c prometheus.Collector) error {
	if r.Names == nil {
		r.Names = map[string]bool{}
	}
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		name, err := descName(d)
		if err != nil {
			return err
		}
		r.Names[name] = true
	}
	return nil
}

// MustRegister records each collector's names.
func (r *Recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err) // prometheus.Registerer's contract; test use only
		}
	}
}

// Unregister implements prometheus.Registerer.
func (r *Recorder) Unregister(prometheus.Collector) bool { return false }

// descName reads the fully-qualified name out of a Desc: client_golang has
// no accessor, and its String form is `Desc{fqName: "name", ...}`.
func descName(d *prometheus.Desc) (string, error) {
	_, rest, ok := strings.Cut(d.String(), `fqName: "`)
	name, _, ok2 := strings.Cut(rest, `"`)
	if !ok || !ok2 || name == "" {
		return "", fmt.Errorf("metricdoc: no name in %s", d)
	}
	return name, nil
}

// metricToken finds identifiers in a PromQL expression.
var metricToken = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)

// ExprMetrics is the metric names a PromQL expression reads, from the
// prefixes given (vessel_, sandboxd_, egress_): a histogram's _bucket,
// _sum and _count series count as the histogram, label names inside
// braces and by/without lists are skipped.
func ExprMetrics(expr string, prefixes ...string) []string {
	var out []string
	clean := stripBraces(expr)
	for _, tok := range metricToken.FindAllString(clean, -1) {
		for _, p := range prefixes {
			if strings.HasPrefix(tok, p) {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if t, ok := strings.CutSuffix(tok, suf); ok && !strings.HasSuffix(t, "_total") {
						tok = t
						break
					}
				}
				out = append(out, tok)
				break
			}
		}
	}
	return out
}

// stripBraces removes label matchers ({...}) and the label lists of by
// and without (...), whose words are label names, not metrics.
func stripBraces(expr string) string {
	var b strings.Builder
	depth := 0
	for _, r := range expr {
		switch {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return regexp.MustCompile(`\b(by|without)\s*\([^)]*\)`).ReplaceAllString(b.String(), "")
}

// DashboardExprs is every "expr" of a Grafana dashboard's panels'
// targets (rows' nested panels included) and of its query variables.
func DashboardExprs(dashboard []byte) ([]string, error) {
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(dashboard, &d); err != nil {
		return nil, fmt.Errorf("metricdoc: dashboard: %w", err)
	}
	var out []string
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				if t.Expr != "" {
					out = append(out, t.Expr)
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		switch q := v.Query.(type) {
		case string:
			out = append(out, q)
		case map[string]any:
			if s, ok := q["query"].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out, nil
}

type panel struct {
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// Mismatches compares the names a service registered with the page's
// list for the service's prefix: each registered name the page lacks and
// each listed name with the prefix nobody registered.
func Mismatches(registered, documented map[string]bool, prefix string) []string {
	var out []string
	for n := range registered {
		if !documented[n] {
			out = append(out, n+" is registered but docs/operations.md does not list it")
		}
	}
	for n := range documented {
		if strings.HasPrefix(n, prefix) && !registered[n] {
			out = append(out, "docs/operations.md lists "+n+", which is not registered")
		}
	}
	sort.Strings(out)
	return out
}
