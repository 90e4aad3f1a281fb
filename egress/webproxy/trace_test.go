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
	"testing"

	"github.com/astraldeep/astralvessel-go/egress/guard"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/otlpsink"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry/tracetest"
)

const (
	vesselTrace = "6bf92f3577b34da6a3ce929d0e0e4736"
	vesselSpan  = "20f067aa0ba902b7"
)

// TestTraceHeadersNeverUpstream: a plain-HTTP request's traceparent,
// tracestate and baggage never reach the origin (a loopback server
// recording headers), whether tracing is on or off; with tracing on, the
// decisions of a plain-HTTP request and of a CONNECT are server spans of
// the vessel's trace, exported to a real OTLP receiver.
func TestTraceHeadersNeverUpstream(t *testing.T) {
	type seen struct{ tp, ts, bg string }
	got := make(chan seen, 8)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("traceparent"), r.Header.Get("tracestate"), r.Header.Get("baggage")}
		fmt.Fprint(w, "hello")
	}))
	defer origin.Close()
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	auth := "origin.test:" + strconv.Itoa(int(oAddr.Port()))
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}}
	h := newHarness(t, cfg, map[string][][]string{"origin.test": {{"127.0.0.1"}}}, oAddr.String())
	traceparent := "00-" + vesselTrace + "-" + vesselSpan + "-01"
	plain := func() {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL)}}
		req, _ := http.NewRequest(http.MethodGet, "http://"+auth+"/a", nil)
		req.Header.Set("traceparent", traceparent)
		req.Header.Set("tracestate", "vendor=x")
		req.Header.Set("baggage", "user=alice")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if s := <-got; s != (seen{}) {
			t.Errorf("the origin received trace headers %+v", s)
		}
	}
	plain() // tracing off

	rcv := tracetest.Start(t, "egress")
	plain()
	conn, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\ntraceparent: %s\r\nX-Vessel-Task-Id: task-c1\r\n\r\n", auth, auth, traceparent)
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
	if s := <-got; s != (seen{}) {
		t.Errorf("the origin received trace headers through the tunnel %+v", s)
	}
	// A refused CONNECT is a span too, marked as an error.
	denied, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(denied, "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\ntraceparent: %s\r\n\r\n", traceparent)
	dr, err := http.ReadResponse(bufio.NewReader(denied), &http.Request{Method: http.MethodConnect})
	if err != nil || dr.StatusCode != http.StatusForbidden {
		t.Fatalf("denied CONNECT: %v %v", dr, err)
	}
	denied.Close()

	spans := rcv.Wait(t, func(s []otlpsink.Span) bool { return len(otlpsink.Trace(s, vesselTrace)) >= 3 })
	var gets, connects, refused int
	for _, sp := range otlpsink.Trace(spans, vesselTrace) {
		if sp.ParentID != vesselSpan || sp.Kind != "SPAN_KIND_SERVER" || sp.Service != "egress" {
			t.Errorf("span %+v: want a server span under the vessel's", sp)
		}
		switch {
		case sp.Name == "egress GET" && sp.Attributes["vessel.decision"] == "allow":
			gets++
		case sp.Name == "egress CONNECT" && sp.Attributes["vessel.decision"] == "allow":
			connects++
			if sp.Attributes["vessel.task_id"] != "task-c1" || sp.Attributes["server.address"] != "origin.test" {
				t.Errorf("CONNECT span attributes %v", sp.Attributes)
			}
		case sp.Name == "egress CONNECT" && sp.Attributes["vessel.decision"] == "deny" && sp.Status == "STATUS_CODE_ERROR":
			refused++
		default:
			t.Errorf("unexpected span %+v", sp)
		}
	}
	if gets != 1 || connects != 1 || refused != 1 {
		t.Errorf("spans: %d GET, %d CONNECT, %d refused; want one each", gets, connects, refused)
	}
}
