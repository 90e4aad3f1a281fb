package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// Issue 31: several deployments on one host, several owners in one
// sandbox. Each test starts real sandboxd processes as root.

// lockedBuf is a bytes.Buffer safe to read while a process writes it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type box struct {
	cmd    *exec.Cmd
	client sandboxv1.RunServiceClient
	ctx    context.Context
}

// needRootKernel fails under CI (skips elsewhere) without root, Landlock
// and seccomp, or a cgroup for turns.
func needRootKernel(t *testing.T) {
	t.Helper()
	requireKernel(t)
	testenv.Require(t, os.Geteuid() == 0, "sandboxd needs root")
}

// startBox starts sandboxd with the uid range rng (FIRST:COUNT) and the
// reservation directory lockDir; it returns the error output when
// sandboxd exits before it serves.
func startBox(t *testing.T, bin, base, pkg, name, rng, lockDir string, extra ...string) (*box, string) {
	t.Helper()
	addr := freeAddr(t)
	args := append([]string{"--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch-"+name),
		"--listen", addr, "--uid-range", rng, "--uid-lock-dir", lockDir, "--cgroups", "required"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=tok"}
	stderr := &lockedBuf{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// SIGTERM: sandboxd releases its range and removes its cgroups.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := sandboxv1.NewRunServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer tok")
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-exited:
			return nil, stderr.String()
		default:
		}
		if _, err := c.Status(ctx, &sandboxv1.StatusRequest{}); err == nil {
			return &box{cmd: cmd, client: c, ctx: ctx}, ""
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandboxd %s did not come up: %s", name, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run runs a bash call to its end and returns its output and exit.
func (b *box) run(t *testing.T, turn, owner, command string) (string, *sandboxv1.Exit) {
	t.Helper()
	args := `{"command":` + strconv.Quote(command) + `}`
	st, err := b.client.Run(b.ctx, &sandboxv1.RunRequest{TurnId: turn, Owner: owner, CallId: "c", Tool: "bash", ArgumentsJson: args})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var exit *sandboxv1.Exit
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("call %q: %v", command, err)
		}
		out.Write(ev.GetStdout())
		out.Write(ev.GetStderr())
		if e := ev.GetExit(); e != nil {
			exit = e
		}
	}
	if exit == nil {
		t.Fatalf("call %q: no exit", command)
	}
	return out.String(), exit
}

func (b *box) end(t *testing.T, turn string) {
	t.Helper()
	if _, err := b.client.EndTurn(b.ctx, &sandboxv1.EndTurnRequest{TurnId: turn}); err != nil {
		t.Fatal(err)
	}
}

// A second sandboxd whose range overlaps a running one's refuses to
// start, naming the holder.
func TestSecondSandboxdWithOverlappingRangeRefuses(t *testing.T) {
	needRootKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	lock := filepath.Join(base, "uids")
	a, msg := startBox(t, bin, base, pkg, "a", "510300:16", lock)
	if a == nil {
		t.Fatalf("first sandboxd: %s", msg)
	}
	b, msg := startBox(t, bin, base, pkg, "b", "510308:16", lock)
	if b != nil {
		t.Fatal("a second sandboxd started with an overlapping range")
	}
	if !strings.Contains(msg, "overlaps 510300:16") || !strings.Contains(msg, "pid "+strconv.Itoa(a.cmd.Process.Pid)) {
		t.Fatalf("the refusal does not name the range and its holder: %s", msg)
	}
	if c, msg := startBox(t, bin, base, pkg, "c", "510316:16", lock); c == nil {
		t.Fatalf("a disjoint range was refused: %s", msg)
	}
}

// A sandboxd whose range holds a process it did not start refuses to
// start and names it.
func TestRefusesForeignProcessInRange(t *testing.T) {
	needRootKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	foreign := exec.Command("/bin/sleep", "60")
	foreign.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 510403, Gid: 510403}}
	if err := foreign.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = foreign.Process.Kill(); _ = foreign.Wait() }()
	b, msg := startBox(t, bin, base, pkg, "a", "510400:16", filepath.Join(base, "uids"))
	if b != nil {
		t.Fatal("sandboxd started with a foreign process in its range")
	}
	if !strings.Contains(msg, "pid "+strconv.Itoa(foreign.Process.Pid)) || !strings.Contains(msg, "uid 510403") {
		t.Fatalf("the refusal does not name the foreign process: %s", msg)
	}
	if err := syscall.Kill(foreign.Process.Pid, 0); err != nil {
		t.Fatalf("sandboxd killed the foreign process: %v", err)
	}
}

// start begins a bash call and returns once its output holds marker;
// the channel yields the call's exit when it ends.
func (b *box) start(t *testing.T, turn, owner, command, marker string) <-chan *sandboxv1.Exit {
	t.Helper()
	c, _ := b.startCall(t, turn, owner, command, marker, false)
	return c
}

// tryStart is start, but a call that ends before marker returns its exit.
func (b *box) tryStart(t *testing.T, turn, owner, command, marker string) (<-chan *sandboxv1.Exit, *sandboxv1.Exit) {
	t.Helper()
	return b.startCall(t, turn, owner, command, marker, true)
}

func (b *box) startCall(t *testing.T, turn, owner, command, marker string, early bool) (<-chan *sandboxv1.Exit, *sandboxv1.Exit) {
	t.Helper()
	ctx, cancel := context.WithCancel(b.ctx)
	t.Cleanup(cancel)
	args := `{"command":` + strconv.Quote(command) + `}`
	st, err := b.client.Run(ctx, &sandboxv1.RunRequest{TurnId: turn, Owner: owner, CallId: "c", Tool: "bash", ArgumentsJson: args})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for !strings.Contains(out.String(), marker) {
		ev, err := st.Recv()
		if err == nil && ev.GetExit() != nil && early {
			return nil, ev.GetExit()
		}
		if err != nil || ev.GetExit() != nil {
			t.Fatalf("call %q ended before %q: %q %v %v", command, marker, out.String(), ev.GetExit(), err)
		}
		out.Write(ev.GetStdout())
		out.Write(ev.GetStderr())
	}
	exit := make(chan *sandboxv1.Exit, 1)
	go func() {
		defer close(exit)
		for {
			ev, err := st.Recv()
			if err != nil {
				return
			}
			if e := ev.GetExit(); e != nil {
				exit <- e
			}
		}
	}()
	return exit, nil
}

// Ending a turn kills that turn's processes only: another deployment
// whose turn runs as the very same uid (two deployments that do not share
// a reservation directory, the worst case) keeps its call running.
func TestEndingATurnSparesTheSameUidElsewhere(t *testing.T) {
	needRootKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	a, msg := startBox(t, bin, base, pkg, "a", "510500:16", filepath.Join(base, "uids-a"))
	if a == nil {
		t.Fatal(msg)
	}
	b, msg := startBox(t, bin, base, pkg, "b", "510500:16", filepath.Join(base, "uids-b"))
	if b == nil {
		t.Fatal(msg)
	}
	const call = "sleep 300 & echo started; wait"
	exitA := a.start(t, "t", "o", call, "started")
	exitB := b.start(t, "t", "o", call, "started")
	before := procsOfRange(510500, 1)
	a.end(t, "t")
	select {
	case e := <-exitA:
		if e.GetStopped() != "cancelled" {
			t.Fatalf("the ended turn's call: %v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ending the turn did not end its call")
	}
	select {
	case e := <-exitB:
		t.Fatalf("ending a turn of one deployment ended the other's call on the same uid: %v", e)
	case <-time.After(500 * time.Millisecond):
	}
	if n := procsOfRange(510500, 1); n != before/2 {
		t.Fatalf("%d processes of uid 510500 after one deployment ended its turn, want the other's %d", n, before/2)
	}
	b.end(t, "t")
	<-exitB
	if n := procsOfRange(510500, 1); n != 0 {
		t.Fatalf("%d processes of uid 510500 after both turns ended", n)
	}
}

// A hostile owner (memory flood, then a fork flood parking sleeps over
// two turns) meets its own caps with a clear error; another owner's call
// of the same sandbox works meanwhile. dash, unlike bash, does not retry
// a failed fork, so the flood ends at once.
func TestHostileOwnerLeavesOthersWorking(t *testing.T) {
	needRootKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	b, msg := startBox(t, bin, base, pkg, "a", "510600:16", filepath.Join(base, "uids"),
		"--owner-procs", "24", "--turn-procs", "16", "--turn-memory", "64MB", "--call-procs", "0")
	if b == nil {
		t.Fatal(msg)
	}
	out, exit := b.run(t, "m0", "mallory", `x=$(head -c 300000000 /dev/zero | tr '\0' a); echo survived ${#x}`)
	if strings.Contains(out, "survived") || exit.GetCode() == 0 {
		t.Fatalf("a 300 MB string in a 64 MB turn: %q %v", out, exit)
	}
	b.end(t, "m0")
	for _, turn := range []string{"m1", "m2"} {
		b.start(t, turn, "mallory", "sh -c 'for i in $(seq 40); do sleep 300 & done' 2>/dev/null; echo parked; exec sleep 300", "parked")
	}
	// Each further call parks one process, until mallory's cap is reached.
	var refused *sandboxv1.Exit
	for i := 0; i < 4 && refused == nil; i++ {
		_, refused = b.tryStart(t, "m3-"+strconv.Itoa(i), "mallory", "echo parked; exec sleep 300", "parked")
	}
	if refused == nil || !strings.Contains(refused.GetError(), "process cap") {
		t.Fatalf("mallory at its cap: %v, want a clear process cap error", refused)
	}
	out, exit = b.run(t, "a1", "alice", "for i in 1 2 3 4 5 6; do sleep 0.1 & done; wait; echo fine")
	if !strings.Contains(out, "fine") || exit.GetCode() != 0 || exit.GetError() != "" {
		t.Fatalf("alice's call next to mallory's flood: %q %v", out, exit)
	}
}

// Without a cgroup (a container whose engine delegates none) the caps
// still hold: a turn's by its uid's RLIMIT_NPROC, an owner's by the
// twice-a-second check, which stops the owner's largest call; another
// owner's call works.
func TestHostileOwnerWithoutCgroups(t *testing.T) {
	needRootKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	b, msg := startBox(t, bin, base, pkg, "a", "510800:16", filepath.Join(base, "uids"),
		"--cgroups", "off", "--owner-procs", "24", "--turn-procs", "16", "--call-procs", "0")
	if b == nil {
		t.Fatal(msg)
	}
	const flood = "sh -c 'for i in $(seq 40); do sleep 300 & done' 2>/dev/null; echo parked; exec sleep 300"
	e1 := b.start(t, "m1", "mallory", flood, "parked")
	e2 := b.start(t, "m2", "mallory", flood, "parked")
	var stopped *sandboxv1.Exit
	select {
	case stopped = <-e1:
	case stopped = <-e2:
	case <-time.After(10 * time.Second):
		t.Fatal("an owner over its process cap kept every call")
	}
	if stopped.GetStopped() != "process_limit" {
		t.Fatalf("mallory's call ended %v, want stopped: process_limit", stopped)
	}
	out, exit := b.run(t, "a1", "alice", "for i in 1 2 3 4 5 6; do sleep 0.1 & done; wait; echo fine")
	if !strings.Contains(out, "fine") || exit.GetCode() != 0 || exit.GetError() != "" {
		t.Fatalf("alice's call next to mallory's flood: %q %v", out, exit)
	}
}

// A write that fails for lack of space is reported on the call, even
// when the call's last command succeeds.
func TestNoSpaceReportedOnTheCall(t *testing.T) {
	needRootKernel(t)
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	scratch := filepath.Join(base, "scratch-full")
	if err := os.MkdirAll(scratch, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", scratch, "tmpfs", 0, "size=1m,mode=0711"); err != nil {
		testenv.Require(t, false, "mounting a tmpfs: "+err.Error())
	}
	t.Cleanup(func() { _ = syscall.Unmount(scratch, syscall.MNT_DETACH) })
	b, msg := startBox(t, bin, base, pkg, "full", "510700:16", filepath.Join(base, "uids"),
		"--turn-disk", "100MB", "--user-disk", "100MB")
	if b == nil {
		t.Fatal(msg)
	}
	out, exit := b.run(t, "t", "o", "echo small > ok; echo fine")
	if exit.GetError() != "" || !strings.Contains(out, "fine") {
		t.Fatalf("a call with room: %q %v", out, exit)
	}
	out, exit = b.run(t, "t", "o", "head -c 4000000 /dev/zero > big; echo done")
	if !strings.Contains(out, "done") || !strings.Contains(exit.GetError(), "ENOSPC") {
		t.Fatalf("a call that filled the scratch: %q %v, want ENOSPC on the call", out, exit)
	}
}

// removeCgroupTrees removes the (emptied) cgroup trees whose names start
// with prefix, in every hierarchy, as a killed sandboxd leaves them.
func removeCgroupTrees(t *testing.T, prefix string) {
	t.Helper()
	var trees []string
	for _, pat := range []string{"/sys/fs/cgroup/" + prefix + "*", "/sys/fs/cgroup/*/" + prefix + "*", "/sys/fs/cgroup/*/*/*/" + prefix + "*"} {
		m, _ := filepath.Glob(pat)
		trees = append(trees, m...)
	}
	for _, tree := range trees {
		var dirs []string
		_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if b, _ := os.ReadFile(filepath.Join(dirs[i], "cgroup.procs")); len(b) > 0 {
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				t.Errorf("removing cgroup %s: %v", dirs[i], err)
			}
		}
	}
}

// stopSandboxd stops sandboxd with SIGTERM, so it releases its uid range
// and removes its cgroups, and kills it if it has not ended in 10 s.
func stopSandboxd(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	t := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
	defer t.Stop()
	_ = cmd.Wait()
}
