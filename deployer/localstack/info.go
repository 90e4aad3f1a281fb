package localstack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Info is what a running stack records in StateDir/stack.json so that
// `astralvessel ask` and tests can find it.
type Info struct {
	URL string `json:"url"`
	// URLs are every vessel's, URL first (several with Config.Replicas).
	URLs []string `json:"urls"`
	// GRPCAddress is the first vessel's gRPC binding (host:port; a request
	// names its agent in its tenant field), GRPCAddresses every vessel's.
	GRPCAddress   string   `json:"grpc_address,omitempty"`
	GRPCAddresses []string `json:"grpc_addresses,omitempty"`
	// OperatorURL is the first vessel's operator API (its metrics
	// listener, docs/operations.md), OperatorURLs every vessel's;
	// OperatorTokenFile holds their token.
	OperatorURL       string    `json:"operator_url,omitempty"`
	OperatorURLs      []string  `json:"operator_urls,omitempty"`
	OperatorTokenFile string    `json:"operator_token_file,omitempty"`
	Agents            []string  `json:"agents"`
	AppID             string    `json:"app_id"`
	AppKeyFile        string    `json:"app_key_file"`
	User              string    `json:"user"`
	PID               int       `json:"pid"`
	Started           time.Time `json:"started"`
	Model             string    `json:"model"` // "scripted" or the upstream URL
	Logs              string    `json:"logs"`
	Deployment        string    `json:"deployment"`
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

// Process is one process of a running stack, as stack.json lists it.
type Process struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	Log  string `json:"log"`
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
// fs.ErrNotExist (wrapped) when no stack was started there.
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

// writeInfo writes stack.json, with every process's current pid.
func (s *Stack) writeInfo() error {
	s.Info.Processes = s.Info.Processes[:0]
	for _, p := range s.procs {
		s.Info.Processes = append(s.Info.Processes, Process{Name: p.Name, PID: p.Pid(), Log: p.log})
	}
	b, _ := json.MarshalIndent(s.Info, "", "  ")
	if err := os.WriteFile(filepath.Join(s.StateDir, infoFile), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("localstack: write %s: %w", infoFile, err)
	}
	return nil
}
