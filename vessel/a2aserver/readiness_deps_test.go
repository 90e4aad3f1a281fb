package a2aserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/store"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// fakeEgress is an HTTP server on loopback answering /health, which can be
// stopped (nothing listens: connection refused) and started again on the
// same address, as the egress container would go down and come back.
type fakeEgress struct {
	addr string
	srv  *http.Server
}

func startEgress(t *testing.T, addr string) *fakeEgress {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	e := &fakeEgress{addr: ln.Addr().String(), srv: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	})}}
	go func() { _ = e.srv.Serve(ln) }()
	t.Cleanup(func() { _ = e.srv.Close() })
	return e
}

// egressCheck is the vessel's egress health check (cmd/vessel): GET
// /health, critical.
func egressCheck(addr string) a2aserver.HealthCheck {
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	return a2aserver.HealthCheck{Name: "egress", Critical: true, Check: func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
		resp, err := c.Do(req)
		if err != nil {
			return fmt.Errorf("egress health: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("egress health: HTTP %d", resp.StatusCode)
		}
		return nil
	}}
}

// sendRPC posts one JSON-RPC SendMessage to agent and returns the status
// and body.
func (h *harness) sendRPC(agent, text string) (int, string) {
	body := `{"jsonrpc":"2.0","id":"r","method":"SendMessage","params":{"message":{"messageId":"m-` + text +
		`","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}}}`
	code, _, b := h.rawPost("/agents/"+agent, body, map[string]string{"Authorization": "Bearer " + h.keyApp1, "X-Vessel-User": "alice"})
	return code, string(b)
}

// Issue 34 (2): with the egress down, every agent is out of service after
// one health check (no readiness round needed): /health and the metrics say
// why, a new turn gets 503 with the reason, and tasks already stored can
// still be read. Once the egress answers again the agents come back without
// a regular readiness round.
func TestEgressDownTakesAgentsOutAndBack(t *testing.T) {
	egress := startEgress(t, "127.0.0.1:0")
	reg := prometheus.NewRegistry()
	h := newHarnessConfig(t, func(c *a2aserver.Config) {
		c.HealthChecks = []a2aserver.HealthCheck{egressCheck(egress.addr)}
		c.Metrics = a2aserver.NewMetrics(reg)
		c.UnreadyInterval = 20 * time.Millisecond // only the quick recheck can bring them back
	})
	ctx := context.Background()
	res, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hello")})
	if err != nil {
		t.Fatal(err)
	}
	done := res.(*a2a.Task)

	_ = egress.srv.Close()
	h.srv.CheckHealth(ctx)
	for _, id := range []string{h.agentID, h.otherID} {
		if ok, why := h.srv.Ready(id); ok || !strings.HasPrefix(why, "the egress is failing: ") {
			t.Fatalf("%s after one health check with the egress down: ready %v (%q)", id, ok, why)
		}
	}
	health := string(httpGet(t, h.srv, "/health"))
	if !strings.Contains(health, `"`+h.agentID+`":false`) || !strings.Contains(health, "the egress is failing") {
		t.Errorf("/health with the egress down: %s", health)
	}
	if v := gauge(t, reg, "vessel_agent_unavailable", h.agentID, "egress"); v != 1 {
		t.Errorf("vessel_agent_unavailable{cause=egress} = %v", v)
	}
	if v := gauge(t, reg, "vessel_agent_ready", h.agentID, ""); v != 0 {
		t.Errorf("vessel_agent_ready = %v while out of service", v)
	}
	if code, body := h.sendRPC(h.agentID, "refused"); code != http.StatusServiceUnavailable || !strings.Contains(body, "the egress is failing") {
		t.Errorf("a new turn with the egress down: %d %s", code, body)
	}
	h.readsStillServed(done.ID, "with the egress down")

	startEgress(t, egress.addr)
	h.srv.CheckHealth(ctx)
	waitFor(t, "the agents back in service", func() bool {
		a, _ := h.srv.Ready(h.agentID)
		b, _ := h.srv.Ready(h.otherID)
		return a && b
	})
	if v := gauge(t, reg, "vessel_agent_ready", h.agentID, ""); v != 1 {
		t.Errorf("vessel_agent_ready = %v once back", v)
	}
	if v := gauge(t, reg, "vessel_agent_unavailable", h.agentID, "egress"); v != 0 {
		t.Errorf("vessel_agent_unavailable{cause=egress} = %v once back", v)
	}
	if code, body := h.sendRPC(h.agentID, "again"); code != http.StatusOK || !strings.Contains(body, "TASK_STATE_COMPLETED") {
		t.Errorf("a turn once the egress is back: %d %s", code, body)
	}
}

// Issue 34 (2): with the task store's disk full (a real one: a small tmpfs,
// filled), the store's check fails, the agents refuse new turns with the
// reason, and GetTask and ListTasks still answer from the stored tasks.
func TestStoreWriteFailureKeepsReads(t *testing.T) {
	dir := t.TempDir()
	err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m")
	testenv.Require(t, err == nil, fmt.Sprintf("mounting a tmpfs needs root: %v", err))
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	h := newHarnessStore(t, "sqlite://"+filepath.Join(dir, "tasks.sqlite"), func(c *a2aserver.Config) {
		p := c.Store.(store.Pinger)
		c.HealthChecks = []a2aserver.HealthCheck{{Name: "task store", Critical: true, Check: p.Ping}}
	})
	ctx := context.Background()
	res, err := h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("hello")})
	if err != nil {
		t.Fatal(err)
	}
	done := res.(*a2a.Task)
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for chunk := make([]byte, 64<<10); ; {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()
	// A turn on the full disk: its writes fail (the SDK keeps its end to
	// write later), which the store's check then reports.
	_, _ = h.client(h.agentID).SendMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("on a full disk")})
	waitFor(t, "the task store's check to fail", func() bool {
		h.srv.CheckHealth(ctx)
		ok, _ := h.srv.Ready(h.agentID)
		return !ok
	})
	if _, why := h.srv.Ready(h.agentID); !strings.HasPrefix(why, "the task store is failing: ") {
		t.Fatalf("out of service for %q", why)
	}
	if code, body := h.sendRPC(h.agentID, "refused"); code != http.StatusServiceUnavailable || !strings.Contains(body, "the task store is failing") {
		t.Errorf("a new turn on the full disk: %d %s", code, body)
	}
	h.readsStillServed(done.ID, "on the full disk")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent back once there is room", func() bool {
		h.srv.CheckHealth(ctx)
		h.srv.CheckReadiness(ctx)
		ok, _ := h.srv.Ready(h.agentID)
		return ok
	})
}

// gauge reads one series of a gauge vector from reg (cause "" for a series
// labelled by agent only).
func gauge(t *testing.T, reg *prometheus.Registry, name, agent, cause string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["agent"] == agent && labels["cause"] == cause {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no series %s{agent=%q, cause=%q}", name, agent, cause)
	return 0
}

// readsStillServed checks that GetTask answers the finished task id and
// ListTasks lists tasks while the agent is out of service (when).
func (h *harness) readsStillServed(id a2a.TaskID, when string) {
	h.t.Helper()
	got, err := h.client(h.agentID).GetTask(as(h.keyApp1, "alice"), &a2a.GetTaskRequest{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		h.t.Fatalf("GetTask %s: %v %v", when, got, err)
	}
	if list, err := h.client(h.agentID).ListTasks(as(h.keyApp1, "alice"), &a2a.ListTasksRequest{}); err != nil || len(list.Tasks) == 0 {
		h.t.Fatalf("ListTasks %s: %v %v", when, list, err)
	}
}
