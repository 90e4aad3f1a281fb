// Package localstack runs AstralVessel on one machine without Docker: the
// vessel, one sandboxd per agent, the egress and (unless a real model is
// configured) the scripted model, each as a process on loopback. It starts
// the binaries; it never imports the servers.
package localstack

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/compose"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
	"github.com/astraldeep/astralvessel-go/vessel/client/cardsig"
)

// Config says what to start.
type Config struct {
	// DeploymentFile is the deployment.toml to serve.
	DeploymentFile string
	// Env is the operator's environment (process env, and .env beside the
	// deployment); nil means os.LookupEnv.
	Env spec.Env
	// Bins maps each binary name (see Binaries) to its path.
	Bins map[string]string
	// StateDir holds keys, tokens, logs, the task store and stack.json.
	StateDir string
	// Listen is the vessel's address; default 127.0.0.1:8700.
	Listen string
	// GRPCListen is the vessel's gRPC binding address; default Listen's
	// host with Listen's port + 1 (127.0.0.1:8701).
	GRPCListen string
	// UpstreamURL and UpstreamKey name a real OpenAI-compatible model. When
	// either is empty the scripted model is started instead.
	UpstreamURL string
	UpstreamKey string
	// Script is the scripted model's script file (optional).
	Script string
	// ReadyTimeout bounds the wait for every service; default 60s.
	ReadyTimeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Info is what a running stack records in StateDir/stack.json so that
// `astralvessel ask` and tests can find it.
type Info struct {
	URL string `json:"url"`
	// GRPCAddress is the gRPC binding (host:port; a request names its
	// agent in its tenant field).
	GRPCAddress string    `json:"grpc_address,omitempty"`
	Agents      []string  `json:"agents"`
	AppID       string    `json:"app_id"`
	AppKeyFile  string    `json:"app_key_file"`
	User        string    `json:"user"`
	PID         int       `json:"pid"`
	Started     time.Time `json:"started"`
	Model       string    `json:"model"` // "scripted" or the upstream URL
	Logs        string    `json:"logs"`
	Deployment  string    `json:"deployment"`
	// Processes are the stack's processes, each with its pid and log.
	Processes []Process `json:"processes"`
}

// AppKey reads the stack's app key.
func (i *Info) AppKey() (string, error) {
	b, err := os.ReadFile(i.AppKeyFile)
	if err != nil {
		return "", fmt.Errorf("localstack: read app key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// LocalUser is the X-Vessel-User the local stack's clients send by default.
const LocalUser = "local"

// infoFile is the name of the stack description in the state dir.
const infoFile = "stack.json"

// DefaultStateDir is $ASTRALVESSEL_STATE, else $XDG_STATE_HOME/astralvessel,
// else ~/.local/state/astralvessel.
func DefaultStateDir() string {
	if d := os.Getenv("ASTRALVESSEL_STATE"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "astralvessel")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "astralvessel")
	}
	return filepath.Join(os.TempDir(), "astralvessel-state")
}

// ReadInfo reads the stack description from stateDir. It fails with
// fs.ErrNotExist (wrapped) when no stack was started there, and says so when
// the recorded process is gone.
func ReadInfo(stateDir string) (*Info, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, infoFile))
	if err != nil {
		return nil, fmt.Errorf("localstack: no running local stack in %s (start one with `astralvessel up`): %w", stateDir, err)
	}
	var i Info
	if err := json.Unmarshal(b, &i); err != nil {
		return nil, fmt.Errorf("localstack: parse %s: %w", filepath.Join(stateDir, infoFile), err)
	}
	return &i, nil
}

// Process is one process of a running stack, as stack.json lists it.
type Process struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	Log  string `json:"log"`
}

// MaxSandboxRestarts is how often Wait starts one agent's sandbox again
// before it gives up on the stack.
const MaxSandboxRestarts = 5

// Stack is a running local stack.
type Stack struct {
	Info
	StateDir string
	procs    []*proc
	scratch  string
	// Notes hears what Wait does about a process that died (os.Stderr if nil).
	Notes io.Writer
}

// secret returns the secret in stateDir/name, creating it (0600) on first use
// so keys stay the same across restarts.
func secret(stateDir, name, prefix string) (string, error) {
	p := filepath.Join(stateDir, name)
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("localstack: read %s: %w", p, err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("localstack: random: %w", err)
	}
	s := prefix + hex.EncodeToString(raw)
	if err := os.WriteFile(p, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("localstack: write %s: %w", p, err)
	}
	return s, nil
}

// cardKeyFile returns the path of the stack's card-signing key set
// (STATE/card-signing.jwks, 0600), created on first use and checked on
// every start; only the vessel is given it.
func cardKeyFile(stateDir string) (string, error) {
	p := filepath.Join(stateDir, compose.CardKeyFile)
	b, err := os.ReadFile(p)
	if err == nil {
		if _, err := cardsig.ParseKeys(b); err != nil {
			return "", fmt.Errorf("localstack: %s: %w; fix it or delete it to generate a new key", p, err)
		}
		return p, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("localstack: read %s: %w", p, err)
	}
	k, err := cardsig.Generate()
	if err != nil {
		return "", fmt.Errorf("localstack: %w", err)
	}
	if err := os.WriteFile(p, k, 0o600); err != nil {
		return "", fmt.Errorf("localstack: write %s: %w", p, err)
	}
	return p, nil
}

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("localstack: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// overlay is an Env whose own values win over base.
func overlay(over map[string]string, base spec.Env) spec.Env {
	return func(name string) (string, bool) {
		if v, ok := over[name]; ok {
			return v, true
		}
		return base(name)
	}
}

// processEnv builds a child environment: base entries first, overrides last
// (later entries win), without the names in drop.
func processEnv(base []string, over map[string]string, drop ...string) []string {
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, overridden := over[k]; overridden || contains(drop, k) {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range over {
		out = append(out, k+"="+v)
	}
	return out
}

func contains(l []string, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// minimalEnv is the environment of processes that must hold no secrets of
// the operator (sandboxd, scripted model).
func minimalEnv(over map[string]string) []string {
	base := []string{"PATH=" + os.Getenv("PATH")}
	if h := os.Getenv("HOME"); h != "" {
		base = append(base, "HOME="+h)
	}
	return processEnv(base, over)
}

// scriptedPlaceholder stands in for [egress] upstream_url in the vessel's
// copy of the deployment when the scripted model serves: the vessel only
// validates that field (the egress is what calls the model), and a loopback
// http URL would need allow_http_upstream in the operator's file.
const scriptedPlaceholder = "https://scripted-model.localhost/v1"

// Start builds the stack's processes, starts them in order (model, egress,
// sandboxes, vessel), waits until the vessel reports every agent ready, and
// writes stack.json. On error everything already started is stopped.
func Start(ctx context.Context, cfg Config) (st *Stack, err error) {
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	base := cfg.Env
	if base == nil {
		base = os.LookupEnv
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 60 * time.Second
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8700"
	}
	if cfg.GRPCListen == "" {
		g, err := DefaultGRPCListen(cfg.Listen)
		if err != nil {
			return nil, err
		}
		cfg.GRPCListen = g
	}
	depFile, err := filepath.Abs(cfg.DeploymentFile)
	if err != nil {
		return nil, fmt.Errorf("localstack: %w", err)
	}
	stateDir, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("localstack: %w", err)
	}
	logDir := filepath.Join(stateDir, "logs")
	for _, d := range []string{stateDir, logDir, filepath.Join(stateDir, "data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("localstack: create %s: %w", d, err)
		}
	}
	if old, err := ReadInfo(stateDir); err == nil && processAlive(old.PID) && old.PID != os.Getpid() {
		return nil, fmt.Errorf("localstack: a local stack (pid %d) already runs from %s at %s", old.PID, stateDir, old.URL)
	}

	appKey, err := secret(stateDir, "app.key", "avk_local_")
	if err != nil {
		return nil, err
	}
	master, err := secret(stateDir, "sandbox-master.token", "")
	if err != nil {
		return nil, err
	}
	egressToken, err := secret(stateDir, "egress.token", "")
	if err != nil {
		return nil, err
	}
	cardKey, err := cardKeyFile(stateDir)
	if err != nil {
		return nil, err
	}
	digest := sha256.Sum256([]byte(appKey))
	digestHex := hex.EncodeToString(digest[:])

	scripted := cfg.UpstreamURL == "" || cfg.UpstreamKey == ""
	vesselVars := map[string]string{}
	if scripted {
		vesselVars["VESSEL_UPSTREAM_MODEL_URL"] = scriptedPlaceholder
	} else {
		vesselVars["VESSEL_UPSTREAM_MODEL_URL"] = cfg.UpstreamURL
	}

	// Point the deployment's first app at the local key: through its env
	// reference when it has one, else through a derived deployment file.
	vesselDep := depFile
	appID, err := localApp(depFile, digestHex, vesselVars, stateDir, &vesselDep)
	if err != nil {
		return nil, err
	}
	env := overlay(vesselVars, spec.EnvWithFiles(base))
	d, err := spec.LoadDeployment(vesselDep, env)
	if err != nil {
		return nil, fmt.Errorf("localstack: load %s: %w", vesselDep, err)
	}
	if len(d.Agents) == 0 {
		return nil, fmt.Errorf("localstack: %s has no agents", depFile)
	}

	s := &Stack{StateDir: stateDir}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	// Scratch lives under the temp dir: sandboxd runs calls as an
	// unprivileged user, who must be able to reach it (home dirs are often
	// closed to others).
	s.scratch, err = os.MkdirTemp("", "astralvessel-scratch-")
	if err != nil {
		return nil, fmt.Errorf("localstack: scratch dir: %w", err)
	}
	if err := os.Chmod(s.scratch, 0o711); err != nil {
		return nil, fmt.Errorf("localstack: scratch dir: %w", err)
	}

	readyCtx, cancel := context.WithTimeout(ctx, cfg.ReadyTimeout)
	defer cancel()

	// 1. The model.
	upstream, upstreamKey := cfg.UpstreamURL, cfg.UpstreamKey
	if scripted {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args := []string{"--listen", loopback(port)}
		if cfg.Script != "" {
			args = append(args, "--script", cfg.Script)
		}
		p, err := s.start("scripted-model", cfg.Bins, args, minimalEnv(nil), logDir)
		if err != nil {
			return nil, err
		}
		upstream, upstreamKey = "http://"+loopback(port)+"/v1", "scripted"
		if err := waitHTTP(readyCtx, p, upstream+"/models", "", nil); err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "scripted model on %s\n", upstream)
	}

	// 2. The egress: the only holder of the model key.
	modelPort, err := freePort()
	if err != nil {
		return nil, err
	}
	proxyPort, err := freePort()
	if err != nil {
		return nil, err
	}
	egressVars := map[string]string{
		"VESSEL_UPSTREAM_MODEL_URL": upstream,
		"VESSEL_UPSTREAM_MODEL_KEY": upstreamKey,
		"VESSEL_EGRESS_TOKEN":       egressToken,
	}
	if strings.HasPrefix(upstream, "http://") {
		egressVars["VESSEL_EGRESS_ALLOW_HTTP_UPSTREAM"] = "1"
	}
	eg, err := s.start("egress", cfg.Bins, []string{"--model-listen", loopback(modelPort), "--proxy-listen", loopback(proxyPort)},
		processEnv(os.Environ(), egressVars, "VESSEL_MODEL_KEY", "VESSEL_EGRESS_TOKEN_FILE"), logDir)
	if err != nil {
		return nil, err
	}
	if err := waitTCP(readyCtx, eg, loopback(modelPort)); err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "egress on %s (proxy %s)\n", loopback(modelPort), loopback(proxyPort))

	// 3. One sandbox per agent.
	var sandboxArgs []string
	for i, a := range d.Agents {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		fp, err := spec.Fingerprint(d, a.ID)
		if err != nil {
			return nil, fmt.Errorf("localstack: fingerprint of %s: %w", a.ID, err)
		}
		// The same block Compose gives this agent: uids are global to the
		// host, so each sandbox's turns need their own.
		uids, err := spec.CallUIDRange(i)
		if err != nil {
			return nil, fmt.Errorf("localstack: agent %s: %w", a.ID, err)
		}
		scratch := filepath.Join(s.scratch, a.ID)
		args := []string{"--agent", a.ID, "--package", a.PackageDir, "--scratch", scratch,
			"--listen", loopback(port), "--fingerprint", fp, "--uid-range", uids.String(),
			// No container here: the agent's memory bounds each process of a call.
			"--call-memory", strconv.FormatInt(int64(a.Sandbox.Memory), 10)}
		for _, m := range a.Sandbox.Mounts {
			args = append(args, "--mount", d.ResolvePath(m.Source))
		}
		if a.Sandbox.Scratch > 0 {
			args = append(args, "--scratch-size", strconv.FormatInt(int64(a.Sandbox.Scratch), 10))
		}
		if a.Sandbox.TurnDisk > 0 {
			args = append(args, "--turn-disk", strconv.FormatInt(int64(a.Sandbox.TurnDisk), 10))
		}
		if a.Sandbox.UserDisk > 0 {
			args = append(args, "--user-disk", strconv.FormatInt(int64(a.Sandbox.UserDisk), 10))
		}
		token := spec.DeriveToken(master, "sandbox/"+a.ID)
		p, err := s.start("sandbox-"+a.ID, cfg.Bins, args, minimalEnv(map[string]string{"VESSEL_SANDBOX_TOKEN": token}), logDir)
		if err != nil {
			return nil, err
		}
		u := "http://" + loopback(port)
		if err := waitHTTP(readyCtx, p, u+"/status", token, nil); err != nil {
			return nil, err
		}
		sandboxArgs = append(sandboxArgs, "--sandbox-url", a.ID+"="+u)
		fmt.Fprintf(logw, "sandbox %s on %s\n", a.ID, u)
	}

	// 4. The vessel: holds the egress token as its model key, never the
	// real one.
	for k, v := range map[string]string{
		"VESSEL_SANDBOX_MASTER_TOKEN":  master,
		"VESSEL_MODEL_KEY":             egressToken,
		"VESSEL_CARD_SIGNING_KEY_FILE": cardKey,
		"VESSEL_MODEL_BASE_URL":        "http://" + loopback(modelPort) + "/v1",
		"VESSEL_EGRESS_PROXY":          "http://" + loopback(proxyPort),
		"VESSEL_DATA_DIR":              filepath.Join(stateDir, "data"),
	} {
		vesselVars[k] = v
	}
	venv := processEnv(operatorEnviron(base, d), vesselVars,
		"VESSEL_UPSTREAM_MODEL_KEY", "VESSEL_SANDBOX_MASTER_TOKEN_FILE", "VESSEL_MODEL_KEY_FILE")
	args := vesselArgs(vesselDep, cfg.Listen, cfg.GRPCListen, sandboxArgs)
	v, err := s.start("vessel", cfg.Bins, args, venv, logDir)
	if err != nil {
		return nil, err
	}
	// The vessel drains running turns on SIGTERM (as Compose's stop_grace_period allows).
	v.grace = time.Duration(d.Vessel.StopGraceSecs()) * time.Second
	url := "http://" + cfg.Listen
	agents := make([]string, len(d.Agents))
	for i, a := range d.Agents {
		agents[i] = a.ID
	}
	if err := waitHTTP(readyCtx, v, url+"/health", "", func(b []byte) error { return healthReady(b, agents) }); err != nil {
		return nil, err
	}

	model := "scripted"
	if !scripted {
		model = cfg.UpstreamURL
	}
	s.Info = Info{URL: url, GRPCAddress: cfg.GRPCListen, Agents: agents, AppID: appID, AppKeyFile: filepath.Join(stateDir, "app.key"), User: LocalUser,
		PID: os.Getpid(), Started: time.Now().UTC(), Model: model, Logs: logDir, Deployment: depFile}
	if err := s.writeInfo(); err != nil {
		return nil, err
	}
	return s, nil
}

// writeInfo writes stack.json, with every process's current pid.
func (s *Stack) writeInfo() error {
	s.Info.Processes = s.Info.Processes[:0]
	for _, p := range s.procs {
		s.Info.Processes = append(s.Info.Processes, Process{Name: p.name, PID: p.cmd.Process.Pid, Log: p.log})
	}
	b, _ := json.MarshalIndent(s.Info, "", "  ")
	if err := os.WriteFile(filepath.Join(s.StateDir, infoFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("localstack: write %s: %w", infoFile, err)
	}
	return nil
}

// vesselArgs are the vessel's flags. Its cards must advertise where this
// stack serves, not the deployment's front address, hence --public-url
// (the vessel gives the gRPC interface that URL's host and grpcListen's port).
func vesselArgs(deployment, listen, grpcListen string, sandboxArgs []string) []string {
	return append([]string{"--deployment", deployment, "--listen", listen, "--grpc-listen", grpcListen,
		"--public-url", "http://" + listen}, sandboxArgs...)
}

// DefaultGRPCListen is the gRPC address beside listen: its host, its port + 1.
func DefaultGRPCListen(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n < 1 || n >= 65535 {
		return "", fmt.Errorf("localstack: listen address %q: want host:port with a port below 65535", listen)
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1)), nil
}

// operatorEnviron is the process environment plus the values of every env:
// reference of the deployment that come from the operator's env (such as a
// .env file), so the vessel resolves them the same way.
func operatorEnviron(base spec.Env, d *spec.Deployment) []string {
	env := os.Environ()
	for _, name := range d.EnvRefs {
		if _, set := os.LookupEnv(name); set {
			continue
		}
		if v, ok := base(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func (s *Stack) start(name string, bins map[string]string, args, env []string, logDir string) (*proc, error) {
	binName := name
	if strings.HasPrefix(name, "sandbox-") {
		binName = "sandboxd"
	}
	bin, ok := bins[binName]
	if !ok {
		return nil, fmt.Errorf("localstack: no path for binary %s", binName)
	}
	p, err := startProc(name, bin, args, env, logDir)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
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
		if !strings.HasPrefix(p.name, "sandbox-") {
			return fmt.Errorf("localstack: %w, and the stack cannot serve without it, so everything stops; last log lines:\n%s",
				p.exitError(), p.tail(2000))
		}
		if restarts[p.name] >= MaxSandboxRestarts {
			return fmt.Errorf("localstack: %w again after %d restarts, so everything stops; last log lines:\n%s",
				p.exitError(), restarts[p.name], p.tail(2000))
		}
		restarts[p.name]++
		fmt.Fprintf(notes, "localstack: %v; starting it again (%d of %d), the other agents keep running; its log: %s\n",
			p.exitError(), restarts[p.name], MaxSandboxRestarts, p.log)
		np, err := p.again()
		if err != nil {
			return fmt.Errorf("localstack: starting %s again: %w", p.name, err)
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
func (s *Stack) waitExit(ctx context.Context) *proc {
	exited := make(chan *proc, len(s.procs))
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

// Stop stops every process (vessel first), removes stack.json and the
// scratch directories. It is safe to call more than once.
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
	if s.scratch != "" {
		_ = os.RemoveAll(s.scratch)
	}
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscallZero) == nil
}

// healthReady checks a /health body: ok and every agent ready.
func healthReady(b []byte, agents []string) error {
	var h struct {
		OK     bool            `json:"ok"`
		Agents map[string]bool `json:"agents"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	var waiting []string
	for _, a := range agents {
		if !h.Agents[a] {
			waiting = append(waiting, a)
		}
	}
	if len(waiting) > 0 {
		return fmt.Errorf("agents not ready: %s", strings.Join(waiting, ", "))
	}
	return nil
}

// waitTCP waits until addr accepts connections or p exits.
func waitTCP(ctx context.Context, p *proc, addr string) error {
	return poll(ctx, p, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// waitHTTP waits until GET url answers 200 (and check accepts the body).
func waitHTTP(ctx context.Context, p *proc, url, bearer string, check func([]byte) error) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	return poll(ctx, p, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
		}
		if check != nil {
			return check(b)
		}
		return nil
	})
}

func poll(ctx context.Context, p *proc, try func() error) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var last error
	for {
		if last = try(); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("localstack: %w; last log lines:\n%s", p.exitError(), p.tail(3000))
		case <-ctx.Done():
			return fmt.Errorf("localstack: %s not ready: %v (log: %s)", p.name, last, p.log)
		case <-t.C:
		}
	}
}
