// Package localstack runs AstralVessel on one machine without Docker: the
// vessel (one or several replicas), one sandboxd per agent, the egress
// and (unless a real model is configured) the scripted model, each as a
// process on loopback. `astralvessel up` and the load and replica tests
// (stress) both start their stacks with it. It starts the binaries; it
// never imports the servers.
package localstack

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// MaxSandboxRestarts is how often Wait starts one agent's sandbox again
// before it gives up on the stack.
const MaxSandboxRestarts = 5

// scriptedPlaceholder stands in for [egress] upstream_url in the vessel's
// copy of the deployment when the scripted model serves: the vessel only
// validates that field (the egress is what calls the model), and a loopback
// http URL would need allow_http_upstream in the operator's file.
const scriptedPlaceholder = "https://scripted-model.localhost/v1"

// Stack is a running local stack.
type Stack struct {
	Info
	StateDir string
	// Notes hears what Wait does about a process that died (os.Stderr if nil).
	Notes io.Writer

	cfg          Config
	procs        []*Proc
	ready        map[string]func(context.Context, *Proc) error // by process name, for Restart
	scratch      string                                        // parent of the agents' scratch folders
	ownedScratch bool                                          // scratch was made by Start, so Stop removes it
}

// plan is what Start works out before it starts anything.
type plan struct {
	cfg    Config
	logDir string
	keys   *keys
	d      *spec.Deployment
	// vesselDep is the deployment file the vessels read (the operator's,
	// or a derived copy holding the local app key).
	vesselDep  string
	appID      string
	vesselVars map[string]string
	// upstream and upstreamKey are the model the egress (or, with
	// DirectModel, the vessels) call.
	upstream, upstreamKey string
	// egressModelAddr is the egress's model listener (none with DirectModel).
	egressModelAddr string
}

// Start starts the stack: the model, the egress and every sandbox at once,
// then the vessels once those are ready; it returns when every vessel
// reports every agent ready, and writes stack.json. On error everything
// already started is stopped.
func Start(ctx context.Context, cfg Config) (st *Stack, err error) {
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, err
	}
	pl, err := newPlan(cfg)
	if err != nil {
		return nil, err
	}
	s := &Stack{StateDir: cfg.StateDir, cfg: cfg}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if err := s.makeScratch(); err != nil {
		return nil, err
	}
	readyCtx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()
	sandboxes, err := s.startBackends(readyCtx, pl)
	if err != nil {
		return nil, err
	}
	urls, grpcs, ops, err := s.startVessels(readyCtx, pl, sandboxes)
	if err != nil {
		return nil, err
	}
	s.Info = pl.info(urls, grpcs)
	s.Info.OperatorURL, s.Info.OperatorURLs, s.Info.OperatorTokenFile = ops[0], ops, pl.keys.operatorFile
	if err := s.writeInfo(); err != nil {
		return nil, err
	}
	return s, nil
}

// newPlan prepares the state dir, the keys and the deployment.
func newPlan(cfg Config) (*plan, error) {
	pl := &plan{cfg: cfg, logDir: filepath.Join(cfg.StateDir, "logs"), vesselVars: map[string]string{},
		upstream: cfg.UpstreamURL, upstreamKey: cfg.UpstreamKey}
	for _, d := range []string{cfg.StateDir, pl.logDir, filepath.Join(cfg.StateDir, "data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("localstack: create %s: %w", d, err)
		}
	}
	if old, err := ReadInfo(cfg.StateDir); err == nil && processAlive(old.PID) && old.PID != os.Getpid() {
		return nil, fmt.Errorf("localstack: a local stack (pid %d) already runs from %s at %s", old.PID, cfg.StateDir, old.URL)
	}
	var err error
	if pl.keys, err = loadKeys(cfg.StateDir); err != nil {
		return nil, err
	}
	pl.vesselVars["VESSEL_UPSTREAM_MODEL_URL"] = cfg.UpstreamURL
	if cfg.scripted() {
		pl.vesselVars["VESSEL_UPSTREAM_MODEL_URL"] = scriptedPlaceholder
	}
	// Point the deployment's first app at the local key: through its env
	// reference when it has one, else through a derived deployment file.
	pl.vesselDep = cfg.DeploymentFile
	if pl.appID, err = localApp(cfg.DeploymentFile, pl.keys.appDigest, pl.vesselVars, cfg.StateDir, &pl.vesselDep); err != nil {
		return nil, err
	}
	if pl.d, err = spec.LoadDeployment(pl.vesselDep, overlay(pl.vesselVars, spec.EnvWithFiles(cfg.Env))); err != nil {
		return nil, fmt.Errorf("localstack: load %s: %w", pl.vesselDep, err)
	}
	if len(pl.d.Agents) == 0 {
		return nil, fmt.Errorf("localstack: %s has no agents", cfg.DeploymentFile)
	}
	return pl, nil
}

// makeScratch sets up the parent of the agents' scratch folders. By
// default it lives under the temp dir: sandboxd runs calls as an
// unprivileged user, who must be able to reach it (home dirs are often
// closed to others).
func (s *Stack) makeScratch() error {
	if s.cfg.ScratchDir != "" {
		s.scratch = s.cfg.ScratchDir
		return nil
	}
	dir, err := os.MkdirTemp("", "astralvessel-scratch-")
	if err != nil {
		return fmt.Errorf("localstack: scratch dir: %w", err)
	}
	s.scratch, s.ownedScratch = dir, true
	if err := os.Chmod(dir, 0o711); err != nil {
		return fmt.Errorf("localstack: scratch dir: %w", err)
	}
	return nil
}

// Scratch is the agent's scratch folder (its sandbox's --scratch).
func (s *Stack) Scratch(agent string) string { return filepath.Join(s.scratch, agent) }

// service is one process to start and how to know it is ready.
type service struct {
	procSpec
	addr string
	// grpcAddr is a vessel's gRPC binding address, metricsAddr its
	// metrics listener (with the operator API).
	grpcAddr, metricsAddr string
	ready                 func(context.Context, *Proc) error
	// after is said on the progress log once it is ready.
	after string
}

// startBackends starts the scripted model, the egress and the sandboxes
// together and waits for all of them. It returns the vessels'
// --sandbox-url flags.
func (s *Stack) startBackends(ctx context.Context, pl *plan) ([]string, error) {
	var svcs []service
	if pl.cfg.scripted() {
		m, err := pl.modelService()
		if err != nil {
			return nil, err
		}
		svcs = append(svcs, m)
	}
	if !pl.cfg.DirectModel {
		eg, err := pl.egressService()
		if err != nil {
			return nil, err
		}
		svcs = append(svcs, eg)
	}
	var sandboxArgs []string
	for i, a := range pl.d.Agents {
		sb, err := pl.sandboxService(i, a, s.Scratch(a.ID))
		if err != nil {
			return nil, err
		}
		svcs = append(svcs, sb)
		sandboxArgs = append(sandboxArgs, "--sandbox-url", a.ID+"=http://"+sb.addr)
	}
	return sandboxArgs, s.startAll(ctx, svcs)
}

// startVessels starts the vessels and waits until each reports every
// agent ready; it returns their URLs, gRPC addresses and operator API
// URLs.
func (s *Stack) startVessels(ctx context.Context, pl *plan, sandboxArgs []string) ([]string, []string, []string, error) {
	agents := pl.agentIDs()
	var svcs []service
	var urls, grpcs, ops []string
	for i := range pl.cfg.Replicas {
		v, err := pl.vesselService(i, sandboxArgs, agents)
		if err != nil {
			return nil, nil, nil, err
		}
		svcs = append(svcs, v)
		urls = append(urls, "http://"+v.addr)
		grpcs = append(grpcs, v.grpcAddr)
		ops = append(ops, "http://"+v.metricsAddr)
	}
	if err := s.startAll(ctx, svcs); err != nil {
		return nil, nil, nil, err
	}
	// The vessel drains running turns on SIGTERM (as Compose's stop_grace_period allows).
	for _, p := range s.Vessels() {
		p.grace = time.Duration(pl.d.Vessel.StopGraceSecs()) * time.Second
	}
	return urls, grpcs, ops, nil
}

// startAll starts every service, then waits for all of them at once.
func (s *Stack) startAll(ctx context.Context, svcs []service) error {
	procs := make([]*Proc, len(svcs))
	for i, sv := range svcs {
		p, err := s.start(sv)
		if err != nil {
			return err
		}
		procs[i] = p
	}
	began := time.Now()
	// The first failure ends the other waits: the stack will not start.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(svcs))
	took := make([]time.Duration, len(svcs))
	var wg sync.WaitGroup
	for i, sv := range svcs {
		wg.Go(func() {
			if errs[i] = sv.ready(ctx, procs[i]); errs[i] != nil {
				cancel(errs[i])
			}
			took[i] = time.Since(began)
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	for i, sv := range svcs {
		if sv.after != "" {
			fmt.Fprintf(s.cfg.Log, "%s (ready in %d ms)\n", sv.after, took[i].Milliseconds())
		}
	}
	return nil
}

// start starts one service with its binary from Config.Bins.
func (s *Stack) start(sv service) (*Proc, error) {
	bin, ok := s.cfg.Bins[sv.bin]
	if !ok {
		return nil, fmt.Errorf("localstack: no path for binary %s", sv.bin)
	}
	ps := sv.procSpec
	ps.bin = bin
	pprof := ""
	if s.cfg.Pprof && (sv.bin == "vessel" || sv.bin == "sandboxd") {
		var err error
		if pprof, err = freeAddr(); err != nil {
			return nil, err
		}
		ps.env = append(ps.env, "VESSEL_PPROF_ADDR="+pprof)
	}
	p, err := startProc(ps)
	if err != nil {
		return nil, err
	}
	p.PprofAddr = pprof
	p.Addr = sv.addr
	s.procs = append(s.procs, p)
	if s.ready == nil {
		s.ready = map[string]func(context.Context, *Proc) error{}
	}
	s.ready[sv.name] = sv.ready
	return p, nil
}

// Restart starts p, which has ended (a test killed it), again as it was
// started: same address, data and flags. It returns once the new process
// is ready as at Start.
func (s *Stack) Restart(ctx context.Context, p *Proc) (*Proc, error) {
	if done, _ := p.Exited(); !done {
		return nil, fmt.Errorf("localstack: %s is still running", p.Name)
	}
	np, err := p.again()
	if err != nil {
		return nil, fmt.Errorf("localstack: starting %s again: %w", p.Name, err)
	}
	for i := range s.procs {
		if s.procs[i] == p {
			s.procs[i] = np
		}
	}
	if ready := s.ready[p.Name]; ready != nil {
		if err := ready(ctx, np); err != nil {
			return np, err
		}
	}
	return np, nil
}

// modelService is the scripted model.
func (pl *plan) modelService() (service, error) {
	addr, err := freeAddr()
	if err != nil {
		return service{}, err
	}
	args := []string{"--listen", addr}
	if pl.cfg.Script != "" {
		args = append(args, "--script", pl.cfg.Script)
	}
	pl.upstream, pl.upstreamKey = "http://"+addr+"/v1", "scripted"
	url := pl.upstream
	return service{
		procSpec: procSpec{name: "scripted-model", bin: "scripted-model", args: args, env: minimalEnv(nil),
			cpus: pl.cfg.ModelCPUs, logDir: pl.logDir},
		addr:  addr,
		ready: func(ctx context.Context, p *Proc) error { return waitHTTP(ctx, p, url+"/models", "", nil) },
		after: "scripted model on " + url,
	}, nil
}

// egressService is the egress: the only holder of the model key. It sets
// the model and proxy addresses the vessels use.
func (pl *plan) egressService() (service, error) {
	modelAddr, err := freeAddr()
	if err != nil {
		return service{}, err
	}
	proxyAddr, err := freeAddr()
	if err != nil {
		return service{}, err
	}
	vars := map[string]string{
		"VESSEL_UPSTREAM_MODEL_URL": pl.upstream,
		"VESSEL_UPSTREAM_MODEL_KEY": pl.upstreamKey,
		"VESSEL_EGRESS_TOKEN":       pl.keys.egress,
	}
	if strings.HasPrefix(pl.upstream, "http://") {
		vars["VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM"] = "1"
	}
	// Every web proxy client authenticates and gets its names policy, as
	// in a Compose deployment (compose.WebClientsFile).
	clients, err := spec.WebClients(pl.d)
	if err != nil {
		return service{}, fmt.Errorf("localstack: %w", err)
	}
	clientsFile := filepath.Join(pl.cfg.StateDir, compose.WebClientsFile)
	if err := os.WriteFile(clientsFile, clients, 0o600); err != nil {
		return service{}, fmt.Errorf("localstack: %w", err)
	}
	vars["VESSEL_EGRESS_WEB_CLIENTS_FILE"] = clientsFile
	if pl.d.Budgets.Any() {
		vars["VESSEL_EGRESS_BUDGETS"] = pl.d.Budgets.Encode()
	}
	if err := pl.egressRoutes(vars); err != nil {
		return service{}, err
	}
	maps.Copy(vars, tracingVars(pl.d, "egress", ""))
	pl.vesselVars["VESSEL_EGRESS_PROXY"] = "http://" + proxyAddr
	pl.egressModelAddr = modelAddr
	return service{
		procSpec: procSpec{name: "egress", bin: "egress", args: []string{"--model-listen", modelAddr, "--proxy-listen", proxyAddr},
			env: processEnv(os.Environ(), vars, "VESSEL_MODEL_KEY", "VESSEL_EGRESS_TOKEN_FILE", "VESSEL_EGRESS_BUDGETS"), logDir: pl.logDir},
		addr:  modelAddr,
		ready: func(ctx context.Context, p *Proc) error { return waitTCP(ctx, p, modelAddr) },
		after: fmt.Sprintf("egress on %s (proxy %s)", modelAddr, proxyAddr),
	}, nil
}

// sandboxService is agent a's sandboxd (the a-th agent of the deployment).
func (pl *plan) sandboxService(i int, a spec.Agent, scratch string) (service, error) {
	addr, err := freeAddr()
	if err != nil {
		return service{}, err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return service{}, err
	}
	args, err := sandboxArgs(pl.d, i, a, scratch)
	if err != nil {
		return service{}, err
	}
	args = append(args, "--listen", addr, "--http-listen", httpAddr)
	token := spec.DeriveToken(pl.keys.master, "sandbox/"+a.ID)
	sbVars := tracingVars(pl.d, "sandboxd", a.ID)
	sbVars["VESSEL_SANDBOX_TOKEN"] = token
	return service{
		procSpec: procSpec{name: "sandbox-" + a.ID, bin: "sandboxd", args: args,
			env: minimalEnv(sbVars), cpus: pl.cfg.ServerCPUs, logDir: pl.logDir},
		addr: addr,
		ready: func(ctx context.Context, p *Proc) error {
			return waitHTTP(ctx, p, "http://"+httpAddr+"/status", token, nil)
		},
		after: fmt.Sprintf("sandbox %s on %s (HTTP/JSON %s)", a.ID, addr, httpAddr),
	}, nil
}

// sandboxArgs are agent a's sandboxd flags but the addresses.
func sandboxArgs(d *spec.Deployment, i int, a spec.Agent, scratch string) ([]string, error) {
	fp, err := spec.Fingerprint(d, a.ID)
	if err != nil {
		return nil, fmt.Errorf("localstack: fingerprint of %s: %w", a.ID, err)
	}
	// The same block Compose gives this agent ([call_uids], or derived
	// from the project): uids are global to the host, so each sandbox's
	// turns need their own, and sandboxd reserves it host-wide.
	uids := a.Sandbox.UIDs
	if uids.Count == 0 {
		return nil, fmt.Errorf("localstack: agent %s (index %d): no call uid range resolved", a.ID, i)
	}
	args := []string{"--agent", a.ID, "--package", a.PackageDir, "--tools", a.Manifest.Toolset().Encode(), "--scratch", scratch,
		"--fingerprint", fp, "--uid-range", uids.String(),
		// No container here: the agent's memory bounds each process of a call.
		"--call-memory", strconv.FormatInt(int64(a.Sandbox.Memory), 10),
		// A gvisor agent's sandboxd refuses to start here (no runsc), with
		// the reason, rather than run in a tier it was not given.
		"--tier", a.Sandbox.Tier()}
	for _, m := range a.Sandbox.Mounts {
		args = append(args, "--mount", d.ResolvePath(m.Source))
	}
	for _, f := range []struct {
		flag string
		size spec.ByteSize
	}{{"--scratch-size", a.Sandbox.Scratch}, {"--turn-disk", a.Sandbox.TurnDisk}, {"--user-disk", a.Sandbox.UserDisk}} {
		if f.size > 0 {
			args = append(args, f.flag, strconv.FormatInt(int64(f.size), 10))
		}
	}
	return args, nil
}

// vesselService is the i-th vessel. It holds the egress token as its
// model key, never the real one (with DirectModel, the model's own key).
func (pl *plan) vesselService(i int, sandboxArgs, agents []string) (service, error) {
	name, addr, data := "vessel", pl.cfg.Listen, filepath.Join(pl.cfg.StateDir, "data")
	if _, port, _ := net.SplitHostPort(addr); i > 0 || port == "0" {
		var err error
		if addr, err = freeAddr(); err != nil {
			return service{}, err
		}
	}
	grpcAddr := pl.cfg.GRPCListen
	if i > 0 || grpcAddr == "" {
		var err error
		if grpcAddr, err = freeAddr(); err != nil {
			return service{}, err
		}
	}
	if i > 0 {
		name, data = fmt.Sprintf("vessel-%d", i), filepath.Join(pl.cfg.StateDir, fmt.Sprintf("data-%d", i))
		if err := os.MkdirAll(data, 0o700); err != nil {
			return service{}, fmt.Errorf("localstack: create %s: %w", data, err)
		}
	}
	// The metrics listener on loopback serves the operator API too
	// (`astralvessel turns` finds both in stack.json).
	metricsAddr, err := freeAddr()
	if err != nil {
		return service{}, err
	}
	vars := map[string]string{
		"VESSEL_SANDBOX_MASTER_TOKEN":  pl.keys.master,
		"VESSEL_CARD_SIGNING_KEY_FILE": pl.keys.cardKeyFile,
		"VESSEL_OPERATOR_TOKEN_FILE":   pl.keys.operatorFile,
		"VESSEL_DATA_DIR":              data,
	}
	for k, v := range pl.vesselVars {
		vars[k] = v
	}
	maps.Copy(vars, tracingVars(pl.d, "vessel", ""))
	if pl.cfg.DirectModel {
		vars["VESSEL_MODEL_BASE_URL"], vars["VESSEL_MODEL_KEY"] = pl.upstream, pl.upstreamKey
	} else {
		vars["VESSEL_MODEL_BASE_URL"], vars["VESSEL_MODEL_KEY"] = egressModelURL(pl), pl.keys.egress
	}
	drop := []string{"VESSEL_UPSTREAM_MODEL_KEY", "VESSEL_SANDBOX_MASTER_TOKEN_FILE", "VESSEL_MODEL_KEY_FILE", "VESSEL_OPERATOR_TOKEN"}
	// The routes' keys are the egress's alone.
	drop = append(drop, slices.Collect(maps.Values(pl.d.RouteKeyVars()))...)
	env := processEnv(operatorEnviron(pl.cfg.Env, pl.d), vars, drop...)
	url := "http://" + addr
	args := append(vesselArgs(pl.vesselDep, addr, grpcAddr, sandboxArgs), "--metrics-listen", metricsAddr)
	return service{
		procSpec: procSpec{name: name, bin: "vessel", args: args, env: env,
			cpus: pl.cfg.ServerCPUs, logDir: pl.logDir},
		addr: addr, grpcAddr: grpcAddr, metricsAddr: metricsAddr,
		ready: func(ctx context.Context, p *Proc) error {
			return waitHTTP(ctx, p, url+"/health", "", func(b []byte) error { return healthReady(b, agents) })
		},
		after: name + " on " + url,
	}, nil
}

// egressModelURL is the egress's model endpoint, as the vessels call it.
func egressModelURL(pl *plan) string { return "http://" + pl.egressModelAddr + "/v1" }

// vesselArgs are the vessel's flags. Its cards must advertise where this
// stack serves, not the deployment's front address, hence --public-url
// (the vessel gives the gRPC interface that URL's host and grpcListen's port).
func vesselArgs(deployment, listen, grpcListen string, sandboxArgs []string) []string {
	return append([]string{"--deployment", deployment, "--listen", listen, "--grpc-listen", grpcListen,
		"--public-url", "http://" + listen}, sandboxArgs...)
}

func (pl *plan) agentIDs() []string {
	ids := make([]string, len(pl.d.Agents))
	for i, a := range pl.d.Agents {
		ids[i] = a.ID
	}
	return ids
}

// info is the stack.json of a stack serving on urls (gRPC on grpcs).
func (pl *plan) info(urls, grpcs []string) Info {
	model := "scripted"
	if !pl.cfg.scripted() {
		model = pl.cfg.UpstreamURL
	}
	return Info{URL: urls[0], URLs: urls, GRPCAddress: grpcs[0], GRPCAddresses: grpcs, Agents: pl.agentIDs(), AppID: pl.appID,
		AppKeyFile: filepath.Join(pl.cfg.StateDir, "app.key"), User: LocalUser, PID: os.Getpid(),
		Started: time.Now().UTC(), Model: model, Logs: pl.logDir, Deployment: pl.cfg.DeploymentFile}
}

// Vessels are the vessel processes, the first one first.
func (s *Stack) Vessels() []*Proc {
	return s.named(func(n string) bool { return n == "vessel" || strings.HasPrefix(n, "vessel-") })
}

// Sandbox is agent's sandboxd, or nil.
func (s *Stack) Sandbox(agent string) *Proc {
	return first(s.named(func(n string) bool { return n == "sandbox-"+agent }))
}

// ModelProc is the scripted model, or nil when a real one serves.
func (s *Stack) ModelProc() *Proc {
	return first(s.named(func(n string) bool { return n == "scripted-model" }))
}

func (s *Stack) named(match func(string) bool) []*Proc {
	var out []*Proc
	for _, p := range s.procs {
		if match(p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func first(ps []*Proc) *Proc {
	if len(ps) == 0 {
		return nil
	}
	return ps[0]
}

// Wait blocks until ctx ends (nil) or a process the stack cannot do
// without exits (an error that says so, with its last log lines). A
// sandbox that exits is started again, up to MaxSandboxRestarts times: only
// its agent is out of service meanwhile (the vessel sees it at once and
// serves it again within a second of its return), and the new sandboxd
// kills whatever the old one's calls left running.
func (s *Stack) Wait(ctx context.Context) error {
	notes := s.Notes
	if notes == nil {
		notes = os.Stderr
	}
	restarts := map[string]int{}
	for {
		p := s.waitExit(ctx)
		if p == nil {
			return nil
		}
		if !strings.HasPrefix(p.Name, "sandbox-") {
			return fmt.Errorf("localstack: %w, and the stack cannot serve without it, so everything stops; last log lines:\n%s",
				p.exitError(), p.Tail(2000))
		}
		if restarts[p.Name] >= MaxSandboxRestarts {
			return fmt.Errorf("localstack: %w again after %d restarts, so everything stops; last log lines:\n%s",
				p.exitError(), restarts[p.Name], p.Tail(2000))
		}
		restarts[p.Name]++
		fmt.Fprintf(notes, "localstack: %v; starting it again (%d of %d), the other agents keep running; its log: %s\n",
			p.exitError(), restarts[p.Name], MaxSandboxRestarts, p.log)
		np, err := p.again()
		if err != nil {
			return fmt.Errorf("localstack: starting %s again: %w", p.Name, err)
		}
		for i := range s.procs {
			if s.procs[i] == p {
				s.procs[i] = np
			}
		}
		if err := s.writeInfo(); err != nil {
			fmt.Fprintf(notes, "%v\n", err)
		}
	}
}

// waitExit returns the first process of the stack to exit, or nil once
// ctx ends.
func (s *Stack) waitExit(ctx context.Context) *Proc {
	exited := make(chan *Proc, len(s.procs))
	stop := make(chan struct{})
	defer close(stop)
	for _, p := range s.procs {
		go func() {
			select {
			case <-p.done:
				exited <- p
			case <-stop:
			}
		}()
	}
	select {
	case p := <-exited:
		return p
	case <-ctx.Done():
		return nil
	}
}

// Stop stops every process (vessels first), removes stack.json and the
// scratch folders Start made. It is safe to call more than once.
func (s *Stack) Stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		grace := s.procs[i].grace
		if grace <= 0 {
			grace = 10 * time.Second
		}
		s.procs[i].stop(grace)
	}
	if s.Info.PID == os.Getpid() {
		_ = os.Remove(filepath.Join(s.StateDir, infoFile))
	}
	if s.ownedScratch {
		_ = os.RemoveAll(s.scratch)
	}
}

// freeAddr asks the kernel for an unused loopback address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("localstack: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// tracingVars is the tracing environment of one process of the stack:
// the [telemetry] table's OTEL_* variables, then the operator's own OTEL_*
// variables that are set and not empty (which win, as they would in
// Compose's environment), and the process's service name in any case;
// empty when neither turns tracing on. sandboxd gets them explicitly: its
// environment is otherwise minimal.
func tracingVars(d *spec.Deployment, service, agent string) map[string]string {
	vars := d.Telemetry.TracingEnv(service)
	if vars == nil {
		vars = map[string]string{}
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" && strings.HasPrefix(k, "OTEL_") {
			vars[k] = v
		}
	}
	if len(vars) == 0 {
		return vars
	}
	vars["OTEL_SERVICE_NAME"] = service
	if agent != "" {
		vars["OTEL_RESOURCE_ATTRIBUTES"] = "vessel.agent=" + agent
	}
	return vars
}
