package webproxy

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/astraldeep/astralvessel-go/egress/guard"
	"github.com/astraldeep/astralvessel-go/runtime/domains"
	"github.com/astraldeep/astralvessel-go/runtime/webclients"
)

const (
	tokAgent  = "agent-token-0123456789abcdef0123456789"
	tokSearch = "search-token-0123456789abcdef012345678"
	tokReport = "report-token-0123456789abcdef012345678"
)

func mustPolicy(t *testing.T, allow, deny []string) *domains.Policy {
	t.Helper()
	p, err := domains.NewPolicy(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clientHarness serves a loopback origin under several names, behind a
// proxy with three clients: an agent (a denylist), the search container
// (an allowlist of its engine) and a report-only agent.
func clientHarness(t *testing.T) (*harness, string) {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "" {
			http.Error(w, "credentials leaked", http.StatusTeapot)
			return
		}
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	answers := map[string][][]string{}
	for _, n := range []string{"docs.example.org", "ads.example.org", "engine.search.example", "other.example"} {
		answers[n] = [][]string{{"127.0.0.1"}}
	}
	cs, err := NewClients([]Client{
		{Name: "agent.field-guide", Token: tokAgent, Names: mustPolicy(t, nil, []string{"ads.example.org"})},
		{Name: "search", Token: tokSearch, Names: mustPolicy(t, []string{"engine.search.example"}, nil)},
		{Name: "agent.reader", Token: tokReport, Names: mustPolicy(t, []string{"docs.example.org"}, nil), Report: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}}
	h := newHarnessWith(t, cfg, answers, func(o *Options) { o.Clients = cs }, oAddr.String())
	return h, strconv.Itoa(int(oAddr.Port()))
}

// via sends an absolute-URI GET as name:token (no credentials when name is "").
func (h *harness) via(t *testing.T, name, token, target string) (*http.Response, string) {
	t.Helper()
	pu := *h.proxyURL
	if name != "" {
		pu.User = url.UserPassword(name, token)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&pu)}}
	resp, err := c.Get(target)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// connectAs sends a raw CONNECT with the given Proxy-Authorization value.
func (h *harness) connectAs(t *testing.T, authority, proxyAuth string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", authority, authority)
	if proxyAuth != "" {
		fmt.Fprintf(c, "Proxy-Authorization: %s\r\n", proxyAuth)
	}
	fmt.Fprintf(c, "\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", authority, err)
	}
	resp.Body.Close()
	return resp
}

func basic(name, token string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(name+":"+token))
}

func TestUnauthenticatedClientsGet407(t *testing.T) {
	h, port := clientHarness(t)
	target := "http://docs.example.org:" + port + "/a"
	for _, tc := range []struct{ what, name, token string }{
		{"no credentials", "", ""},
		{"wrong token", "agent.field-guide", tokSearch},
		{"unknown client", "agent.nobody", tokAgent},
		{"empty token", "search", ""},
	} {
		resp, _ := h.via(t, tc.name, tc.token, target)
		if resp.StatusCode != http.StatusProxyAuthRequired || resp.Header.Get("Proxy-Authenticate") == "" || resp.Header.Get(HeaderDenied) != ReasonUnauthenticated {
			t.Errorf("%s: %d %v", tc.what, resp.StatusCode, resp.Header)
		}
	}
	auth := "docs.example.org:" + port
	for _, pa := range []string{"", "Bearer " + tokAgent, "Basic !!!", basic("agent.field-guide", tokAgent+"x"), "basic"} {
		if resp := h.connectAs(t, auth, pa); resp.StatusCode != http.StatusProxyAuthRequired {
			t.Errorf("CONNECT with %q: %d", pa, resp.StatusCode)
		}
	}
	if len(h.dial.got()) != 0 || h.res.count("docs.example.org") != 0 {
		t.Fatalf("an unauthenticated client caused dials %v or lookups", h.dial.got())
	}
	lines := h.logs.FilterField(zap.String("reason", ReasonUnauthenticated)).All()
	if len(lines) != 9 || lines[0].ContextMap()["client"] != "" {
		t.Fatalf("%d unauthenticated lines: %v", len(lines), lines)
	}
	// The right credentials on the same tunnel form pass.
	if resp := h.connectAs(t, auth, basic("agent.field-guide", tokAgent)); resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT as the agent: %d", resp.StatusCode)
	}
}

func TestClientPolicies(t *testing.T) {
	h, port := clientHarness(t)
	for _, tc := range []struct {
		client, token, host string
		status              int
		policy              string
	}{
		{"agent.field-guide", tokAgent, "docs.example.org", 200, ""},
		{"agent.field-guide", tokAgent, "other.example", 200, ""},
		{"agent.field-guide", tokAgent, "ads.example.org", 403, "denylist ads.example.org"},
		{"agent.field-guide", tokAgent, "ADS.Example.Org.", 403, "denylist ads.example.org"},
		{"search", tokSearch, "engine.search.example", 200, ""},
		{"search", tokSearch, "docs.example.org", 403, "not in the allowlist"},
		{"search", tokSearch, "127.0.0.1", 403, "an address is not in the allowlist; ask for the site by name"},
		// report-only: served, logged as what enforcement would refuse
		{"agent.reader", tokReport, "docs.example.org", 200, ""},
		{"agent.reader", tokReport, "other.example", 200, ""},
	} {
		resp, body := h.via(t, tc.client, tc.token, "http://"+tc.host+":"+port+"/p")
		if resp.StatusCode != tc.status || resp.Header.Get(HeaderPolicy) != tc.policy {
			t.Errorf("%s → %s: %d %q %q", tc.client, tc.host, resp.StatusCode, resp.Header.Get(HeaderPolicy), body)
			continue
		}
		if tc.status == 200 && body != "hello /p" {
			t.Errorf("%s → %s: body %q", tc.client, tc.host, body)
		}
		if tc.status == 403 && (resp.Header.Get(HeaderDenied) != ReasonNamePolicy || !strings.Contains(body, tc.policy)) {
			t.Errorf("%s → %s: %v %q", tc.client, tc.host, resp.Header, body)
		}
	}
	// The name policy refuses before any DNS lookup.
	if n := h.res.count("ads.example.org"); n != 0 {
		t.Errorf("ads.example.org looked up %d times", n)
	}
	// CONNECT gets the same policy.
	if resp := h.connectAs(t, "ads.example.org:"+port, basic("agent.field-guide", tokAgent)); resp.StatusCode != 403 || resp.Header.Get(HeaderPolicy) != "denylist ads.example.org" {
		t.Errorf("CONNECT to a denied name: %d %v", resp.StatusCode, resp.Header)
	}
	// Every decision names its client.
	for _, e := range h.logs.FilterMessage("egress decision").All() {
		if e.ContextMap()["client"] == "" {
			t.Errorf("a decision without its client: %v", e.ContextMap())
		}
	}
	report := h.logs.FilterField(zap.Bool("report_only", true)).All()
	if len(report) != 1 || report[0].ContextMap()["would_refuse"] != "not in the allowlist" || report[0].ContextMap()["host"] != "other.example" ||
		report[0].ContextMap()["decision"] != "allow" {
		t.Errorf("report-only lines: %v", report)
	}
}

func TestNewClientsRefuses(t *testing.T) {
	for what, list := range map[string][]Client{
		"no name":     {{Token: tokAgent}},
		"short token": {{Name: "a", Token: "short"}},
		"twice":       {{Name: "a", Token: tokAgent}, {Name: "a", Token: tokSearch}},
		"colon":       {{Name: "agent:a", Token: tokAgent}},
	} {
		if _, err := NewClients(list); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

// The tokens LoadClients derives are the ones a client computes with
// webclients.Token from the egress token.
func TestLoadClientsDerivesTokens(t *testing.T) {
	cs, err := LoadClients([]byte(`{"clients": [{"name": "agent.a", "mode": "report", "allow": ["x.example"]}, {"name": "search"}]}`), "egress-token-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	req := func(name, tok string) *http.Request {
		r := httptest.NewRequest(http.MethodConnect, "http://x.example:443", nil)
		r.Header.Set("Proxy-Authorization", basic(name, tok))
		return r
	}
	c := cs.authenticate(req("agent.a", webclients.Token("egress-token-0123456789", "agent.a")))
	if c == nil || !c.Report || c.Names.Allow.Len() != 1 {
		t.Fatalf("agent.a: %+v", c)
	}
	if cs.authenticate(req("agent.a", webclients.Token("egress-token-0123456789", "search"))) != nil {
		t.Fatal("search's token authenticated agent.a")
	}
	if cs.authenticate(req("search", webclients.Token("another-egress-token", "search"))) != nil {
		t.Fatal("a token from another egress token authenticated")
	}
}

// TestDuplicateProxyAuthorizationRefused: a request with two
// Proxy-Authorization headers is refused (400) in either request form,
// whichever of the two is valid, before any lookup or dial, and neither
// value reaches the log.
func TestDuplicateProxyAuthorizationRefused(t *testing.T) {
	h, port := clientHarness(t)
	authority := "docs.example.org:" + port
	good, bad := basic("agent.field-guide", tokAgent), basic("search", tokSearch+"-wrong")
	for _, pair := range [][2]string{{good, bad}, {bad, good}, {good, good}} {
		for _, form := range []string{"CONNECT " + authority, "GET http://" + authority + "/a"} {
			c, err := net.Dial("tcp", h.proxyLn)
			if err != nil {
				t.Fatal(err)
			}
			method, _, _ := strings.Cut(form, " ")
			fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: %s\r\nProxy-Authorization: %s\r\n\r\n", form, authority, pair[0], pair[1])
			resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
			if err != nil {
				t.Fatalf("%s: %v", form, err)
			}
			resp.Body.Close()
			c.Close()
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(HeaderDenied) != ReasonDuplicateCredentials {
				t.Errorf("%s with two credentials: %d %v", form, resp.StatusCode, resp.Header)
			}
		}
	}
	if len(h.dial.got()) != 0 || h.res.count("docs.example.org") != 0 {
		t.Fatalf("a request with two credentials caused dials %v or lookups", h.dial.got())
	}
	lines := h.logs.FilterField(zap.String("reason", ReasonDuplicateCredentials)).All()
	if len(lines) != 6 {
		t.Fatalf("%d duplicate-credentials lines, want 6", len(lines))
	}
	for _, l := range lines {
		s := fmt.Sprint(l.Message, l.ContextMap())
		if strings.Contains(s, tokAgent) || strings.Contains(s, tokSearch) || strings.Contains(s, good) {
			t.Fatalf("a credential in the log: %s", s)
		}
	}
	// One header, the same credentials: served.
	if resp := h.connectAs(t, authority, good); resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT with one credential: %d", resp.StatusCode)
	}
}

// TestRefusedProxyCredentialsNeverLogged plants distinct secrets in the
// egress's refusal of bad proxy credentials (a wrong token, an unknown
// client's token, a malformed header, two headers) and greps every answer
// and every log line for them.
func TestRefusedProxyCredentialsNeverLogged(t *testing.T) {
	h, port := clientHarness(t)
	authority := "docs.example.org:" + port
	planted := []string{"planted-proxy-token-1a2b", "planted-proxy-token-3c4d", "planted-proxy-raw-5e6f", "planted-proxy-dup-7a8b"}
	var answers []string
	resp, body := h.via(t, "agent.field-guide", planted[0], "http://"+authority+"/a")
	answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header, body))
	resp, body = h.via(t, "agent.nobody-"+planted[1], planted[1], "http://"+authority+"/a")
	answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header, body))
	for _, pa := range []string{"Bearer " + planted[2], basic("agent.field-guide", planted[3]) + ", " + basic("search", planted[3])} {
		resp := h.connectAs(t, authority, pa)
		answers = append(answers, fmt.Sprint(resp.StatusCode, resp.Header))
		if resp.StatusCode != http.StatusProxyAuthRequired {
			t.Errorf("CONNECT with %q: %d", pa, resp.StatusCode)
		}
	}
	entries := h.logs.All()
	if len(entries) < 4 {
		t.Fatalf("%d log lines: the refusals were not logged", len(entries))
	}
	for _, e := range entries {
		answers = append(answers, fmt.Sprint(e.Message, e.ContextMap()))
	}
	for _, a := range answers {
		for _, s := range planted {
			if strings.Contains(a, s) {
				t.Errorf("%q leaked: %s", s, a)
			}
		}
	}
}

// TestClientPrintsNoToken: a Client printed by mistake does not show its
// token.
func TestClientPrintsNoToken(t *testing.T) {
	c := Client{Name: "agent.field-guide", Token: tokAgent}
	for _, s := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", &c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, tokAgent) {
			t.Fatalf("the token printed: %s", s)
		}
	}
}
