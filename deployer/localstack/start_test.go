package localstack

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// binPath finds a system program the tests run as a stand-in service.
func binPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: %v", name, err)
	}
	return p
}

// Issue 22 (4): the services of one stage start together and are waited on
// together; one that dies fails the stage with its reason and ends the
// others' waits at once (not at the ready timeout).
func TestStartAllStartsTogetherAndReportsADeath(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	s := &Stack{StateDir: dir, cfg: Config{Bins: map[string]string{"sleep": binPath(t, "sleep"), "false": binPath(t, "false")}, Log: &log}}
	defer s.Stop()
	// A port nobody listens on, for the one that dies.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	// It would wait until its context ends: the other's death must end it.
	never := func(ctx context.Context, p *Proc) error { return waitTCP(ctx, p, closed) }
	svcs := []service{
		{procSpec: procSpec{name: "waits", bin: "sleep", args: []string{"1000"}, env: os.Environ(), logDir: dir}, ready: never, after: "waits is up"},
		{procSpec: procSpec{name: "dies", bin: "false", env: os.Environ(), logDir: dir}, addr: closed,
			ready: func(ctx context.Context, p *Proc) error { return waitTCP(ctx, p, closed) }},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound only
	defer cancel()
	err = s.startAll(ctx, svcs)
	if err == nil || !strings.Contains(err.Error(), "dies exited") || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("startAll: %v", err)
	}
	if len(s.procs) != 2 || s.procs[1].Addr != closed {
		t.Fatalf("procs %+v", s.procs)
	}
	if exited, _ := s.procs[0].Exited(); exited {
		t.Fatal("the service that was fine stopped")
	}
	if strings.Contains(log.String(), "waits is up") {
		t.Fatal("a failed stage reported its services ready")
	}
	// A missing binary is said before anything starts.
	s2 := &Stack{StateDir: dir, cfg: Config{Bins: map[string]string{}}}
	if err := s2.startAll(ctx, svcs[:1]); err == nil || !strings.Contains(err.Error(), "no path for binary sleep") {
		t.Fatalf("missing binary: %v", err)
	}
}

// Listen with port 0 takes a free port; later replicas always do, each with
// its own name and data folder.
func TestVesselServiceAddresses(t *testing.T) {
	dir := t.TempDir()
	pl := &plan{cfg: Config{Listen: "127.0.0.1:0", StateDir: dir, Env: os.LookupEnv}, keys: &keys{}, vesselVars: map[string]string{},
		d: &spec.Deployment{}, logDir: dir, egressModelAddr: "127.0.0.1:9"}
	first, err := pl.vesselService(0, nil, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := pl.vesselService(1, nil, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(first.addr, ":0") || first.addr == second.addr || first.name != "vessel" || second.name != "vessel-1" {
		t.Fatalf("vessels: %s %s, %s %s", first.name, first.addr, second.name, second.addr)
	}
	if !slicesHave(second.env, "VESSEL_DATA_DIR="+dir+"/data-1") || !slicesHave(first.env, "VESSEL_DATA_DIR="+dir+"/data") {
		t.Fatal("the replicas share a data folder")
	}
	pl.cfg.DirectModel, pl.upstream, pl.upstreamKey = true, "http://127.0.0.1:7/v1", "k"
	direct, err := pl.vesselService(0, nil, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if !slicesHave(direct.env, "VESSEL_MODEL_BASE_URL=http://127.0.0.1:7/v1") || !slicesHave(direct.env, "VESSEL_MODEL_KEY=k") {
		t.Fatal("DirectModel: the vessel does not call the model itself")
	}
}

func slicesHave(env []string, kv string) bool { return slices.Contains(env, kv) }

// The egress of the local stack serves only the deployment's clients, each
// with its [agents.web] policy: the clients file it is handed is the one
// deploy writes.
func TestEgressGetsTheClientsFile(t *testing.T) {
	dir := t.TempDir()
	d := &spec.Deployment{Search: spec.Search{Provider: "duckduckgo"},
		Agents: []spec.Agent{{ID: "a", Web: &spec.Web{Deny: []string{"ads.example.org"}}}}}
	pl := &plan{cfg: Config{StateDir: dir}, keys: &keys{egress: "t"}, vesselVars: map[string]string{}, d: d, logDir: dir,
		upstream: "http://127.0.0.1:7/v1"}
	eg, err := pl.egressService()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "egress-clients.json")
	if !slicesHave(eg.env, "VESSEL_EGRESS_WEB_CLIENTS_FILE="+path) {
		t.Fatalf("egress env lacks the clients file: %v", eg.env)
	}
	got, err := os.ReadFile(path)
	want, _ := spec.WebClients(d)
	if err != nil || !bytes.Equal(got, want) || !bytes.Contains(got, []byte(`"agent.a"`)) {
		t.Fatalf("clients file %s (%v), want %s", got, err, want)
	}
}

// TestEgressGetsTheBudgets: `up` hands [budgets] to the egress as
// VESSEL_EGRESS_BUDGETS; without [budgets] none is set, even when the
// operator's shell has one.
func TestEgressGetsTheBudgets(t *testing.T) {
	t.Setenv("VESSEL_EGRESS_BUDGETS", `{"turn_tokens":1}`)
	dir := t.TempDir()
	for _, b := range []spec.Budgets{{}, {OwnerDailyTokens: 700, Agents: map[string]int64{"a": 3}}} {
		pl := &plan{cfg: Config{Listen: "127.0.0.1:0", StateDir: dir, Env: os.LookupEnv}, keys: &keys{}, vesselVars: map[string]string{},
			d: &spec.Deployment{Budgets: b}, logDir: dir, upstream: "http://127.0.0.1:7/v1"}
		eg, err := pl.egressService()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range eg.env {
			if v, ok := strings.CutPrefix(kv, "VESSEL_EGRESS_BUDGETS="); ok {
				got = append(got, v)
			}
		}
		switch {
		case !b.Any() && len(got) != 0:
			t.Errorf("no [budgets], egress given %v", got)
		case b.Any() && (len(got) != 1 || got[0] != b.Encode()):
			t.Errorf("budgets %+v, egress given %v", b, got)
		}
	}
}

// TestVesselOperatorAPI: the local stack generates the operator token
// (STATE/operator.token, 0600, kept across starts) and gives each vessel
// the file and a loopback metrics listener of its own, where the operator
// API is served; an operator's VESSEL_OPERATOR_TOKEN does not reach it.
func TestVesselOperatorAPI(t *testing.T) {
	dir := t.TempDir()
	k, err := loadKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(k.operatorFile)
	if err != nil || st.Mode().Perm() != 0o600 || k.operatorFile != filepath.Join(dir, "operator.token") {
		t.Fatalf("operator token %s: %v %v", k.operatorFile, err, st)
	}
	tok, _ := os.ReadFile(k.operatorFile)
	if k2, err := loadKeys(dir); err != nil {
		t.Fatal(err)
	} else if again, _ := os.ReadFile(k2.operatorFile); len(bytes.TrimSpace(tok)) < 32 || !bytes.Equal(tok, again) {
		t.Fatalf("operator token %q, then %q", tok, again)
	}
	t.Setenv("VESSEL_OPERATOR_TOKEN", "from-the-shell-0123456789abcdef0123456789")
	pl := &plan{cfg: Config{Listen: "127.0.0.1:0", StateDir: dir, Env: os.LookupEnv}, keys: k, vesselVars: map[string]string{},
		d: &spec.Deployment{}, logDir: dir, egressModelAddr: "127.0.0.1:9"}
	var seen []string
	for i := range 2 {
		v, err := pl.vesselService(i, nil, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if !slicesHave(v.env, "VESSEL_OPERATOR_TOKEN_FILE="+k.operatorFile) || slices.ContainsFunc(v.env, func(kv string) bool {
			return strings.HasPrefix(kv, "VESSEL_OPERATOR_TOKEN=")
		}) {
			t.Fatalf("vessel %d env: %v", i, v.env)
		}
		at := slices.Index(v.args, "--metrics-listen")
		if at < 0 || at+1 >= len(v.args) || v.args[at+1] != v.metricsAddr || !strings.HasPrefix(v.metricsAddr, "127.0.0.1:") || slices.Contains(seen, v.metricsAddr) {
			t.Fatalf("vessel %d: args %v, metrics %s", i, v.args, v.metricsAddr)
		}
		seen = append(seen, v.metricsAddr)
	}
}
