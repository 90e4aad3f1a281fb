package webproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/astraldeep/astralvessel-go/egress/guard"
	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestAuditNetworkActivity: each decision writes one OCSF Network
// Activity event to a real file: an allowed request to a loopback origin
// (Open, Allowed), a CONNECT to a private literal address (Refuse,
// Blocked; never dialled), a CONNECT the policy allows whose connection
// fails (Fail), and a refused scheme; each names the task the vessel sent.
func TestAuditNetworkActivity(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer origin.Close()
	oAddr := netip.MustParseAddrPort(origin.Listener.Addr().String())
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, "egress", "test", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := guard.Config{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowPorts: []uint16{oAddr.Port()}}
	h := newHarnessWith(t, cfg, map[string][][]string{"origin.test": {{"127.0.0.1"}}, "gone.test": {{"127.0.0.2"}}},
		func(o *Options) { o.Audit = w }, oAddr.String())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(h.proxyURL)}}
	get := func(url, task string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set(telemetry.TaskIDHeader, task)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	connect := func(target, task string) int {
		conn, err := net.Dial("tcp", h.proxyLn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\n\r\n", target, target, telemetry.TaskIDHeader, task)
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	get("http://origin.test:"+strconv.Itoa(int(oAddr.Port()))+"/a", "task-n1")
	if code := connect("10.0.0.1:443", "task-n2"); code != http.StatusForbidden {
		t.Fatalf("private CONNECT: %d", code)
	}
	if code := connect("gone.test:443", "task-n3"); code != http.StatusBadGateway {
		t.Fatalf("failing CONNECT: %d", code)
	}
	conn, err := net.Dial("tcp", h.proxyLn)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET ftp://origin.test/x HTTP/1.1\r\nHost: origin.test\r\n%s: task-n4\r\n\r\n", telemetry.TaskIDHeader)
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("ftp: %v %v", resp, err)
	}
	conn.Close()
	_ = w.Close()

	evs, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4", len(evs))
	}
	want := []struct {
		activity, disposition int
		task, host, ip        string
	}{
		{audit.NetworkOpen, 1, "task-n1", "origin.test", "127.0.0.1"},
		{audit.NetworkRefuse, 2, "task-n2", "10.0.0.1", "10.0.0.1"},
		{audit.NetworkFail, 1, "task-n3", "gone.test", "127.0.0.2"},
		{audit.NetworkRefuse, 2, "task-n4", "", ""},
	}
	for i, e := range evs {
		w := want[i]
		if e.ClassUID != audit.ClassNetworkActivity || e.CategoryUID != audit.CategoryNetwork || e.ActivityID != w.activity ||
			e.DispositionID != w.disposition || e.Metadata.CorrelationUID != w.task || e.SrcEndpoint.IP != "127.0.0.1" {
			t.Errorf("event %d: %+v", i, e)
		}
		if w.host != "" && (e.DstEndpoint.Hostname != w.host || e.DstEndpoint.IP != w.ip) {
			t.Errorf("event %d destination: %+v", i, e.DstEndpoint)
		}
		if (w.activity == audit.NetworkOpen) != (e.StatusID == audit.StatusSuccess) {
			t.Errorf("event %d status %d", i, e.StatusID)
		}
	}
}
