package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// SearchResult is one hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"content"`
}

// SearchResults is an engine's successful answer. An empty Results means
// the engine answered and found nothing; every failure is an error instead.
type SearchResults struct {
	Query    string
	Provider string
	Results  []SearchResult
	// Degraded names engines that did not answer while others did.
	Degraded []string
}

// SearchError is a search that failed or was refused: the model must see
// it as a failure, never as "no results".
type SearchError struct {
	Provider string
	Reason   string
}

func (e *SearchError) Error() string {
	return fmt.Sprintf("websearch failed (%s): %s", e.Provider, e.Reason)
}

// Fenced renders the results for the model, fenced: titles and snippets
// come from the web and are as untrusted as any page.
func (r *SearchResults) Fenced() string {
	var b strings.Builder
	if len(r.Results) == 0 {
		b.WriteString("No results: the search engine answered and found nothing for this query.\n")
	}
	for i, res := range r.Results {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(res.Title), oneLine(res.URL))
		if s := oneLine(res.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	if len(r.Degraded) > 0 {
		fmt.Fprintf(&b, "\n(Some engines did not answer: %s.)\n", strings.Join(r.Degraded, ", "))
	}
	return Fence(fmt.Sprintf("%s search for %q", r.Provider, r.Query), b.String())
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// Search runs a query on the configured provider.
func (c *Client) Search(ctx context.Context, query string) (*SearchResults, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, errors.New("websearch: empty query")
	}
	if len(query) > 500 {
		return nil, errors.New("websearch: query longer than 500 characters")
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var (
		res *SearchResults
		err error
	)
	if c.cfg.Provider == "duckduckgo" {
		res, err = c.searchDDG(ctx, query)
	} else {
		res, err = c.searchSearXNG(ctx, query)
	}
	if err != nil {
		return nil, err
	}
	if len(res.Results) > c.cfg.MaxResults {
		res.Results = res.Results[:c.cfg.MaxResults]
	}
	return res, nil
}

type searxAnswer struct {
	Query               string          `json:"query"`
	Results             []SearchResult  `json:"results"`
	UnresponsiveEngines [][]interface{} `json:"unresponsive_engines"`
}

func (c *Client) searchSearXNG(ctx context.Context, query string) (*SearchResults, error) {
	fail := func(format string, a ...any) error {
		return &SearchError{Provider: "searxng", Reason: fmt.Sprintf(format, a...)}
	}
	u, err := url.Parse(strings.TrimRight(c.cfg.SearchURL, "/") + "/search")
	if err != nil {
		return nil, fail("bad search URL: %v", err)
	}
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fail("%v", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	_, span := startSpan(ctx, "websearch", u)
	resp, err := c.direct.Do(req)
	telemetry.EndHTTPSpan(span, resp, err)
	if err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return nil, fail("the search engine did not answer within %s", c.cfg.Timeout)
		}
		return nil, fail("the search engine is unreachable: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fail("the search engine answered HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes))
	if err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return nil, fail("the search engine did not answer within %s", c.cfg.Timeout)
		}
		return nil, fail("reading the answer: %v", err)
	}
	var a searxAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fail("the search engine's answer is not valid JSON")
	}
	var unresponsive []string
	for _, e := range a.UnresponsiveEngines {
		parts := make([]string, 0, len(e))
		for _, p := range e {
			parts = append(parts, fmt.Sprint(p))
		}
		unresponsive = append(unresponsive, strings.Join(parts, ": "))
	}
	out := &SearchResults{Query: query, Provider: "searxng"}
	for _, r := range a.Results {
		if u, err := url.Parse(r.URL); err != nil || !webURL(u) {
			continue // the same rule as DuckDuckGo's results
		}
		out.Results = append(out.Results, r)
	}
	if len(out.Results) == 0 && len(unresponsive) > 0 {
		// Nothing found because engines failed (CAPTCHA, rate limit,
		// timeout, refused by the egress): that is a failure, not "no results".
		return nil, fail("no engine answered: %s", strings.Join(unresponsive, "; "))
	}
	out.Degraded = unresponsive
	return out, nil
}

func (c *Client) searchDDG(ctx context.Context, query string) (*SearchResults, error) {
	fail := func(format string, a ...any) error {
		return &SearchError{Provider: "duckduckgo", Reason: fmt.Sprintf(format, a...)}
	}
	u, err := url.Parse(c.cfg.DuckDuckGoURL)
	if err != nil {
		return nil, fail("bad DuckDuckGo URL: %v", err)
	}
	u.RawQuery = url.Values{"q": {query}}.Encode()
	resp, err := c.get(ctx, u)
	if err != nil {
		return nil, fail("%v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// DuckDuckGo answers a challenge with 202 or 403.
		return nil, fail("DuckDuckGo answered HTTP %d (likely a bot challenge)", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes))
	if err != nil {
		return nil, fail("reading the answer: %v", err)
	}
	results, noResults, err := parseDDG(string(body))
	if err != nil {
		return nil, fail("%v", err)
	}
	if len(results) == 0 && !noResults {
		return nil, fail("the page held no results and no \"no results\" notice (likely a bot challenge)")
	}
	return &SearchResults{Query: query, Provider: "duckduckgo", Results: results}, nil
}

// parseDDG reads DuckDuckGo's HTML results page: result__a links (whose
// href wraps the target in a uddg parameter) and result__snippet texts.
func parseDDG(page string) (results []SearchResult, noResults bool, err error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return nil, false, fmt.Errorf("parse results page: %w", err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			cls := attr(n, "class")
			switch {
			case hasClass(cls, "no-results"):
				noResults = true
			case n.Data == "a" && hasClass(cls, "result__a"):
				if target := ddgTarget(attr(n, "href")); target != "" {
					results = append(results, SearchResult{Title: text(n), URL: target})
				}
				return
			case hasClass(cls, "result__snippet"):
				if len(results) > 0 && results[len(results)-1].Snippet == "" {
					results[len(results)-1].Snippet = text(n)
				}
				return
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	return results, noResults, nil
}

func ddgTarget(href string) string {
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if t := u.Query().Get("uddg"); t != "" {
		u, err = url.Parse(t)
		if err != nil {
			return ""
		}
	}
	if !webURL(u) {
		return ""
	}
	// Ads go through DuckDuckGo's own click tracker; skip them.
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") && strings.HasPrefix(u.Path, "/y.js") {
		return ""
	}
	return u.String()
}

// webURL reports whether u is an absolute http(s) URL with a host, the only
// kind of result a search hands to the model ("https:" or "https:x" is not).
func webURL(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Opaque == "" && u.Hostname() != ""
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(cls, want string) bool {
	for _, c := range strings.Fields(cls) {
		if c == want {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
