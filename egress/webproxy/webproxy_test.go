package webproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/astraldeep/astralvessel-go/egress/guard"
)

// stubResolver answers from a table; a name with several answers returns
// them in turn on successive lookups (a rebinding DNS server).
type stubResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func (s *stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	seq, ok := s.answers[host]
	n := s.calls[host]
	s.calls[host]++
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	ans := seq[min(n, len(seq)-1)]
	var out []netip.Addr
	for _, a := range ans {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func (s *stubResolver) count(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[host]
}

// stubDialer records every dial. It connects only to loopback addresses the
// test listed; everything else is refused, so no test sends a packet off
// this machine.
type stubDialer struct {
	mu     sync.Mutex
	dials  []string
	permit map[string]bool
}

func (s *stubDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	s.mu.Lock()
	s.dials = append(s.dials, addr)
	ok := s.permit[addr]
	s.mu.Unlock()
	if !ok {
		return nil, errors.New("stub dialer: refused (test never dials out)")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (s *stubDialer) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.dials...)
}

type harness struct {
	proxyURL *url.URL
	proxyLn  string
	res      *stubResolver
	dial     *stubDialer
	logs     *observer.ObservedLogs
	proxy    *Proxy
}

func newHarness(t *testing.T, cfg guard.Config, answers map[string][][]string, permit ...string) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, answers, nil, permit...)
}

// newHarnessWith is newHarness with a last change to the proxy's Options.
func newHarnessWith(t *testing.T, cfg guard.Config, answers map[string][][]string, mutate func(*Options), permit ...string) *harness {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, portStr, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portStr)
	cfg.SelfPorts = append(cfg.SelfPorts, uint16(port))
	pol, err := guard.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	h := &harness{res: &stubResolver{answers: answers}, dial: &stubDialer{permit: map[string]bool{}}, logs: logs}
	for _, p := range permit {
		h.dial.permit[p] = true
	}
	opt := Options{Policy: pol, Resolver: h.res, Dialer: h.dial, Logger: zap.New(core)}
	if mutate != nil {
		mutate(&opt)
	}
	p, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); p.Close() })
	h.proxy = p
	h.proxyLn = ln.Addr().String()
	h.proxyURL = &url.URL{Scheme: "http", Host: h.proxyLn}
	return h
}

// get sends an absolute-URI request through the proxy.
func (h *harness) get(t *testing.T, target string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL)}}
	resp, err := c.Get(target)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// rawGet writes an absolute-URI request byte for byte, so odd hosts reach
// the proxy exactly as written.
func (h *harness) rawGet(t *testing.T, target string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// connect sends a raw CONNECT; on 200 it speaks plain HTTP through the
// tunnel and returns that inner response's body.
func (h *harness) connect(t *testing.T, authority string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", authority, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", authority)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("through tunnel: %v", err)
	}
	b, _ := io.ReadAll(inner.Body)
	return resp, string(b)
}

func TestDeniedWithoutDial(t *testing.T) {
	answers := map[string][][]string{
		"internal.test": {{"10.0.0.5"}},
		"meta.test":     {{"169.254.169.254"}},
		"mixed.test":    {{"93.184.216.34", "10.0.0.1"}},
		"mixed6.test":   {{"2606:4700::1111", "fd00::1"}},
		"mapped.test":   {{"::ffff:127.0.0.1"}},
		"nat64.test":    {{"64:ff9b::a00:1"}},
		"loop.test":     {{"127.0.0.1"}},
		"cgnat.test":    {{"100.64.1.1"}},
	}
	h := newHarness(t, guard.Config{}, answers)
	cases := []struct{ host, reason string }{
		{"internal.test", "private"},
		{"meta.test", "link-local"},
		{"mixed.test", "private"},
		{"mixed6.test", "unique-local"},
		{"mapped.test", "loopback"}, // unmapped before the check
		{"nat64.test", "nat64"},
		{"loop.test", "loopback"},
		{"cgnat.test", "cgnat"},
		{"127.0.0.1", "loopback"},
		{"169.254.169.254", "link-local"},
		{"[::1]", "loopback"},
		{"[::ffff:10.0.0.1]", "ipv4-mapped"},
		{"[fe80::1%25eth0]", "bad-host"},
		{"2130706433", "bad-host"},
		{"0177.0.0.1", "bad-host"},
		{"0x7f.1", "bad-host"},
		{"127.1", "bad-host"},
		{"127.0.0.1.", "bad-host"},
	}
	for _, c := range cases {
		t.Run("connect/"+c.host, func(t *testing.T) {
			resp, body := h.connect(t, c.host+":443")
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != c.reason {
				t.Fatalf("got %d %q (%q), want 403 %q", resp.StatusCode, resp.Header.Get(HeaderDenied), body, c.reason)
			}
		})
		t.Run("http/"+c.host, func(t *testing.T) {
			resp, body := h.rawGet(t, "http://"+c.host+"/x")
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != c.reason {
				t.Fatalf("got %d %q (%q), want 403 %q", resp.StatusCode, resp.Header.Get(HeaderDenied), body, c.reason)
			}
		})
	}
	if d := h.dial.got(); len(d) != 0 {
		t.Fatalf("denied requests dialled: %v", d)
	}
	// One decision line per request, every one a deny.
	entries := h.logs.FilterMessage("egress decision").All()
	if len(entries) != 2*len(cases) {
		t.Fatalf("%d decision lines for %d requests", len(entries), 2*len(cases))
	}
	for _, e := range entries {
		if e.ContextMap()["decision"] != "deny" {
			t.Fatalf("logged %v", e.ContextMap())
		}
	}
	m := h.logs.FilterField(zap.String("host", "mixed.test")).All()[0].ContextMap()
	for _, k := range []string{"host", "port", "resolved", "decision", "reason", "dns_ms", "connect_ms"} {
		if _, ok := m[k]; !ok {
			t.Errorf("decision line lacks %s: %v", k, m)
		}
	}
}

func TestPortsRefusedBeforeDNS(t *testing.T) {
	h := newHarness(t, guard.Config{}, map[string][][]string{"pub.test": {{"93.184.216.34"}}})
	for _, port := range []string{"22", "25", "8080", "3128", "6379"} {
		resp, _ := h.connect(t, "pub.test:"+port)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != guard.ReasonPort {
			t.Fatalf("port %s: %d %q", port, resp.StatusCode, resp.Header.Get(HeaderDenied))
		}
		resp, _ = h.get(t, "http://pub.test:"+port+"/")
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("http port %s: %d", port, resp.StatusCode)
		}
	}
	if h.res.count("pub.test") != 0 || len(h.dial.got()) != 0 {
		t.Fatalf("port refusals caused lookups %d / dials %v", h.res.count("pub.test"), h.dial.got())
	}
}

// A public first answer is dialled exactly as checked; the rebinding second
// answer (loopback) is never looked up or used. The stub dialer refuses the
// public address, so nothing leaves the machine.
func TestRebindingDialsCheckedAddress(t *testing.T) {
	for _, mode := range []string{"connect", "http"} {
		t.Run(mode, func(t *testing.T) {
			answers := map[string][][]string{"rebind.test": {{"93.184.216.34"}, {"127.0.0.1"}}}
			h := newHarness(t, guard.Config{}, answers)
			var resp *http.Response
			want := "93.184.216.34:443"
			if mode == "connect" {
				resp, _ = h.connect(t, "rebind.test:443")
			} else {
				resp, _ = h.rawGet(t, "http://rebind.test/")
				want = "93.184.216.34:80"
			}
			if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(HeaderError) != "connect-failed" {
				t.Fatalf("first: %d %v", resp.StatusCode, resp.Header)
			}
			// The dial went to the checked address itself, after one lookup.
			if got := h.dial.got(); len(got) != 1 || got[0] != want {
				t.Fatalf("dials %v, want [%s]", got, want)
			}
			if n := h.res.count("rebind.test"); n != 1 {
				t.Fatalf("lookups %d, want 1", n)
			}
			// The next lookup rebinds to loopback: refused, no new dial.
			if mode == "connect" {
				resp, _ = h.connect(t, "rebind.test:443")
			} else {
				resp, _ = h.rawGet(t, "http://rebind.test/")
			}
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != "loopback" {
				t.Fatalf("second: %d %v", resp.StatusCode, resp.Header)
			}
			if got := h.dial.got(); len(got) != 1 {
				t.Fatalf("dials after rebinding %v", got)
			}
		})
	}
}

// A name whose first answer is private is refused, even though its next
// answer would be public.
func TestRebindingPrivateFirst(t *testing.T) {
	answers := map[string][][]string{"rb.test": {{"192.168.1.1"}, {"93.184.216.34"}}}
	h := newHarness(t, guard.Config{}, answers)
	resp, _ := h.connect(t, "rb.test:443")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != "private" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	if len(h.dial.got()) != 0 || h.res.count("rb.test") != 1 {
		t.Fatalf("dials %v lookups %d", h.dial.got(), h.res.count("rb.test"))
	}
}

func TestDNSFailure(t *testing.T) {
	h := newHarness(t, guard.Config{}, nil)
	resp, _ := h.connect(t, "nowhere.test:443")
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(HeaderError) != "dns-failed" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = h.get(t, "http://nowhere.test/")
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(HeaderError) != "dns-failed" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
}

func TestSchemeAndHealth(t *testing.T) {
	h := newHarness(t, guard.Config{}, nil)
	c, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET ftp://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != "scheme" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	r, err := http.Get("http://" + h.proxyLn + "/health")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("health %d", r.StatusCode)
	}
}

// Loopback origins are reachable only through the explicit allow option.
func TestAllowedLoopbackOrigin(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer origin.Close()
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	answers := map[string][][]string{"origin.test": {{"127.0.0.1"}}}

	// Without the allow option: refused, no dial.
	h := newHarness(t, guard.Config{AllowPorts: []uint16{oAddr.Port()}}, answers, oAddr.String())
	resp, _ := h.get(t, "http://origin.test:"+strconv.Itoa(int(oAddr.Port()))+"/a")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderDenied) != guard.ReasonPort {
		t.Fatalf("without allow: %d %v", resp.StatusCode, resp.Header)
	}
	if len(h.dial.got()) != 0 {
		t.Fatalf("dialled without allow: %v", h.dial.got())
	}

	// With it: both request forms reach the origin, dialled by address.
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}}
	h = newHarness(t, cfg, answers, oAddr.String())
	auth := "origin.test:" + strconv.Itoa(int(oAddr.Port()))
	resp, body := h.get(t, "http://"+auth+"/a")
	if resp.StatusCode != http.StatusOK || body != "hello /a" {
		t.Fatalf("GET: %d %q", resp.StatusCode, body)
	}
	resp, body = h.connect(t, auth)
	if resp.StatusCode != http.StatusOK || body != "hello /tunnel" {
		t.Fatalf("CONNECT: %d %q", resp.StatusCode, body)
	}
	for _, d := range h.dial.got() {
		if d != oAddr.String() {
			t.Fatalf("dialled %s, want %s", d, oAddr)
		}
	}
	if len(h.dial.got()) != 2 {
		t.Fatalf("dials %v", h.dial.got())
	}
	allowed := h.logs.FilterField(zap.String("decision", "allow")).All()
	if len(allowed) != 2 || allowed[0].ContextMap()["reason"] != guard.ReasonAllowCIDR {
		t.Fatalf("allow lines: %v", allowed)
	}

	// Allowed ports stay bound to the allow list; the proxy's own port is
	// refused even though 127.0.0.0/8 is allowed.
	self := netip.MustParseAddrPort(h.proxyLn)
	resp, _ = h.connect(t, h.proxyLn)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("self connect (%s): %d", self, resp.StatusCode)
	}
	if !strings.Contains(resp.Header.Get(HeaderDenied), "port") && resp.Header.Get(HeaderDenied) != guard.ReasonSelf {
		t.Fatalf("self reason %q", resp.Header.Get(HeaderDenied))
	}
}

func TestSelfPortDeniedEvenWhenAllowed(t *testing.T) {
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	// Allow the proxy's own port explicitly once its listener exists.
	h := newHarness(t, cfg, nil)
	port := netip.MustParseAddrPort(h.proxyLn).Port()
	cfg.AllowPorts = []uint16{port}
	cfg.SelfPorts = []uint16{port}
	pol, _ := guard.New(cfg)
	if d := pol.Check("", netip.MustParseAddr("127.0.0.1"), port); d.Allow || d.Reason != guard.ReasonSelf {
		t.Fatalf("self: %+v", d)
	}
}

// The default dialer (with the socket-level guard) reaches an allowed
// loopback origin; the real resolver is never used (IP literal).
func TestDefaultDialerAllowed(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer origin.Close()
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	pol, err := guard.New(guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	pu, _ := url.Parse(srv.URL)
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	resp, err := c.Get(origin.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
}
