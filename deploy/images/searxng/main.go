// Command searxng-stub stands in for SearXNG in tests and CI, where no image can be pulled.
// It answers SearXNG's JSON search API (GET /search?q=...&format=json) with a few fixed results
// built from the query, and GET /healthz, so the vessel's websearch tool and the deployment's
// network layout (a search container on the egress network, reachable only by the vessel) can be
// exercised without any traffic leaving the machine. Production deployments use the real SearXNG
// image; see README.md beside this file.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type result struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Content string `json:"content"`
	Engine  string `json:"engine"`
}

type response struct {
	Query               string     `json:"query"`
	NumberOfResults     int        `json:"number_of_results"`
	Results             []result   `json:"results"`
	Answers             []string   `json:"answers"`
	Suggestions         []string   `json:"suggestions"`
	UnresponsiveEngines [][]string `json:"unresponsive_engines"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "health" {
		// The Compose healthcheck: the image has no shell or curl.
		os.Exit(health())
	}
	// Every line it writes is JSON, like the services' (docs/operations.md).
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	listen := flag.String("listen", "0.0.0.0:8080", "address to serve on")
	flag.Parse()
	if err := checkProxyFile(os.Getenv("VESSEL_SEARCH_PROXY_FILE")); err != nil {
		fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("OK"))
	})
	mux.HandleFunc("/search", search)
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	slog.Info("searxng-stub listening", "addr", *listen)
	fatal(srv.ListenAndServe())
}

// fatal logs err as JSON and exits.
func fatal(err error) {
	slog.Error("searxng-stub stopped", "error", err.Error())
	os.Exit(1)
}

func search(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	q := strings.TrimSpace(r.Form.Get("q"))
	if q == "" {
		http.Error(w, "missing q", http.StatusBadRequest)
		return
	}
	if r.Form.Get("format") != "json" {
		// SearXNG refuses formats not enabled in its settings with 403; keep that behaviour.
		http.Error(w, "only format=json is enabled", http.StatusForbidden)
		return
	}
	// A query naming this marker fails like an engine outage, so callers' error paths can be tested.
	if strings.Contains(q, "searxng-stub-fail") {
		http.Error(w, "all engines failed", http.StatusBadGateway)
		return
	}
	resp := response{Query: q, Answers: []string{}, Suggestions: []string{}, UnresponsiveEngines: [][]string{}}
	slug := url.PathEscape(strings.ToLower(strings.Join(strings.Fields(q), "-")))
	// example.org is reserved for documentation, so these links never name a real site.
	for i, engine := range []string{"stub-one", "stub-two", "stub-three"} {
		resp.Results = append(resp.Results, result{
			URL:     fmt.Sprintf("https://example.org/%s/%d", slug, i+1),
			Title:   fmt.Sprintf("Result %d for %s", i+1, q),
			Content: fmt.Sprintf("A fixed search result number %d about %q from the SearXNG stand-in.", i+1, q),
			Engine:  engine,
		})
	}
	resp.NumberOfResults = len(resp.Results)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// health asks this container's own /healthz: 0 when it answers 200.
func health() int {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := c.Get("http://127.0.0.1:8080/healthz")
	if err != nil {
		fmt.Fprintln(os.Stderr, "searxng-stub: unhealthy:", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "searxng-stub: unhealthy: status", resp.StatusCode)
		return 1
	}
	return 0
}

// checkProxyFile reads the proxy URL deploy hands the search container
// (VESSEL_SEARCH_PROXY_FILE: http://search:<token>@egress:3128), as the real
// SearXNG's outgoing proxy would be configured from it, and refuses one
// without credentials: the egress answers those 407. The stand-in itself
// never contacts anything, so it only checks the file.
func checkProxyFile(path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("VESSEL_SEARCH_PROXY_FILE: %w", err)
	}
	u, err := url.Parse(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("VESSEL_SEARCH_PROXY_FILE %s: not a URL", path)
	}
	if _, ok := u.User.Password(); !ok || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("VESSEL_SEARCH_PROXY_FILE %s: want http://<client>:<token>@<host>:<port>", path)
	}
	slog.Info("searxng-stub: outgoing proxy", "host", u.Host, "client", u.User.Username())
	return nil
}
