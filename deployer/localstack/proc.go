package localstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Proc is one process of the stack, in its own process group so a stop
// reaches everything it started.
type Proc struct {
	// Name is the service's name: scripted-model, egress, sandbox-<agent>,
	// vessel (the first), vessel-<i> (the others).
	Name string
	// Addr is the address it serves on (gRPC for a sandbox).
	Addr string
	// PprofAddr is where it was told to serve pprof (Config.Pprof), or "".
	PprofAddr string

	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
	// grace is how long Stop waits after SIGTERM; 0 means 10 s.
	grace time.Duration
	// spec is what started it, so it can be started again.
	spec procSpec
}

// procSpec is how to start a process.
type procSpec struct {
	name, bin string
	args, env []string
	// cpus pins it (taskset -c) when set.
	cpus   string
	logDir string
}

// startProc starts a process as spec says, logging to logDir/name.log.
func startProc(spec procSpec) (*Proc, error) {
	logPath := filepath.Join(spec.logDir, spec.name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("localstack: open log %s: %w", logPath, err)
	}
	// The launcher's own lines go to a stream of their own, as JSON: the
	// services' log files hold only the services' JSON lines.
	if err := launcherLog(spec.logDir, "starting", spec.name, spec.bin); err != nil {
		f.Close()
		return nil, err
	}
	argv := append([]string{spec.bin}, spec.args...)
	if spec.cpus != "" {
		// taskset execs the program: the pid stays the program's.
		argv = append([]string{"taskset", "-c", spec.cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = spec.env
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group: Stop signals the group. Pdeathsig: if this process
	// dies without stopping the stack, the children go too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("localstack: start %s: %w", spec.name, err)
	}
	p := &Proc{Name: spec.name, cmd: cmd, log: logPath, done: make(chan struct{}), spec: spec}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// again starts a new process as p was started.
func (p *Proc) again() (*Proc, error) {
	np, err := startProc(p.spec)
	if err != nil {
		return nil, err
	}
	np.Addr, np.PprofAddr, np.grace = p.Addr, p.PprofAddr, p.grace
	return np, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Log is the path of the process's log file.
func (p *Proc) Log() string { return p.log }

// Exited reports whether the process has ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Kill ends the process group at once (SIGKILL), as a crash would, and
// waits for the process.
func (p *Proc) Kill() {
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) stop(grace time.Duration) {
	if exited, _ := p.Exited(); exited {
		return
	}
	pgid := p.Pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything left in the group (a child that ignored SIGTERM) goes now.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// Tail returns the last n bytes of the process's log, for error messages.
func (p *Proc) Tail(n int64) string {
	f, err := os.Open(p.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	b, _ := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	return string(b)
}

// exitError describes why p ended.
func (p *Proc) exitError() error {
	if p.err == nil {
		return fmt.Errorf("%s exited", p.Name)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return fmt.Errorf("%s exited: %s", p.Name, ee.ProcessState)
	}
	return fmt.Errorf("%s: %w", p.Name, p.err)
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// LauncherLog is the file in a stack's log folder holding the launcher's own
// lines (one JSON object a line), apart from the services' logs.
const LauncherLog = "launcher.jsonl"

var launcherMu sync.Mutex

// launcherLog appends one JSON line about service to logDir/LauncherLog.
func launcherLog(logDir, msg, service, bin string) error {
	line, err := json.Marshal(struct {
		Level   string `json:"level"`
		TS      string `json:"ts"`
		Logger  string `json:"logger"`
		Msg     string `json:"msg"`
		Service string `json:"service"`
		Bin     string `json:"bin,omitempty"`
	}{"info", time.Now().UTC().Format(time.RFC3339Nano), "launcher", msg, service, bin})
	if err != nil {
		return fmt.Errorf("localstack: launcher log: %w", err)
	}
	launcherMu.Lock()
	defer launcherMu.Unlock()
	path := filepath.Join(logDir, LauncherLog)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("localstack: open log %s: %w", path, err)
	}
	_, werr := f.Write(append(line, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("localstack: write %s: %w", path, werr)
	}
	return nil
}
