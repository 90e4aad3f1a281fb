// Package stack sets up the stack a load run drives: it writes the load
// agent's deployment and starts it with deployer/localstack, the launcher
// `astralvessel up` uses, with the options a load run needs (the model
// called directly, vessel replicas on PostgreSQL, a tmpfs scratch, CPU
// pins, pprof), and measures its processes (peak RSS, CPU, scratch left
// behind). It never imports server code.
package stack

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/localstack"
	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// AgentID is the one agent every load run serves.
const AgentID = "load"

// binaries are the programs a load run starts (no egress: the vessels
// call the scripted model directly).
var binaries = []string{"vessel", "scripted-model", "sandboxd"}

// Config says what to start.
type Config struct {
	// Dir holds everything the run writes (deployment, keys, scratch, logs):
	// it is the local stack's state folder.
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
	// AppTOML is appended to the app's [[apps]] entry, e.g. push_urls.
	AppTOML string
	// Project is the deployment's vessel.project, from which its call uid
	// block is derived (and reserved host-wide by sandboxd): two runs on
	// one host need different ones. Empty: RunProject().
	Project string
	// Users is how many users of the one app the run sends at once: the
	// deployment's [limits] are raised to carry them (limitsTOML), since
	// the load measures the server, not the default caps. 0 keeps the
	// defaults.
	Users int
}

// Stack is a running load stack.
type Stack struct {
	cfg      Config
	ls       *localstack.Stack
	AppKey   string
	Vessels  []*Proc
	Sandbox  *Proc
	Model    *Proc
	Scratch  string   // the agent's scratch folder
	Endpoint []string // vessel base URLs, one per replica
	// GRPC are the vessels' gRPC binding addresses (host:port), one per
	// replica, as their cards give them.
	GRPC    []string
	root    string // the scratch root: Scratch's parent, our tmpfs when mounted
	mounted bool   // root is our tmpfs, unmounted by Stop
}

// Proc is one process of the stack, measured.
type Proc struct {
	*localstack.Proc
	meter
}

func newProc(p *localstack.Proc) *Proc {
	if p == nil {
		return nil
	}
	return &Proc{Proc: p, meter: meter{pid: p.Pid()}}
}

// meter reads a process's resource use from /proc, and keeps the last
// values read for after it ended.
type meter struct {
	pid  int
	peak int64   // last VmHWM seen, bytes
	cpu  float64 // last CPU seconds seen
}

// Start builds what is missing, writes the deployment and starts the
// stack, returning once every vessel reports the agent ready.
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
	if cfg.Project == "" {
		cfg.Project = RunProject()
	}
	var err error
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	// sandboxd runs tool calls as an unprivileged user, who must be able to
	// reach the agent package and the scratch folder below Dir.
	s := &Stack{cfg: cfg, root: filepath.Join(cfg.Dir, "scratch")}
	for _, d := range []string{cfg.Dir, s.root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
	}
	bins, err := ensureBinaries(ctx, &s.cfg)
	if err != nil {
		return nil, err
	}
	lcfg, err := s.localConfig(bins)
	if err != nil {
		return nil, err
	}
	if err := s.prepareScratch(); err != nil {
		return nil, err
	}
	if s.ls, err = localstack.Start(ctx, lcfg); err != nil {
		s.unmount()
		return nil, fmt.Errorf("stack: %w", err)
	}
	if s.AppKey, err = s.ls.AppKey(); err != nil {
		s.Stop()
		return nil, err
	}
	for _, p := range s.ls.Vessels() {
		s.Vessels = append(s.Vessels, newProc(p))
	}
	s.Sandbox, s.Model = newProc(s.ls.Sandbox(AgentID)), newProc(s.ls.ModelProc())
	s.Scratch, s.Endpoint, s.GRPC = s.ls.Scratch(AgentID), s.ls.URLs, s.ls.GRPCAddresses
	fmt.Fprintf(cfg.Log, "stack: model %s, sandboxd %s, vessels %s\n", s.Model.Addr, s.Sandbox.Addr, strings.Join(s.Endpoint, " "))
	return s, nil
}

// localConfig writes the deployment and the model's script and says how
// the local stack starts them.
func (s *Stack) localConfig(bins map[string]string) (localstack.Config, error) {
	dep, err := s.writeDeployment()
	if err != nil {
		return localstack.Config{}, err
	}
	script := filepath.Join(s.cfg.Dir, "model-script.json")
	if err := os.WriteFile(script, s.cfg.Script, 0o644); err != nil {
		return localstack.Config{}, fmt.Errorf("stack: write script: %w", err)
	}
	return localstack.Config{
		DeploymentFile: dep, Bins: bins, StateDir: s.cfg.Dir, Listen: "127.0.0.1:0", Script: script,
		ReadyTimeout: 2 * time.Minute, Log: s.cfg.Log,
		Replicas: s.cfg.Replicas, DirectModel: true, ScratchDir: s.root,
		ServerCPUs: s.cfg.ServerCPUs, ModelCPUs: s.cfg.ModelCPUs, Pprof: s.cfg.Pprof,
	}, nil
}

// appKeyVar is the deployment's reference to the app key's digest, which
// the local stack sets to the digest of its own key.
const appKeyVar = "VESSEL_LOAD_APP_KEY_SHA256"

// limitsTOML is a [limits] table that lets users of one app, each with one
// turn at a time, all run at once: the turn caps at least users, the app's
// request rate and burst at least twice users (a turn is a send and,
// when cancelled, a cancel). Empty below the defaults.
func limitsTOML(users int) string {
	if users <= spec.DefaultMaxTurnsPerApp {
		return ""
	}
	return fmt.Sprintf(`
[limits]
max_turns = %d
max_turns_per_agent = %d
max_turns_per_app = %d
requests_per_second_per_app = %d.0
request_burst_per_app = %d
`, max(users, spec.DefaultMaxTurns), users, users, max(2*users, spec.DefaultRequestsPerSecondPerApp), max(2*users, spec.DefaultRequestBurstPerApp))
}

// writeDeployment writes deployment.toml and the agent package, and
// returns the deployment's path.
func (s *Stack) writeDeployment() (string, error) {
	dir := s.cfg.Dir
	pkg := filepath.Join(dir, "agents", AgentID)
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return "", fmt.Errorf("stack: %w", err)
	}
	store := ""
	if s.cfg.Postgres != "" {
		store = fmt.Sprintf("task_store = %s\n", strconv.Quote(s.cfg.Postgres))
	}
	deployment := fmt.Sprintf(`# Written by the load tool for one run.
[vessel]
project = "%s"
%s
[egress]
# Set by the local stack; the vessels call the scripted model directly.
upstream_url = "env:VESSEL_UPSTREAM_MODEL_URL"

[[apps]]
id = "load"
key_sha256 = "env:%s"
agents = ["%s"]
%s
[[agents]]
id = "%s"
package = "agents/%s"

[agents.sandbox]
scratch = "%s"
%s%s`, s.cfg.Project, store, appKeyVar, AgentID, s.cfg.AppTOML, AgentID, AgentID, s.cfg.ScratchSize, s.cfg.AgentTOML, limitsTOML(s.cfg.Users))

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
			return "", fmt.Errorf("stack: write %s: %w", path, err)
		}
	}
	return filepath.Join(dir, "deployment.toml"), nil
}

// RunProject is a project name of this run's own,
// astralvessel-load-<pid>-<random>: the pid keeps runs of different
// processes apart, the random part runs of one process (a test starting
// two), so each run's sandbox gets its own call uids.
func RunProject() string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	return fmt.Sprintf("astralvessel-load-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// Kill ends the process at once (SIGKILL), as a crash would, and waits for it.
func (p *Proc) Kill() {
	p.PeakRSS()
	p.CPUSeconds()
	p.Proc.Kill()
}

// PeakRSS reads the process's peak resident set (VmHWM) in bytes; after the
// process ended it returns the last value read.
func (p *meter) PeakRSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
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
func (p *meter) CPUSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
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

// RestartVessel starts vessel i again after it ended (same address, data
// and deployment) and waits until it is ready.
func (s *Stack) RestartVessel(ctx context.Context, i int) error {
	np, err := s.ls.Restart(ctx, s.Vessels[i].Proc)
	if np != nil {
		s.Vessels[i] = newProc(np)
	}
	return err
}

// LogTail returns the last n lines of the process's log, for error reports.
func (s *Stack) LogTail(p *Proc, n int) string {
	b, err := os.ReadFile(p.Log())
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

// Stop ends every process (the vessels first) and unmounts the scratch
// tmpfs. It is safe to call more than once.
func (s *Stack) Stop() {
	procs := append([]*Proc{s.Sandbox, s.Model}, s.Vessels...)
	for _, p := range procs {
		if p != nil {
			p.PeakRSS() // keep the last values
			p.CPUSeconds()
		}
	}
	if s.ls != nil {
		s.ls.Stop()
	}
	s.unmount()
}

func (s *Stack) unmount() {
	if !s.mounted {
		return
	}
	if err := syscall.Unmount(s.root, syscall.MNT_DETACH); err != nil {
		fmt.Fprintf(s.cfg.Log, "stack: unmount the scratch tmpfs %s: %v\n", s.root, err)
	}
	s.mounted = false
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

// mountScratch puts a tmpfs of the agent's scratch size on the scratch root.
func (s *Stack) mountScratch() error {
	size, err := spec.ParseByteSize(s.cfg.ScratchSize)
	if err != nil {
		return fmt.Errorf("stack: scratch size %q: %w", s.cfg.ScratchSize, err)
	}
	opts := fmt.Sprintf("size=%d,mode=0755", int64(size))
	if err := syscall.Mount("tmpfs", s.root, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		return fmt.Errorf("stack: mount a tmpfs on the scratch %s (needs root; --scratch dir avoids it): %w", s.root, err)
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
	_, err := ensureBinaries(ctx, &Config{Repo: repo, BinDir: binDir, Log: log})
	return err
}

// ensureBinaries builds into BinDir (default Dir/bin) what it lacks of
// the load run's binaries, with the local stack's builder, and returns
// their paths.
func ensureBinaries(ctx context.Context, cfg *Config) (map[string]string, error) {
	if cfg.BinDir == "" {
		cfg.BinDir = filepath.Join(cfg.Dir, "bin")
	}
	var missing []string
	for _, n := range binaries {
		if _, err := os.Stat(filepath.Join(cfg.BinDir, n)); err != nil {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		if cfg.Repo == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, fmt.Errorf("stack: %w", err)
			}
			if cfg.Repo = localstack.FindRepoRoot(wd); cfg.Repo == "" {
				return nil, errors.New("stack: repository root (go.work) not found; pass --repo or --bin")
			}
		}
		fmt.Fprintf(cfg.Log, "stack: building %s\n", strings.Join(missing, ", "))
		if err := localstack.Build(ctx, cfg.Repo, cfg.BinDir, missing, cfg.Log); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
	}
	bins, err := localstack.Locate(cfg.BinDir, binaries)
	if err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	return bins, nil
}
