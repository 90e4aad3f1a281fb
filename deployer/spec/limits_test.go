package spec

import (
	"slices"
	"strings"
	"testing"
)

func withLimits(table string) map[string]string {
	return map[string]string{"deploy/deployment.toml": fixture["deploy/deployment.toml"] + "\n[limits]\n" + table + "\n"}
}

func TestLimitsDefaults(t *testing.T) {
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{MaxTurns: 256, MaxTurnsPerAgent: 128, MaxTurnsPerApp: 128, MaxTurnsPerOwner: 8, MaxStreamsPerOwner: 16,
		MaxRequestsPerOwner: 32, MaxRequestsPerApp: 256, RequestsPerSecondPerApp: 200, RequestBurstPerApp: 400, RetryAfterSecs: 2}
	if d.Limits != want {
		t.Errorf("limits = %+v, want %+v", d.Limits, want)
	}
	if (Limits{}).WithDefaults() != want {
		t.Errorf("WithDefaults = %+v", (Limits{}).WithDefaults())
	}
}

func TestLimitsSet(t *testing.T) {
	d, err := loadFixture(t, withLimits("max_turns = 1\nmax_turns_per_owner = 1000000\nrequests_per_second_per_app = 0.5\nmax_streams_per_owner = 1\nmax_requests_per_owner = 1\nmax_requests_per_app = 5"))
	if err != nil {
		t.Fatal(err)
	}
	l := d.Limits
	if l.MaxTurns != 1 || l.MaxTurnsPerOwner != 1_000_000 || l.RequestsPerSecondPerApp != 0.5 || l.MaxStreamsPerOwner != 1 ||
		l.MaxRequestsPerOwner != 1 || l.MaxRequestsPerApp != 5 || l.MaxTurnsPerApp != DefaultMaxTurnsPerApp {
		t.Errorf("limits = %+v", l)
	}
}

func TestLimitsRefused(t *testing.T) {
	for _, tc := range []struct{ table, want string }{
		{"max_turns = 0", "limits.max_turns: 0 is out of range; allowed 1 to 1000000"},
		{"max_turns_per_owner = -1", "limits.max_turns_per_owner: -1 is out of range"},
		{"max_turns_per_app = 1000001", "limits.max_turns_per_app: 1000001 is out of range"},
		{"max_turns_per_agent = 0", "limits.max_turns_per_agent: 0 is out of range"},
		{"max_requests_per_owner = 0", "limits.max_requests_per_owner: 0 is out of range"},
		{"max_requests_per_app = 0", "limits.max_requests_per_app: 0 is out of range"},
		{"max_requests_per_app = 8", "limits.max_requests_per_owner: 32 is more than max_requests_per_app (8)"},
		{"request_burst_per_app = 0", "limits.request_burst_per_app: 0 is out of range"},
		{"retry_after_seconds = 3601", "limits.retry_after_seconds: 3601 is out of range; allowed 1 to 3600"},
		{"requests_per_second_per_app = 0", "limits.requests_per_second_per_app: 0 is out of range"},
		{"requests_per_second_per_app = -2.5", "limits.requests_per_second_per_app: -2.5 is out of range"},
		{"requests_per_second_per_app = nan", "limits.requests_per_second_per_app: NaN is out of range"},
		{"max_streams_per_owner = 40", "limits.max_streams_per_owner: 40 is more than max_requests_per_owner (32)"},
		{"max_turn = 3", "max_turn"},
	} {
		_, err := loadFixture(t, withLimits(tc.table))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.table, err, tc.want)
		}
	}
}

// beta is the fixture's last [[agents]] entry: a table appended to the
// file belongs to it.
func withBetaWeb(table string) map[string]string {
	return map[string]string{"deploy/deployment.toml": fixture["deploy/deployment.toml"] + "\n[agents.web]\n" + table + "\n"}
}

func TestAgentWeb(t *testing.T) {
	d, err := loadFixture(t, withBetaWeb(`allow = ["docs.example.org", "*.wiki.example", "Bücher.example."]
deny = ["secret.wiki.example"]`))
	if err != nil {
		t.Fatal(err)
	}
	w := d.Agents[1].Web
	if d.Agents[0].Web != nil || w == nil || w.Mode != WebEnforce || len(w.Allow) != 3 || w.Deny[0] != "secret.wiki.example" {
		t.Fatalf("web: %+v / %+v", d.Agents[0].Web, w)
	}
	if d, err := loadFixture(t, withBetaWeb(`mode = "report"`)); err != nil || d.Agents[1].Web.Mode != WebReport {
		t.Fatalf("report: %v", err)
	}
	for _, tc := range []struct{ table, want string }{
		{`allow = ["*.com"]`, "agents[beta].web.allow[0]: bad domain pattern \"*.com\": a wildcard may not cover a public suffix"},
		{`deny = ["ok.example", "http://x.example/"]`, "agents[beta].web.deny[1]: bad domain pattern"},
		{`allow = ["a.*.example"]`, "agents[beta].web.allow[0]"},
		{`allow = ["192.0.2.1"]`, "is an IP address"},
		{`mode = "audit"`, `agents[beta].web.mode: unknown mode "audit"`},
		{`allowed = ["x.example"]`, "allowed"},
	} {
		_, err := loadFixture(t, withBetaWeb(tc.table))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.table, err, tc.want)
		}
	}
}

func withSearch(table string) map[string]string {
	return map[string]string{"deploy/deployment.toml": fixture["deploy/deployment.toml"] + "\n[search]\n" + table + "\n"}
}

func TestSearchEngines(t *testing.T) {
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Search.Engines, DefaultSearchEngines) {
		t.Fatalf("default engines = %v", d.Search.Engines)
	}
	d, err = loadFixture(t, withSearch(`engines = ["search.corp.example", "*.engine.example"]`))
	if err != nil || !slices.Equal(d.Search.Engines, []string{"search.corp.example", "*.engine.example"}) {
		t.Fatalf("engines: %v, %v", d, err)
	}
	for _, tc := range []struct{ table, want string }{
		{`engines = []`, "search.engines: empty"},
		{`engines = ["*.org"]`, "search.engines[0]: bad domain pattern \"*.org\""},
		{`engines = ["ok.example", "https://x.example"]`, "search.engines[1]: bad domain pattern"},
		{`engines = ["198.51.100.7"]`, "is an IP address"},
	} {
		_, err := loadFixture(t, withSearch(tc.table))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.table, err, tc.want)
		}
	}
}

func TestWebClientsFile(t *testing.T) {
	d := &Deployment{Search: Search{Provider: "duckduckgo"}, Agents: []Agent{{ID: "a", Web: &Web{Allow: []string{"x.example"}, Mode: WebReport}}}}
	b, err := WebClients(d)
	if err != nil || string(b) != "{\n  \"clients\": [\n    {\n      \"name\": \"vessel\"\n    },\n    {\n      \"name\": \"agent.a\",\n      \"allow\": [\n        \"x.example\"\n      ],\n      \"mode\": \"report\"\n    }\n  ]\n}\n" {
		t.Fatalf("no search container: %s %v", b, err)
	}
	d.Search.Provider = DefaultProvider
	if _, err := WebClients(d); err == nil || !strings.Contains(err.Error(), "engines is empty") {
		t.Fatalf("searxng without engines: %v", err)
	}
	if u := SearchProxyURL("tok", "http://egress:3128"); u != "http://search:"+WebClientToken("tok", "search")+"@egress:3128" {
		t.Fatalf("SearchProxyURL = %s", u)
	}
}
