package localstack

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/astraldeep/astralvessel-go/deployer/spec"
)

// Config says what to start. The first block is what `astralvessel up`
// sets; the second holds the options of load and replica tests (stress).
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
	// Listen is the first vessel's address; default 127.0.0.1:8700, and
	// port 0 takes a free loopback port.
	Listen string
	// GRPCListen is the first vessel's gRPC binding address; default
	// Listen's host with Listen's port + 1 (127.0.0.1:8701), a free
	// loopback port when Listen's port is 0. Later replicas take free ports.
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

	// Replicas is how many vessels serve the deployment; default 1. More
	// than one need the deployment's task_store on PostgreSQL. The first
	// listens on Listen, the others on free loopback ports.
	Replicas int
	// DirectModel starts no egress: the vessels call the model themselves,
	// with its key. For load runs, which measure the vessel and sandboxd.
	DirectModel bool
	// ScratchDir is the folder below which each agent's scratch lies
	// (ScratchDir/<agent>); the caller owns it (a tmpfs it mounted, say).
	// Default: a fresh folder under the temp dir, removed by Stop.
	ScratchDir string
	// ServerCPUs pins the vessels and sandboxes, ModelCPUs the scripted
	// model (taskset -c lists); empty: no pin.
	ServerCPUs, ModelCPUs string
	// Pprof gives each vessel and sandbox a loopback VESSEL_PPROF_ADDR
	// (Proc.PprofAddr); binaries built with a pprof listener serve there.
	Pprof bool
}

// withDefaults fills in the defaults and makes the paths absolute.
func (c Config) withDefaults() (Config, error) {
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Env == nil {
		c.Env = os.LookupEnv
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = 60 * time.Second
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:8700"
	}
	if _, port, _ := net.SplitHostPort(c.Listen); c.GRPCListen == "" && port != "0" {
		g, err := DefaultGRPCListen(c.Listen)
		if err != nil {
			return c, err
		}
		c.GRPCListen = g
	}
	if c.Replicas < 1 {
		c.Replicas = 1
	}
	var err error
	for _, p := range []*string{&c.DeploymentFile, &c.StateDir, &c.ScratchDir} {
		if *p == "" {
			continue
		}
		if *p, err = filepath.Abs(*p); err != nil {
			return c, fmt.Errorf("localstack: %w", err)
		}
	}
	return c, nil
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

// scripted reports whether the scripted model serves.
func (c *Config) scripted() bool { return c.UpstreamURL == "" || c.UpstreamKey == "" }
