package localstack

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// proc is one child process of the stack, in its own process group so a stop
// reaches everything it started.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
	// grace is how long Stop waits after SIGTERM; 0 means 10 s.
	grace time.Duration
	// what started it, so it can be started again
	bin       string
	args, env []string
	logDir    string
}

// again starts a new process as p was started.
func (p *proc) again() (*proc, error) {
	np, err := startProc(p.name, p.bin, p.args, p.env, p.logDir)
	if err != nil {
		return nil, err
	}
	np.grace = p.grace
	return np, nil
}

// startProc starts bin with args and env (a full environment), logging to
// logDir/name.log.
func startProc(name, bin string, args, env []string, logDir string) (*proc, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("localstack: open log %s: %w", logPath, err)
	}
	fmt.Fprintf(f, "---- %s starting %s\n", time.Now().UTC().Format(time.RFC3339), name)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	// Own process group: Stop signals the group. Pdeathsig: if this process
	// dies without stopping the stack, the children go too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("localstack: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{}), bin: bin, args: args, env: env, logDir: logDir}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	pgid := p.cmd.Process.Pid
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

// tail returns the last n bytes of the process's log, for error messages.
func (p *proc) tail(n int64) string {
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
func (p *proc) exitError() error {
	if p.err == nil {
		return fmt.Errorf("%s exited", p.name)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return fmt.Errorf("%s exited: %s", p.name, ee.ProcessState)
	}
	return fmt.Errorf("%s: %w", p.name, p.err)
}
