package webproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/egress/guard"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestTaskIDLoggedNeverForwardedAndSeries: the proxy logs the task id on
// its decision lines, for absolute-URI requests and CONNECT alike, the
// origin (a loopback server recording headers) never sees it, and the
// decision, tunnel and byte series move without naming the task.
func TestTaskIDLoggedNeverForwardedAndSeries(t *testing.T) {
	got := make(chan string, 4)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(telemetry.TaskIDHeader)
		fmt.Fprint(w, "hello")
	}))
	defer origin.Close()
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	auth := "origin.test:" + strconv.Itoa(int(oAddr.Port()))
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}}
	reg := prometheus.NewRegistry()
	met := NewMetrics(reg)
	h := newHarnessWith(t, cfg, map[string][][]string{"origin.test": {{"127.0.0.1"}}},
		func(o *Options) { o.Metrics = met }, oAddr.String())

	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL)}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+auth+"/a", nil)
	req.Header.Set(telemetry.TaskIDHeader, "task-http-1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if v := <-got; v != "" {
		t.Errorf("the origin received the task id %q", v)
	}

	conn, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s: task-connect-2\r\n\r\n", auth, auth, telemetry.TaskIDHeader)
	br := bufio.NewReader(conn)
	cr, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || cr.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", cr, err)
	}
	fmt.Fprintf(conn, "GET /t HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", auth)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(inner.Body)
	conn.Close()
	<-got

	lines := h.logs.FilterMessage("egress decision").All()
	var tasks []string
	for _, l := range lines {
		if s, _ := l.ContextMap()["task"].(string); s != "" {
			tasks = append(tasks, s)
		}
	}
	if strings.Join(tasks, ",") != "task-http-1,task-connect-2" {
		t.Fatalf("decision lines' tasks: %v", tasks)
	}

	scrapeHas := func(want ...string) {
		t.Helper()
		hs := httptest.NewServer(telemetry.Handler(reg))
		defer hs.Close()
		r, err := http.Get(hs.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		out := string(b)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("scrape lacks %s", w)
			}
		}
		for _, secret := range []string{"task-http-1", "task-connect-2"} {
			if strings.Contains(out, secret) {
				t.Errorf("a series carries %s", secret)
			}
		}
	}
	// The tunnel closes asynchronously after the client hangs up.
	for tries := 0; ; tries++ {
		hs := httptest.NewServer(telemetry.Handler(reg))
		r, err := http.Get(hs.URL)
		hs.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if strings.Contains(string(b), "egress_proxy_open_tunnels 0") || tries > 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	scrapeHas(
		`egress_proxy_decisions_total{decision="allow",reason="allow-cidr"} 2`,
		`egress_proxy_connect_duration_seconds_count 2`,
		`egress_proxy_upstream_duration_seconds_count 1`,
		`egress_proxy_open_tunnels 0`,
		`egress_proxy_bytes_total{kind="http"} 5`,
		`egress_proxy_bytes_total{kind="tunnel"}`,
	)
}
