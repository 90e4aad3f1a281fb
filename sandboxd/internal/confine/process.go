package confine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/sys/unix"
)

// Streams of output events.
const (
	Stdout = 1
	Stderr = 2
)

// chunkSize is the largest output piece sent at once.
const chunkSize = 32 << 10

// readBufs holds the chunkSize buffers the output readers read into.
var readBufs = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// Options start one confined call.
type Options struct {
	Spec Spec
	// Dir is the call's working directory (the workspace).
	Dir   string
	Stdin []byte
	// StdinPipe gives the process a pipe for stdin whose write end is
	// Process.Stdin, for a long-lived process fed as it runs (a served MCP
	// server); Stdin must then be empty.
	StdinPipe bool
	// Credential runs the call as another user (when sandboxd is root).
	Credential *syscall.Credential
	Timeout    time.Duration
	// OutputCap is the most bytes kept per stream; then the call is killed.
	OutputCap int64
	// Ruleset, when set, is the Landlock ruleset of Spec built beforehand
	// (NewRuleset); once it is closed, the start builds its own again.
	Ruleset *Ruleset
	// Cgroup, when set, are the turn's cgroup.procs files (one per
	// hierarchy, at most two): the call joins them before it drops root.
	Cgroup []*os.File
	// Budget, when set, is shared by every call of the server: each chunk
	// of output read but not yet passed on holds its size of it, and a
	// call whose output finds it spent waits (its pipe fills and its
	// writes block) instead of growing sandboxd's memory.
	Budget *semaphore.Weighted
}

// Result is how a call ended.
type Result struct {
	Code      int
	Signal    string
	Stopped   string
	Truncated bool
}

// Process is a started call: it leads a fresh process group that holds
// everything the call starts.
type Process struct {
	pid int
	// pidfd is the leader's pidfd, registered with the runtime's poller;
	// nil when there is none (then a thread waits in waitid).
	pidfd  *os.File
	opts   Options
	stdout *os.File
	stderr *os.File
	// stdin is the write end of the stdin pipe with StdinPipe, else nil.
	stdin *os.File

	mu      sync.Mutex
	reaped  bool
	stopped string
	exited  chan struct{}
}

// stdinInline is the most stdin written into the pipe before the call
// starts: an empty pipe always takes PIPE_BUF bytes, even when the kernel
// has shrunk pipes to one page, so the write cannot block.
const stdinInline = 4096

// pipe makes a pipe whose read end is pollable by the runtime and whose
// write end is a plain blocking descriptor for the child, closed by the
// caller after the spawn (no poller registration it would never use).
func pipe() (*os.File, int, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, -1, err
	}
	// A fresh pipe's read end has no other status flags to keep.
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, -1, err
	}
	return os.NewFile(uintptr(fds[0]), "pipe"), fds[1], nil
}

// Start starts a confined call.
func Start(opts Options) (*Process, error) {
	outR, outW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	defer unix.Close(outW)
	errR, errW, err := pipe()
	if err != nil {
		outR.Close()
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	defer unix.Close(errW)
	closeOut := func() { outR.Close(); errR.Close() }
	// stdin: nothing (/dev/null); small input written into the pipe
	// before the start; larger input fed by a goroutine afterwards.
	stdin := -1
	var stdinW *os.File
	switch {
	case opts.StdinPipe && len(opts.Stdin) > 0:
		err = errors.New("StdinPipe with Stdin bytes")
	case opts.StdinPipe:
		var fds [2]int
		if err = unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			break
		}
		stdin = fds[0]
		if err = unix.SetNonblock(fds[1], true); err != nil {
			unix.Close(fds[1])
			break
		}
		// Non-blocking, so the runtime's poller waits on it and Close
		// ends a write blocked on a full pipe.
		stdinW = os.NewFile(uintptr(fds[1]), "stdin")
	case len(opts.Stdin) == 0:
		stdin, err = unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	default:
		var fds [2]int
		if err = unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
			break
		}
		stdin = fds[0]
		if len(opts.Stdin) <= stdinInline {
			_, err = unix.Write(fds[1], opts.Stdin)
			unix.Close(fds[1])
			break
		}
		if err = unix.SetNonblock(fds[1], true); err != nil {
			unix.Close(fds[1])
			break
		}
		stdinW = os.NewFile(uintptr(fds[1]), "stdin")
	}
	if stdin >= 0 {
		defer unix.Close(stdin)
	}
	if err != nil {
		closeOut()
		if stdinW != nil {
			stdinW.Close()
		}
		return nil, fmt.Errorf("stdin: %w", err)
	}
	pid, pidfd, err := spawn(&opts, stdin, outW, errW)
	if err != nil {
		closeOut()
		if stdinW != nil {
			stdinW.Close()
		}
		return nil, err
	}
	if stdinW != nil && !opts.StdinPipe {
		// A call that never reads its stdin is fine: the write fails
		// once the call has gone.
		go func() {
			_, _ = stdinW.Write(opts.Stdin)
			stdinW.Close()
		}()
	}
	p := &Process{pid: pid, opts: opts, stdout: outR, stderr: errR, exited: make(chan struct{})}
	if opts.StdinPipe {
		p.stdin = stdinW
	}
	if pidfd >= 0 {
		// A fresh pidfd has no other status flags to keep.
		if _, err := unix.FcntlInt(uintptr(pidfd), unix.F_SETFL, unix.O_NONBLOCK); err == nil {
			p.pidfd = os.NewFile(uintptr(pidfd), "pidfd")
		} else {
			unix.Close(pidfd)
		}
	}
	go p.waitLeader()
	return p, nil
}

// Stdin is the write end of the process's stdin with StdinPipe (nil
// otherwise). The caller closes it; a write fails once the process has
// closed its end or died.
func (p *Process) Stdin() *os.File { return p.stdin }

// Pgid is the call's process group id.
func (p *Process) Pgid() int { return p.pid }

// waitLeader notices the launcher's (the call program's) exit without
// reaping it, then kills the rest of the group while its id cannot be
// reused, so nothing the call started outlives it.
func (p *Process) waitLeader() {
	if !p.pollExit() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, p.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
	}
	p.killGroup()
	close(p.exited)
}

// Exited is closed once the process's leader has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// pollExit waits for the leader's exit (without reaping it) on its pidfd
// through the runtime's poller, so a running call holds no thread in a
// blocking waitid and its exit wakes no extra thread. It reports false if
// it could not wait that way.
func (p *Process) pollExit() bool {
	if p.pidfd == nil {
		return false
	}
	rc, err := p.pidfd.SyscallConn()
	if err != nil {
		return false
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		// Not exited yet: EAGAIN on a non-blocking pidfd, or no signal
		// number (WNOHANG) on kernels that return 0.
		return !errors.Is(werr, unix.EAGAIN) && !errors.Is(werr, unix.EINTR) && (werr != nil || info.Signo != 0)
	})
	return err == nil && werr == nil
}

// Kill stops the call and everything it started; reason is reported as
// the call's stop reason ("" keeps any earlier one).
func (p *Process) Kill(reason string) {
	p.mu.Lock()
	if p.stopped == "" {
		p.stopped = reason
	}
	p.mu.Unlock()
	p.killGroup()
}

func (p *Process) killGroup() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		_ = unix.Kill(-p.pid, unix.SIGKILL)
	}
}

func (p *Process) giveBack(n int64) {
	if p.opts.Budget != nil {
		p.opts.Budget.Release(n)
	}
}

// Wait streams the call's output through emit until the call and its
// group have ended, enforcing the timeout and output cap.
func (p *Process) Wait(emit func(stream int, data []byte) error) Result {
	type chunk struct {
		stream int
		data   []byte
	}
	// Each reader ends with a chunk of stream 0 once its pipe is closed,
	// so the loop below knows when both are done without a goroutine
	// waiting for them to close the channel.
	chunks := make(chan chunk, 4)
	readers := 0
	for stream, f := range [...]*os.File{Stdout: p.stdout, Stderr: p.stderr} {
		if f == nil {
			continue // index 0 is no stream
		}
		readers++
		go func() {
			defer func() { chunks <- chunk{} }()
			defer f.Close()
			// Pooled read buffers; each chunk gets a copy of just its
			// bytes (most calls print a few bytes, and a fresh 32 KiB
			// buffer per read was most of a call's garbage).
			bp := readBufs.Get().(*[]byte)
			defer readBufs.Put(bp)
			buf := *bp
			for {
				n, err := f.Read(buf)
				if n > 0 {
					if p.opts.Budget != nil {
						_ = p.opts.Budget.Acquire(context.Background(), int64(n))
					}
					chunks <- chunk{stream, bytes.Clone(buf[:n])}
				}
				if err != nil {
					return
				}
			}
		}()
	}

	// The timer kills on its own, so a caller that stopped reading (and
	// blocks emit) cannot keep the call alive past its timeout.
	if p.opts.Timeout > 0 {
		t := time.AfterFunc(p.opts.Timeout, func() { p.Kill("timeout") })
		defer t.Stop()
	}
	var sent [Stderr + 1]int64
	truncated := false
	emitting := true
	for readers > 0 {
		c := <-chunks
		if c.stream == 0 {
			readers--
			continue
		}
		// The chunk's share of the budget is back once it has been
		// passed on (emit is synchronous) or dropped.
		held := int64(len(c.data))
		if !emitting {
			p.giveBack(held)
			continue
		}
		room := p.opts.OutputCap - sent[c.stream]
		if p.opts.OutputCap > 0 && int64(len(c.data)) > room {
			c.data = c.data[:max(room, 0)]
			truncated = true
		}
		if len(c.data) > 0 {
			sent[c.stream] += int64(len(c.data))
			if err := emit(c.stream, c.data); err != nil {
				// The caller went away.
				emitting = false
				p.Kill("cancelled")
			}
		}
		if truncated && emitting {
			note := fmt.Sprintf("\n[output cut at %d bytes; the call was stopped]\n", p.opts.OutputCap)
			_ = emit(Stderr, []byte(note))
			emitting = false
			p.Kill("")
		}
		p.giveBack(held)
	}
	// The pipes are closed once every holder died; now reap the leader.
	<-p.exited
	var ws unix.WaitStatus
	var err error
	for {
		_, err = unix.Wait4(p.pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	untrack(p.pid)
	if p.pidfd != nil {
		p.pidfd.Close()
	}
	if p.stdin != nil {
		p.stdin.Close() // a writer blocked on it returns
	}
	p.mu.Lock()
	p.reaped = true
	res := Result{Stopped: p.stopped, Truncated: truncated, Code: -1}
	p.mu.Unlock()
	switch {
	case err != nil:
	case ws.Signaled():
		res.Signal = unix.SignalName(ws.Signal())
	default:
		res.Code = ws.ExitStatus()
	}
	return res
}
