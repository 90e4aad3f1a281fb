// Package stack starts the processes a load run drives — the scripted model,
// one sandboxd per agent and N vessel replicas — as separate programs on
// loopback, the way the local stack runs them, and measures them (peak RSS,
// scratch left behind). It never imports server code: it builds or takes the
// binaries and talks to them over HTTP.
package stack

import (
	"bufio"
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
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// AgentID is the one agent every load run serves.
const AgentID = "load"

// Config says what to start.
type Config struct {
	// Dir holds everything the run writes (deployment, tokens, scratch, logs).
	Dir string
	// Repo is the repository root, used to build binaries when BinDir lacks them.
	Repo string
	// BinDir holds (or receives) vessel, sandboxd and scripted-model.
	BinDir string
	// Replicas is how many vessels to start; more than one needs Postgres.
	Replicas int
	// Postgres is the task store DSN for several replicas (optional for one).
	Postgres string
	// Script is the scripted model's script (JSON).
	Script []byte
	// ServerCPUs pins vessels and sandboxd (taskset -c list); empty = no pin.
	ServerCPUs string
	// ModelCPUs pins the scripted model; empty = no pin.
	ModelCPUs string
	// Pprof gives each vessel and sandboxd a VESSEL_PPROF_ADDR (loopback);
	// binaries built with a pprof listener serve profiles there.
	Pprof bool
	// ScratchSize is the agent's [agents.sandbox] scratch, e.g. "2GiB".
	ScratchSize string
	// ScratchTmpfs mounts a tmpfs of ScratchSize on the scratch folder, as
	// a deployment does (needs root). On a disk file system, creating and
	// deleting each turn's folders costs CPU that moves with how much was
	// deleted there lately, which would blur the sandbox's figures.
	ScratchTmpfs bool
	// ScratchFallback keeps a plain folder when the tmpfs cannot be
	// mounted (no privilege), instead of failing; ScratchKind says which.
	ScratchFallback bool
	// Log receives progress lines.
	Log io.Writer
	// AgentTOML is appended to the agent's [[agents]] entry, e.g. an
	// [agents.approval] table.
	AgentTOML string
}

// Stack is a running set of processes.
type Stack struct {
	cfg      Config
	AppKey   string
	Vessels  []*Proc
	Sandbox  *Proc
	Model    *Proc
	Scratch  string
	Endpoint []string // vessel base URLs, one per replica
	// GRPC are the vessels' gRPC binding addresses (host:port), one per
	// replica, as their cards give them.
	GRPC []string
	mounted  bool     // Scratch is our tmpfs, unmounted by Stop
}

// Proc is one started program.
type Proc struct {
	Name string
	Addr string
	// PprofAddr is where the process was told to serve pprof, if asked.
	PprofAddr string
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
	peak      int64   // last VmHWM seen, bytes
	cpu       float64 // last CPU seconds seen
}

// Start builds what is missing, writes the deployment and starts everything,
// returning once every vessel reports the agent ready.
func Start(ctx context.Context, cfg Config) (*Stack, error) {
	if cfg.Replicas < 1 {
		cfg.Replicas = 1
	}
	if cfg.Replicas > 1 && cfg.Postgres == "" {
		return nil, errors.New("stack: several replicas need a PostgreSQL task store (--postgres or VESSEL_TEST_POSTGRES)")
	}
	if cfg.ScratchSize == "" {
		cfg.ScratchSize = "2GiB"
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	var err error
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	// sandboxd runs tool calls as an unprivileged user, who must be able to
	// reach the agent package and the scratch folder below Dir.
	if err := os.Chmod(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	if err := ensureBinaries(ctx, &cfg); err != nil {
		return nil, err
	}

	s := &Stack{cfg: cfg}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()

	modelAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	scriptPath := filepath.Join(cfg.Dir, "model-script.json")
	if err := os.WriteFile(scriptPath, cfg.Script, 0o644); err != nil {
		return nil, fmt.Errorf("stack: write script: %w", err)
	}
	s.Model, err = s.start("scripted-model", cfg.ModelCPUs, nil,
		filepath.Join(cfg.BinDir, "scripted-model"), "--listen", modelAddr, "--script", scriptPath)
	if err != nil {
		return nil, err
	}
	s.Model.Addr = modelAddr
	if err := s.waitTCP(ctx, modelAddr, s.Model); err != nil {
		return nil, err
	}

	depPath, master, err := s.writeDeployment(modelAddr)
	if err != nil {
		return nil, err
	}
	d, err := spec.LoadDeployment(depPath, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("stack: load the generated deployment: %w", err)
	}
	fp, err := spec.Fingerprint(d, AgentID)
	if err != nil {
		return nil, fmt.Errorf("stack: fingerprint: %w", err)
	}
	// The agent's call uids, as Compose and the local stack give them.
	uids, err := spec.CallUIDRange(slices.IndexFunc(d.Agents, func(a spec.Agent) bool { return a.ID == AgentID }))
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}

	s.Scratch = filepath.Join(cfg.Dir, "scratch")
	if err := os.MkdirAll(s.Scratch, 0o755); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	if err := s.prepareScratch(); err != nil {
		return nil, err
	}
	sbAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	sbEnv := []string{"VESSEL_SANDBOX_TOKEN=" + spec.DeriveToken(master, "sandbox/"+AgentID)}
	s.Sandbox, err = s.start("sandboxd", cfg.ServerCPUs, sbEnv,
		filepath.Join(cfg.BinDir, "sandboxd"), "--agent", AgentID, "--package", filepath.Join(cfg.Dir, "agents", AgentID),
		"--scratch", s.Scratch, "--listen", sbAddr, "--fingerprint", fp, "--uid-range", uids.String())
	if err != nil {
		return nil, err
	}
	s.Sandbox.Addr = sbAddr
	if err := s.waitTCP(ctx, sbAddr, s.Sandbox); err != nil {
		return nil, err
	}

	masterFile := filepath.Join(cfg.Dir, ".generated", "sandbox-master.token")
	for i := range cfg.Replicas {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		data := filepath.Join(cfg.Dir, fmt.Sprintf("data-%d", i))
		if err := os.MkdirAll(data, 0o755); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		env := []string{
			"VESSEL_SANDBOX_MASTER_TOKEN_FILE=" + masterFile,
			"VESSEL_MODEL_KEY=load-model-key",
			"VESSEL_MODEL_BASE_URL=http://" + modelAddr + "/v1",
			"VESSEL_DATA_DIR=" + data,
		}
		grpcAddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		// The cards give this replica's own addresses, not the deployment's.
		p, err := s.start(fmt.Sprintf("vessel-%d", i), cfg.ServerCPUs, env,
			filepath.Join(cfg.BinDir, "vessel"), "--deployment", depPath, "--listen", addr,
			"--grpc-listen", grpcAddr, "--public-url", "http://"+addr,
			"--sandbox-url", AgentID+"=http://"+sbAddr)
		if err != nil {
			return nil, err
		}
		p.Addr = addr
		s.Vessels = append(s.Vessels, p)
		s.Endpoint = append(s.Endpoint, "http://"+addr)
		s.GRPC = append(s.GRPC, grpcAddr)
	}
	for _, v := range s.Vessels {
		if err := s.waitHealthy(ctx, "http://"+v.Addr, v); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(cfg.Log, "stack: model %s, sandboxd %s, vessels %s\n", modelAddr, sbAddr, strings.Join(s.Endpoint, " "))
	ok = true
	return s, nil
}

// writeDeployment writes deployment.toml, the agent package and the tokens,
// and returns the deployment path and the sandbox master token.
func (s *Stack) writeDeployment(modelAddr string) (string, string, error) {
	dir := s.cfg.Dir
	pkg := filepath.Join(dir, "agents", AgentID)
	gen := filepath.Join(dir, ".generated")
	for _, d := range []string{pkg, gen} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", fmt.Errorf("stack: %w", err)
		}
	}
	s.AppKey = randomHex(24)
	master := randomHex(32)
	sum := sha256.Sum256([]byte(s.AppKey))

	store := ""
	if s.cfg.Postgres != "" {
		store = fmt.Sprintf("task_store = %s\n", strconv.Quote(s.cfg.Postgres))
	}
	deployment := fmt.Sprintf(`# Written by the load tool for one run.
[vessel]
project = "astralvessel-load"
%s
[egress]
upstream_url = "http://%s/v1"
allow_http_upstream = true

[[apps]]
id = "load"
key_sha256 = "%s"
agents = ["%s"]

[[agents]]
id = "%s"
package = "agents/%s"

[agents.sandbox]
scratch = "%s"
%s`, store, modelAddr, hex.EncodeToString(sum[:]), AgentID, AgentID, AgentID, s.cfg.ScratchSize, s.cfg.AgentTOML)

	manifest := `name = "load"
description = "Load-test agent: runs one shell command per turn and streams an answer."
version = "0.1.0"
deadline_seconds = 300

[model]
name = "scripted"
max_steps = 4

[tools]
enabled = ["bash"]
`
	files := map[string]string{
		filepath.Join(dir, "deployment.toml"): deployment,
		filepath.Join(pkg, "vessel.toml"):     manifest,
		filepath.Join(pkg, "prompt.md"):       "You are a load-test agent. Run the command you are asked to run, then answer.\n",
	}
	for path, body := range files {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			return "", "", fmt.Errorf("stack: write %s: %w", path, err)
		}
	}
	if err := os.WriteFile(filepath.Join(gen, "sandbox-master.token"), []byte(master), 0o600); err != nil {
		return "", "", fmt.Errorf("stack: write master token: %w", err)
	}
	return filepath.Join(dir, "deployment.toml"), master, nil
}

// start runs one program (through taskset when cpus is set) with its output
// in Dir/logs/<name>.log.
func (s *Stack) start(name, cpus string, env []string, bin string, args ...string) (*Proc, error) {
	logs := filepath.Join(s.cfg.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	logf, err := os.Create(filepath.Join(logs, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	pprofAddr := ""
	if s.cfg.Pprof && name != "scripted-model" {
		if pprofAddr, err = freeAddr(); err != nil {
			logf.Close()
			return nil, err
		}
		env = append(env, "VESSEL_PPROF_ADDR="+pprofAddr)
	}
	argv := append([]string{bin}, args...)
	if cpus != "" {
		argv = append([]string{"taskset", "-c", cpus}, argv...)
	}
	// Not CommandContext: the processes must outlive Start's context.
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("stack: start %s: %w", name, err)
	}
	p := &Proc{Name: name, PprofAddr: pprofAddr, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	fmt.Fprintf(s.cfg.Log, "stack: started %s (pid %d)\n", name, cmd.Process.Pid)
	return p, nil
}

// Kill ends the process at once (SIGKILL), as a crash would, and waits for it.
func (p *Proc) Kill() {
	p.PeakRSS()
	p.CPUSeconds()
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.done
}

// Pid is the process id (taskset execs the program, so it is the program's).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// PeakRSS reads the process's peak resident set (VmHWM) in bytes; after the
// process ended it returns the last value read.
func (p *Proc) PeakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return p.peak
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb*1024 > p.peak {
					p.peak = kb * 1024
				}
			}
		}
	}
	return p.peak
}

// CPUSeconds reads the user+system CPU time the process and its waited-for
// children (sandboxd's tool calls) have used so far (after it ended, the
// last value read).
func (p *Proc) CPUSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
	if err != nil {
		return p.cpu
	}
	// Fields after the command name (which may hold spaces) start after ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return p.cpu
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return p.cpu
	}
	var sum float64
	for _, field := range f[11:15] { // utime stime cutime cstime
		v, err := strconv.ParseFloat(field, 64)
		if err != nil {
			return p.cpu
		}
		sum += v
	}
	const ticks = 100 // USER_HZ on Linux
	p.cpu = sum / ticks
	return p.cpu
}

// LogTail returns the last lines of the process's log, for error reports.
func (s *Stack) LogTail(p *Proc, n int) string {
	b, err := os.ReadFile(filepath.Join(s.cfg.Dir, "logs", p.Name+".log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ScratchLeft counts the files and directories, and their bytes, left under
// the sandbox's scratch directory.
func (s *Stack) ScratchLeft() (entries int, bytes int64, err error) {
	err = filepath.WalkDir(s.Scratch, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if path == s.Scratch {
			return nil
		}
		entries++
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			bytes += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("stack: walk scratch: %w", err)
	}
	return entries, bytes, nil
}

// Stop ends every process (SIGTERM, then SIGKILL after 5 s).
func (s *Stack) Stop() {
	procs := append([]*Proc{}, s.Vessels...)
	if s.Sandbox != nil {
		procs = append(procs, s.Sandbox)
	}
	if s.Model != nil {
		procs = append(procs, s.Model)
	}
	for _, p := range procs {
		p.PeakRSS() // keep the last values
		p.CPUSeconds()
		_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
			<-p.done
		}
	}
	if s.mounted {
		if err := syscall.Unmount(s.Scratch, syscall.MNT_DETACH); err != nil && s.cfg.Log != nil {
			fmt.Fprintf(s.cfg.Log, "stack: unmount the scratch tmpfs %s: %v\n", s.Scratch, err)
		}
		s.mounted = false
	}
}

// prepareScratch mounts the scratch tmpfs when asked, keeping the folder
// instead when that fails and a fallback is allowed.
func (s *Stack) prepareScratch() error {
	if !s.cfg.ScratchTmpfs {
		return nil
	}
	err := s.mountScratch()
	if err != nil && s.cfg.ScratchFallback {
		if s.cfg.Log != nil {
			fmt.Fprintf(s.cfg.Log, "stack: %v; the scratch stays a folder on disk\n", err)
		}
		return nil
	}
	return err
}

// ScratchKind is "tmpfs" when the scratch is our tmpfs, else "dir".
func (s *Stack) ScratchKind() string {
	if s.mounted {
		return "tmpfs"
	}
	return "dir"
}

// mountScratch puts a tmpfs of the agent's scratch size on s.Scratch.
func (s *Stack) mountScratch() error {
	size, err := spec.ParseByteSize(s.cfg.ScratchSize)
	if err != nil {
		return fmt.Errorf("stack: scratch size %q: %w", s.cfg.ScratchSize, err)
	}
	opts := fmt.Sprintf("size=%d,mode=0755", int64(size))
	if err := syscall.Mount("tmpfs", s.Scratch, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		return fmt.Errorf("stack: mount a tmpfs on the scratch %s (needs root; --scratch dir avoids it): %w", s.Scratch, err)
	}
	s.mounted = true
	return nil
}

// Build builds whatever of vessel, sandboxd and scripted-model is missing
// from binDir, from the repository at repo (found from the working
// directory when empty).
func Build(ctx context.Context, repo, binDir string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	return ensureBinaries(ctx, &Config{Repo: repo, BinDir: binDir, Log: log})
}

// ensureBinaries builds vessel, sandboxd and scripted-model into BinDir
// unless they are there already.
func ensureBinaries(ctx context.Context, cfg *Config) error {
	if cfg.BinDir == "" {
		cfg.BinDir = filepath.Join(cfg.Dir, "bin")
	}
	if err := os.MkdirAll(cfg.BinDir, 0o755); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	builds := []struct{ name, module, pkg string }{
		{"vessel", "vessel", "./cmd/vessel"},
		{"scripted-model", "vessel", "./cmd/scripted-model"},
		{"sandboxd", "sandboxd", "./cmd/sandboxd"},
	}
	for _, b := range builds {
		out := filepath.Join(cfg.BinDir, b.name)
		if _, err := os.Stat(out); err == nil {
			continue
		}
		if cfg.Repo == "" {
			repo, err := FindRepo()
			if err != nil {
				return err
			}
			cfg.Repo = repo
		}
		fmt.Fprintf(cfg.Log, "stack: building %s\n", b.name)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, b.pkg)
		cmd.Dir = filepath.Join(cfg.Repo, b.module)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("stack: build %s: %w\n%s", b.name, err, msg)
		}
	}
	return nil
}

// FindRepo walks up from the working directory to the folder with go.work.
func FindRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("stack: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("stack: repository root (go.work) not found; pass --repo or --bin")
		}
		dir = parent
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("stack: pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *Stack) waitTCP(ctx context.Context, addr string, p *Proc) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if exited, werr := p.Exited(); exited {
			return fmt.Errorf("stack: %s exited before listening: %v; its log ends:\n%s", p.Name, werr, s.LogTail(p, 15))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stack: %s did not listen on %s: %w", p.Name, addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitHealthy polls GET /health until the agent's sandbox is ready.
func (s *Stack) waitHealthy(ctx context.Context, base string, p *Proc) error {
	var last string
	for {
		if exited, werr := p.Exited(); exited {
			return fmt.Errorf("stack: %s exited during start: %v; its log ends:\n%s", p.Name, werr, s.LogTail(p, 15))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			var h struct {
				OK     bool            `json:"ok"`
				Agents map[string]bool `json:"agents"`
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			last = string(b)
			if json.Unmarshal(b, &h) == nil && h.Agents[AgentID] {
				return nil
			}
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stack: %s not ready (last /health: %s): %w; its log ends:\n%s", p.Name, last, ctx.Err(), s.LogTail(p, 15))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
