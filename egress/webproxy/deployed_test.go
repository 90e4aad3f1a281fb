package webproxy

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/egress/guard"
)

// TestDeployedClients: the clients file deploy writes (spec.WebClients)
// and the search container's proxy URL (spec.SearchProxyURL), read as the
// egress reads them, authenticate the vessel, each agent and the search
// container, and give the search container its engines' hosts only.
func TestDeployedClients(t *testing.T) {
	const egressTok = "egress-token-0123456789abcdef0123456789"
	d := &spec.Deployment{
		Search: spec.Search{Provider: "searxng", Engines: []string{"engine.search.example"}},
		Agents: []spec.Agent{{ID: "guide", Web: &spec.Web{Deny: []string{"ads.example.org"}, Mode: spec.WebEnforce}}, {ID: "open"}},
	}
	file, err := spec.WebClients(d)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := LoadClients(file, egressTok)
	if err != nil || cs.Len() != 4 {
		t.Fatalf("load %s: %v", file, err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	t.Cleanup(origin.Close)
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	answers := map[string][][]string{}
	for _, n := range []string{"docs.example.org", "ads.example.org", "engine.search.example"} {
		answers[n] = [][]string{{"127.0.0.1"}}
	}
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}}
	h := newHarnessWith(t, cfg, answers, func(o *Options) { o.Clients = cs }, oAddr.String())
	port := strconv.Itoa(int(oAddr.Port()))

	search, err := url.Parse(spec.SearchProxyURL(egressTok, "http://egress:3128"))
	if err != nil || search.Host != "egress:3128" || search.User.Username() != spec.SearchWebClient {
		t.Fatalf("search proxy URL %v: %v", search, err)
	}
	searchTok, _ := search.User.Password()
	for _, tc := range []struct {
		client, token, host string
		status              int
	}{
		{spec.SearchWebClient, searchTok, "engine.search.example", 200},
		{spec.SearchWebClient, searchTok, "docs.example.org", 403},
		{spec.SearchWebClient, spec.WebClientToken(egressTok, "agent.guide"), "engine.search.example", 407},
		{"agent.guide", spec.WebClientToken(egressTok, "agent.guide"), "docs.example.org", 200},
		{"agent.guide", spec.WebClientToken(egressTok, "agent.guide"), "ads.example.org", 403},
		{"agent.open", spec.WebClientToken(egressTok, "agent.open"), "ads.example.org", 200},
		{spec.VesselWebClient, spec.WebClientToken(egressTok, spec.VesselWebClient), "docs.example.org", 200},
		{"", "", "docs.example.org", 407},
		{"agent.guide", egressTok, "docs.example.org", 407},
	} {
		resp, body := h.via(t, tc.client, tc.token, "http://"+tc.host+":"+port+"/")
		if resp.StatusCode != tc.status {
			t.Errorf("%s → %s: %d %q, want %d", tc.client, tc.host, resp.StatusCode, body, tc.status)
		}
	}
	if resp := h.connectAs(t, "not-an-engine.example:443", basic(spec.SearchWebClient, searchTok)); resp.StatusCode != 403 || resp.Header.Get(HeaderDenied) != ReasonNamePolicy {
		t.Errorf("search CONNECT outside its engines: %d %v", resp.StatusCode, resp.Header)
	}
	if n := h.res.count("not-an-engine.example"); n != 0 {
		t.Errorf("a name outside the engines was looked up %d times", n)
	}
}
