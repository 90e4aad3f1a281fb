package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
)

// Every test here makes the real attempt from inside a confined call and
// asserts that it fails.

func TestNoNetworkSockets(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, family := range []string{"inet", "inet6", "udp", "unix", "netlink", "packet", "socketpair"} {
		t.Run(family, func(t *testing.T) {
			assertBlocked(t, e.probe("turn-net", family, ""), "13")
		})
	}
}

func TestNoConnectToLoopbackListener(t *testing.T) {
	e := newEnv(t, envOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	assertBlocked(t, e.probe("turn-conn", "connect", port), "")
	r := e.bash("turn-conn", "exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo CONNECTED || echo REFUSED")
	if !strings.Contains(r.stdout, "REFUSED") {
		t.Fatalf("bash /dev/tcp connected:\n%s", r)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the listener accepted %d connections from a call", n)
	}
}

func TestNoSocketFileOrFIFO(t *testing.T) {
	e := newEnv(t, envOpts{})
	t.Run("socket file", func(t *testing.T) { assertBlocked(t, e.probe("turn-mk", "socketfile", ""), "13") })
	t.Run("fifo", func(t *testing.T) { assertBlocked(t, e.probe("turn-mk", "fifo", ""), "13") })
	t.Run("mkfifo command", func(t *testing.T) {
		r := e.bash("turn-mk", "mkfifo f2 && echo MADE || echo REFUSED")
		if !strings.Contains(r.stdout, "REFUSED") {
			t.Fatalf("mkfifo worked:\n%s", r)
		}
	})
}

func TestNoSharedMemoryOrQueues(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, p := range []struct{ action, errno string }{
		{"shmget", "1"}, {"shm_open", ""}, {"devshm", ""}, {"msgget", "1"}, {"semget", "1"}, {"mq_open", "1"},
	} {
		t.Run(p.action, func(t *testing.T) { assertBlocked(t, e.probe("turn-ipc", p.action, ""), p.errno) })
	}
}

func TestNoKernelInterfaces(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, p := range []struct{ action, errno string }{
		{"unshare", "1"}, {"unshare_user", "1"}, {"setns", "1"}, {"clone3", "38"}, {"add_key", "1"},
		{"keyctl", "1"}, {"bpf", "1"}, {"perf_event_open", "1"}, {"io_uring_setup", "1"}, {"mount", "1"},
		{"userfaultfd", "1"},
	} {
		t.Run(p.action, func(t *testing.T) { assertBlocked(t, e.probe("turn-k", p.action, ""), p.errno) })
	}
	t.Run("unshare command", func(t *testing.T) {
		r := e.bash("turn-k", "unshare -n -r true && echo UNSHARED || echo REFUSED")
		if !strings.Contains(r.stdout, "REFUSED") {
			t.Fatalf("unshare worked:\n%s", r)
		}
	})
}

func TestNoNewSessionOrGroup(t *testing.T) {
	e := newEnv(t, envOpts{})
	t.Run("setsid", func(t *testing.T) { assertBlocked(t, e.probe("turn-s", "setsid", ""), "1") })
	t.Run("setpgid", func(t *testing.T) { assertBlocked(t, e.probe("turn-s", "setpgid", ""), "1") })
	t.Run("setsid command", func(t *testing.T) {
		r := e.bash("turn-s", "setsid -w true; echo rc=$?")
		if strings.Contains(r.stdout, "rc=0") {
			t.Fatalf("setsid worked:\n%s", r)
		}
	})
}

// sibling starts a long call in another turn and returns its pid.
func sibling(t *testing.T, e *env) (int, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pidc := make(chan int, 1)
	go func() {
		st, err := e.client.Run(authCtx(ctx, testToken), mkReq("turn-sibling", "bash", jsonArgs("command", "echo $$; exec sleep 60")))
		if err != nil {
			pidc <- 0
			return
		}
		ev, err := st.Recv()
		if err != nil {
			pidc <- 0
			return
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(ev.GetStdout())))
		pidc <- pid
		for {
			if _, err := st.Recv(); err != nil {
				return
			}
		}
	}()
	pid := <-pidc
	if pid == 0 {
		cancel()
		t.Fatal("sibling call did not start")
	}
	return pid, cancel
}

func TestCannotSignalOrTraceOthers(t *testing.T) {
	e := newEnv(t, envOpts{})
	pid, stop := sibling(t, e)
	defer stop()
	ps := strconv.Itoa(pid)
	t.Run("kill sibling", func(t *testing.T) { assertBlocked(t, e.probe("turn-k", "kill", ps), "1") })
	t.Run("kill sandboxd", func(t *testing.T) { assertBlocked(t, e.probe("turn-k", "kill", strconv.Itoa(os.Getpid())), "1") })
	t.Run("kill command", func(t *testing.T) {
		r := e.bash("turn-k", "kill -9 "+ps+" && echo KILLED || echo REFUSED")
		if !strings.Contains(r.stdout, "REFUSED") {
			t.Fatalf("kill worked:\n%s", r)
		}
	})
	t.Run("ptrace sibling", func(t *testing.T) { assertBlocked(t, e.probe("turn-k", "ptrace", ps), "1") })
	t.Run("process_vm_readv", func(t *testing.T) { assertBlocked(t, e.probe("turn-k", "process_vm_readv", ps), "1") })
	t.Run("pidfd_open", func(t *testing.T) { assertBlocked(t, e.probe("turn-k", "pidfd_open", ps), "3") })
	if !alive(pid) {
		t.Fatal("the sibling call died")
	}
}

func TestCannotSeeOtherProcesses(t *testing.T) {
	e := newEnv(t, envOpts{})
	pid, stop := sibling(t, e)
	defer stop()
	ps := strconv.Itoa(pid)
	t.Run("list /proc", func(t *testing.T) { assertBlocked(t, e.probe("turn-p", "listproc", ""), "13") })
	t.Run("read /proc/pid", func(t *testing.T) { assertBlocked(t, e.probe("turn-p", "procstatus", ps), "13") })
	t.Run("getpgid", func(t *testing.T) { assertBlocked(t, e.probe("turn-p", "getpgid", ps), "3") })
	t.Run("getsid", func(t *testing.T) { assertBlocked(t, e.probe("turn-p", "getsid", ps), "3") })
	t.Run("ps", func(t *testing.T) {
		r := e.bash("turn-p", "ps -e 2>&1 | grep -c sleep; ls /proc 2>&1 | head -1")
		if strings.Contains(r.stdout, ps) || strings.HasPrefix(strings.TrimSpace(r.stdout), "1") {
			t.Fatalf("ps saw other processes:\n%s", r)
		}
	})
}

func TestReadOnlyTrees(t *testing.T) {
	e := newEnv(t, envOpts{})
	for name, p := range map[string]string{
		"data":         filepath.Join(e.data, "guide.txt"),
		"data new":     filepath.Join(e.data, "new.txt"),
		"package":      filepath.Join(e.pkg, "probe.py"),
		"package new":  filepath.Join(e.pkg, "new.txt"),
		"root":         "/evil.txt",
		"tmp":          "/tmp/sandboxd-evil.txt",
		"etc":          "/etc/passwd",
		"scratch root": filepath.Join(e.scratch, "evil.txt"),
	} {
		t.Run(name, func(t *testing.T) {
			assertBlocked(t, e.probe("turn-ro", "write", p), "")
			if name == "data" || name == "package" {
				return
			}
			if _, err := os.Stat(p); err == nil && name != "etc" {
				t.Fatalf("%s was created", p)
			}
		})
	}
	b, _ := os.ReadFile(filepath.Join(e.data, "guide.txt"))
	if string(b) != "wren\nrobin\nfinch\n" {
		t.Fatalf("data changed: %q", b)
	}
	t.Run("data readable", func(t *testing.T) {
		r := e.bash("turn-ro", "cat "+filepath.Join(e.data, "guide.txt"))
		if !strings.Contains(r.stdout, "robin") {
			t.Fatalf("data not readable:\n%s", r)
		}
	})
}

func TestTurnIsolation(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.bash("turn-a", "echo alice-secret > secret.txt")
	secret := filepath.Join(e.workspace("turn-a"), "secret.txt")
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("setup: %v", err)
	}
	t.Run("another turn of the same user", func(t *testing.T) {
		assertBlocked(t, e.probe("turn-b", "read", secret), "13")
		assertBlocked(t, e.probe("turn-b", "listdir", e.workspace("turn-a")), "13")
		assertBlocked(t, e.probe("turn-b", "write", filepath.Join(e.workspace("turn-a"), "x")), "13")
	})
	t.Run("another user's turn", func(t *testing.T) {
		r := e.must(call{turn: "turn-c", owner: "app/mallory", tool: "bash",
			args: jsonArgs("command", "cat "+secret+" && echo READ || echo REFUSED")})
		if strings.Contains(r.stdout, "alice-secret") || !strings.Contains(r.stdout, "REFUSED") {
			t.Fatalf("read another user's workspace:\n%s", r)
		}
		r = e.must(call{turn: "turn-c", owner: "app/mallory", tool: "read", args: jsonArgs("path", secret)})
		if strings.Contains(r.stdout, "alice-secret") || r.exit.Error == "" {
			t.Fatalf("read tool crossed workspaces:\n%s", r)
		}
	})
	t.Run("another user reusing the turn id", func(t *testing.T) {
		r := e.must(call{turn: "turn-a", owner: "app/mallory", tool: "bash", args: jsonArgs("command", "cat secret.txt")})
		if strings.Contains(r.stdout, "alice-secret") || !strings.Contains(r.exit.Error, "another owner") {
			t.Fatalf("another owner used the turn:\n%s", r)
		}
	})
	t.Run("scratch listing", func(t *testing.T) { assertBlocked(t, e.probe("turn-b", "listdir", e.scratch), "13") })
}

func TestOpenFileLimit(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.probe("turn-f", "nofile", "")
	assertBlocked(t, r, "24")
	f := strings.Fields(r.stdout)
	n, _ := strconv.Atoi(f[1])
	if n > 4096 {
		t.Fatalf("opened %d files", n)
	}
	assertBlocked(t, e.probe("turn-f", "raise_nofile", ""), "")
}

func TestFileSizeLimit(t *testing.T) {
	e := newEnv(t, envOpts{turnLimit: 4 << 20, userLimit: 8 << 20})
	r := e.bash("turn-big", "head -c 5000000 /dev/zero > big; echo rc=$?")
	if r.exit.Signal != "SIGXFSZ" && !strings.Contains(r.stderr, "File size limit exceeded") {
		t.Fatalf("a file past the turn limit was written:\n%s", r)
	}
	if st, err := os.Stat(filepath.Join(e.workspace("turn-big"), "big")); err == nil && st.Size() > 4<<20 {
		t.Fatalf("file grew to %d", st.Size())
	}
}

// stopsForDisk runs a call that writes and then waits, and requires the
// disk check to stop it and empty its workspace.
func stopsForDisk(t *testing.T, e *env, turn, owner, command string) {
	t.Helper()
	r := e.must(call{turn: turn, owner: owner, tool: "bash", args: jsonArgs("command", command+"; sleep 20"), timeoutMs: 25000})
	if r.exit.Stopped != "disk_limit" {
		t.Fatalf("want the call stopped for disk use:\n%s", r)
	}
	entries, _ := os.ReadDir(e.workspace(turn))
	for _, en := range entries {
		if !strings.HasPrefix(en.Name(), ".outbox-") {
			t.Fatalf("workspace not emptied: %s", en.Name())
		}
	}
}

func TestTurnDiskLimit(t *testing.T) {
	e := newEnv(t, envOpts{turnLimit: 4 << 20, userLimit: 8 << 20})
	stopsForDisk(t, e, "turn-many", "app/alice",
		"for i in 1 2 3; do head -c 1500000 /dev/zero > f$i; done")
}

func TestTurnDiskLimitCountsEntries(t *testing.T) {
	e := newEnv(t, envOpts{turnLimit: 2 << 20, userLimit: 8 << 20})
	// 3,000 empty files cost 3,000 KB by the 1 KB per entry rule.
	stopsForDisk(t, e, "turn-entries", "app/alice", "mkdir d && cd d && touch $(seq 1 3000)")
}

func TestUserDiskLimitAcrossTurns(t *testing.T) {
	e := newEnv(t, envOpts{turnLimit: 4 << 20, userLimit: 6 << 20})
	r := e.bash("turn-u1", "head -c 3500000 /dev/zero > a; echo ok")
	if r.exit.Stopped != "" {
		t.Fatalf("first turn stopped:\n%s", r)
	}
	stopsForDisk(t, e, "turn-u2", "app/alice", "head -c 3500000 /dev/zero > b")
	// Another user is not counted with alice.
	r = e.must(call{turn: "turn-bob", owner: "app/bob", tool: "bash",
		args: jsonArgs("command", "head -c 3500000 /dev/zero > b; sleep 1; echo ok")})
	if r.exit.Stopped != "" {
		t.Fatalf("bob stopped for alice's use:\n%s", r)
	}
}

func TestDeletedButOpenFileCounts(t *testing.T) {
	e := newEnv(t, envOpts{turnLimit: 4 << 20, userLimit: 8 << 20})
	r := e.must(call{turn: "turn-del", tool: "bash", timeoutMs: 25000,
		args: jsonArgs("command", fmt.Sprintf("head -c 2000000 /dev/zero > visible; python3 %s/probe.py deleted_open 3000000", e.pkg))})
	if r.exit.Stopped != "disk_limit" {
		t.Fatalf("a deleted but open file escaped the limit:\n%s", r)
	}
}

func TestBackgroundProcessDiesWithCall(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.bash("turn-bg", "sleep 300 >/dev/null 2>&1 & echo $!; nohup sleep 301 >/dev/null 2>&1 & echo $!; (sleep 302 & echo $!) ; disown -a; echo done")
	var pids []int
	for _, f := range strings.Fields(r.stdout) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	if len(pids) != 3 {
		t.Fatalf("want 3 pids:\n%s", r)
	}
	for _, p := range pids {
		if !waitGone(p) {
			t.Fatalf("background process %d outlived its call", p)
		}
	}
}

func TestForkBomb(t *testing.T) {
	for _, c := range []struct {
		name      string
		callProcs int
		timeoutMs uint32
		stopped   string
	}{
		// The process check runs twice a second, but a bomb starves the
		// machine: give it time before the timeout would win.
		{"process limit", 64, 20000, "process_limit"},
		{"timeout", 0, 3000, "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOpts{callProcs: c.callProcs})
			forkBomb(t, e, c.timeoutMs, c.stopped)
		})
	}
}

func forkBomb(t *testing.T, e *env, timeoutMs uint32, stopped string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := e.run(ctx, call{turn: "turn-bomb", tool: "bash", args: jsonArgs("command", "b(){ b|b& }; b; sleep 30"), timeoutMs: timeoutMs})
	if err != nil {
		t.Fatal(err)
	}
	if r.exit.Stopped != stopped {
		t.Fatalf("want stopped %q: %v", stopped, r.exit)
	}
	// Nothing of the bomb may be left: look for processes of the turn's user.
	if uid := e.turn("turn-bomb").UID; uid >= 0 {
		for i := 0; countUserProcs(uid) > 0; i++ {
			if i > 100 {
				t.Fatalf("%d processes of the call survived (exit %v)", countUserProcs(uid), r.exit)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ok := e.bash("turn-after", "echo alive")
	if !strings.Contains(ok.stdout, "alive") {
		t.Fatalf("sandbox unusable after a fork bomb:\n%s", ok)
	}
}

func countUserProcs(uid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+en.Name(), &st) == nil && int(st.Uid) == uid && alive(pid) {
			n++
		}
	}
	return n
}

func TestOutputFlood(t *testing.T) {
	e := newEnv(t, envOpts{outputCap: 256 << 10})
	r := e.must(call{turn: "turn-flood", tool: "bash", args: jsonArgs("command", "yes flood; echo never"), timeoutMs: 20000})
	if !r.exit.Truncated {
		t.Fatalf("flood not cut:\n%v", r.exit)
	}
	if len(r.stdout) > 256<<10 {
		t.Fatalf("got %d bytes of stdout", len(r.stdout))
	}
	if r.exit.Signal != "SIGKILL" || r.exit.Stopped == "timeout" {
		t.Fatalf("flooding call not killed at the cap: %v", r.exit)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.must(call{turn: "turn-to", tool: "bash", args: jsonArgs("command", "sleep 100 & echo $!; sleep 100"), timeoutMs: 500})
	if r.exit.Stopped != "timeout" || r.exit.Signal != "SIGKILL" {
		t.Fatalf("want timeout:\n%s", r)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(r.stdout))
	if pid == 0 || !waitGone(pid) {
		t.Fatalf("background process %d survived the timeout", pid)
	}
}

func TestCancelKillsGroup(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := e.client.Run(authCtx(ctx, testToken), mkReq("turn-cancel", "bash", jsonArgs("command", "sleep 100 & echo $!; sleep 100")))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(ev.GetStdout())))
	cancel()
	if pid == 0 || !waitGone(pid) {
		t.Fatalf("background process %d survived cancellation", pid)
	}
}

func TestEndTurnKillsCallsAndDeletes(t *testing.T) {
	e := newEnv(t, envOpts{})
	pidc := make(chan string, 1)
	done := make(chan result, 1)
	go func() {
		st, err := e.client.Run(authCtx(context.Background(), testToken), mkReq("turn-end", "bash",
			jsonArgs("command", "echo data > f; sleep 100 & echo $!; wait")))
		if err != nil {
			pidc <- ""
			return
		}
		var r result
		for {
			ev, err := st.Recv()
			if err != nil {
				break
			}
			if out := ev.GetStdout(); out != nil {
				pidc <- strings.TrimSpace(string(out))
			}
			if x := ev.GetExit(); x != nil {
				r.exit = x
			}
		}
		done <- r
	}()
	pid, _ := strconv.Atoi(<-pidc)
	ws := e.workspace("turn-end")
	resp, err := e.client.EndTurn(authCtx(context.Background(), testToken), mkEnd("turn-end"))
	if err != nil || !resp.Existed {
		t.Fatalf("end turn: %v %v", resp, err)
	}
	r := <-done
	if r.exit == nil || r.exit.Stopped != "cancelled" {
		t.Fatalf("call not stopped by EndTurn: %v", r.exit)
	}
	if pid == 0 || !waitGone(pid) {
		t.Fatalf("process %d survived EndTurn", pid)
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Fatalf("workspace not deleted: %v", err)
	}
}

func TestEnvironmentHasNoSecrets(t *testing.T) {
	t.Setenv("VESSEL_SANDBOX_TOKEN", "must-not-leak")
	e := newEnv(t, envOpts{})
	r := e.bash("turn-env", "env; echo TMPDIR=$TMPDIR; test -d \"$VESSEL_OUTBOX\" && echo OUTBOX_OK")
	if strings.Contains(r.stdout, "must-not-leak") || strings.Contains(r.stdout, testToken) {
		t.Fatalf("secret visible to a call:\n%s", r)
	}
	if !strings.Contains(r.stdout, "TMPDIR="+e.workspace("turn-env")) || !strings.Contains(r.stdout, "OUTBOX_OK") {
		t.Fatalf("workspace environment missing:\n%s", r)
	}
}

func TestDeclaredToolGetsArgumentsOnStdin(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.must(call{turn: "turn-decl", tool: "echoargs", args: `{"b": 2, "a": "x"}`})
	if strings.TrimSpace(r.stdout) != `{"a": "x", "b": 2}` || r.exit.Code != 0 {
		t.Fatalf("declared tool:\n%s", r)
	}
	r = e.must(call{turn: "turn-decl", tool: "nope", args: `{}`})
	if !strings.Contains(r.exit.Error, "unknown tool") {
		t.Fatalf("unknown tool ran:\n%s", r)
	}
}

func TestDeclaredToolThatCannotStart(t *testing.T) {
	e := newEnv(t, envOpts{manifest: &toolset.Set{Declared: []toolset.Tool{
		{Name: "missing", Command: []string{"/nonexistent/tool"}},
		{Name: "outside", Command: []string{"/proc/self/exe"}},
	}}})
	for _, tool := range []string{"missing", "outside"} {
		r := e.must(call{turn: "turn-start", tool: tool, args: "{}"})
		if !strings.Contains(r.exit.Error, "could not start the call") || r.exit.Code != -1 {
			t.Fatalf("%s: %s", tool, r)
		}
	}
}

func TestExitCodesAndSignals(t *testing.T) {
	e := newEnv(t, envOpts{})
	if r := e.bash("turn-x", "exit 7"); r.exit.Code != 7 {
		t.Fatalf("exit code: %v", r.exit)
	}
	if r := e.bash("turn-x", "kill -SEGV $$"); r.exit.Signal != "SIGSEGV" || r.exit.Code != -1 {
		t.Fatalf("signal: %v", r.exit)
	}
}

// TestBashStillWorks guards against confinement so tight the tools break.
func TestBashStillWorks(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.bash("turn-ok", "set -e; mkdir -p a/b; echo hi > a/b/c; mv a/b/c a/d; cat a/d; ls a | sort | tr -d '\\n'; echo; "+
		"printf 'x,y\\n1,2\\n' | python3 -c 'import csv,sys; print(list(csv.reader(sys.stdin)))'; "+
		"grep -c robin "+filepath.Join(e.data, "guide.txt")+"; (sleep 0.1 &) ; wait; echo end")
	want := []string{"hi", "bd", "[['x', 'y'], ['1', '2']]", "1", "end"}
	for _, w := range want {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("missing %q:\n%s", w, r)
		}
	}
	if r.exit.Code != 0 {
		t.Fatalf("exit:\n%s", r)
	}
}

func TestHiddenFilesStillCount(t *testing.T) {
	e := newEnv(t, envOpts{turnLimit: 4 << 20, userLimit: 8 << 20})
	stopsForDisk(t, e, "turn-hide", "app/alice",
		"mkdir h; head -c 2500000 /dev/zero > h/a; head -c 2500000 /dev/zero > h/b; chmod 000 h")
}

// TestForeignArchSyscallsKilled makes an i386 system call (int 0x80) from
// an x86-64 program: the filter checks the architecture and kills it, so
// the 32-bit socketcall cannot slip past the 64-bit rules.
func TestForeignArchSyscallsKilled(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skip("needs gcc on amd64")
	}
	e := newEnv(t, envOpts{})
	src := filepath.Join(e.pkg, "i386.c")
	write(t, src, []byte(`int main(void){long r; __asm__ volatile("int $0x80":"=a"(r):"a"(102),"b"(1),"c"(0)); return r < 0 ? 3 : 4;}`), 0o644)
	bin := filepath.Join(e.pkg, "i386")
	if out, err := exec.Command(gcc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	_ = os.Chmod(bin, 0o755)
	// A kernel without IA-32 emulation faults the instruction itself.
	if err := exec.Command(bin).Run(); err != nil && strings.Contains(err.Error(), "segmentation") {
		t.Skip("this kernel has no IA-32 emulation: int 0x80 faults before any filter")
	}
	r := e.bash("turn-arch", bin+"; echo rc=$?")
	if !strings.Contains(r.stdout, "rc=159") { // 128 + SIGSYS
		t.Fatalf("i386 syscall not killed:\n%s", r)
	}
}

// TestNoInheritedDescriptors: a descriptor sandboxd holds open without
// close-on-exec (a listening socket here) never reaches a call.
func TestNoInheritedDescriptors(t *testing.T) {
	e := newEnv(t, envOpts{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// File() returns a close-on-exec duplicate: clear the flag, as a
	// careless library might.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFD, 0); errno != 0 {
		t.Fatal(errno)
	}
	r := e.must(call{turn: "turn-fd", tool: "bash", args: jsonArgs("command",
		`exec python3 -c 'import os
open_fds = []
for fd in range(3, 4096):
    try:
        os.fstat(fd)
        open_fds.append(fd)
    except OSError:
        pass
print("open:", open_fds)'`)})
	if strings.TrimSpace(r.stdout) != "open: []" {
		t.Fatalf("a descriptor leaked into the call (sandboxd's socket is fd %d):\n%s", f.Fd(), r)
	}
}

// TestConcurrentCalls starts many calls at once: each gets its own output,
// exit code and files, and none sees another's descriptors.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, envOpts{})
	const n = 24
	errs := make(chan error, n)
	for i := range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := fmt.Sprintf(`echo call-%d; exec python3 -c 'import os, sys
n = 0
for fd in range(3, 1024):
    try:
        os.fstat(fd); n += 1
    except OSError:
        pass
sys.exit(%d if n == 0 else 99)'`, i, i)
			r, err := e.run(ctx, call{turn: fmt.Sprintf("turn-c%d", i%6), tool: "bash", args: jsonArgs("command", cmd)})
			switch {
			case err != nil:
				errs <- err
			case strings.TrimSpace(r.stdout) != fmt.Sprintf("call-%d", i) || r.exit.Code != int32(i):
				errs <- fmt.Errorf("call %d: %s", i, r)
			default:
				errs <- nil
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A turn's calls share one Landlock ruleset; ending the turn drops it, so
// a turn started again under the same id gets one for its new workspace
// and a turn never reaches another turn's workspace through it.
func TestTurnRulesetFollowsItsWorkspace(t *testing.T) {
	e := newEnv(t, envOpts{})
	for i := range 2 {
		r := e.bash("turn-again", "echo one > f && cat f")
		if r.exit.GetCode() != 0 || strings.TrimSpace(r.stdout) != "one" {
			t.Fatalf("round %d, first call:\n%s", i, r)
		}
		r = e.bash("turn-again", "cat f && echo two >> f && wc -l < f")
		if r.exit.GetCode() != 0 || !strings.HasSuffix(strings.TrimSpace(r.stdout), "2") {
			t.Fatalf("round %d, second call:\n%s", i, r)
		}
		r = e.bash("turn-other", "echo x > g && cat "+e.workspace("turn-again")+"/f")
		if r.exit.GetCode() == 0 {
			t.Fatalf("round %d: another turn read this turn's file:\n%s", i, r)
		}
		resp, err := e.client.EndTurn(authCtx(context.Background(), testToken), mkEnd("turn-again"))
		if err != nil || !resp.Existed {
			t.Fatalf("end turn: %v %v", resp, err)
		}
	}
}
