package server_test

// Isolation between calls (issue 13): no call may affect another turn,
// another user, another agent's sandbox or sandboxd itself. Each test
// names the finding it shows (docs/security.md maps them).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// requireRoot: the uid per turn needs a root sandboxd, as deployed.
func requireRoot(t *testing.T) {
	t.Helper()
	testenv.Require(t, os.Geteuid() == 0, "needs root: a uid per turn")
}

// niceOf reads a process's nice value (field 19 of /proc/pid/stat).
func niceOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTurnsRunAsUsersOfTheirOwn(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, envOpts{})
	a := strings.TrimSpace(e.bash("turn-a", "id -u; id -g").stdout)
	b := strings.TrimSpace(e.must(call{turn: "turn-b", owner: "app/bob", tool: "bash", args: jsonArgs("command", "id -u; id -g")}).stdout)
	again := strings.TrimSpace(e.bash("turn-a", "id -u; id -g").stdout)
	if a == b || a != again || strings.HasPrefix(a, "0\n") {
		t.Fatalf("turn-a ran as %q then %q, turn-b as %q: want one uid per turn", a, again, b)
	}
	if ua := e.turn("turn-a").UID; a != fmt.Sprintf("%d\n%d", ua, ua) {
		t.Fatalf("turn-a ran as %q, its uid is %d", a, ua)
	}
}

// S2: a call cannot lock the sandbox for everybody by changing the mode of
// the scratch root or of its own workspace's parent.
func TestCallCannotLockTheScratchRoot(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, envOpts{})
	r := e.bash("turn-s2", `chmod 000 "$(dirname "$TMPDIR")"; echo "home=$?"; chmod 000 "$(dirname "$(dirname "$TMPDIR")")"; echo "root=$?"`)
	if !strings.Contains(r.stdout, "home=1") || !strings.Contains(r.stdout, "root=1") {
		t.Fatalf("a call changed the mode of the directories above its workspace:\n%s", r)
	}
	if st, err := os.Stat(e.scratch); err != nil || st.Mode().Perm() != 0o711 {
		t.Fatalf("scratch root mode %v (%v)", st.Mode(), err)
	}
	if r := e.must(call{turn: "turn-next", owner: "app/bob", tool: "bash", args: jsonArgs("command", "echo fine > f; cat f")}); r.stdout != "fine\n" {
		t.Fatalf("the next turn failed:\n%s", r)
	}
}

// S3: a call can renice, pin or reschedule only its own turn: not another
// turn's call, not sandboxd.
func TestCallCannotRescheduleOthers(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, envOpts{})
	pid, stop := sibling(t, e)
	defer stop()
	self := os.Getpid() // sandboxd is this test process
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	sibNice, selfNice := niceOf(t, pid), niceOf(t, self)
	other, me := strconv.Itoa(pid), strconv.Itoa(self)
	for _, c := range []struct{ action, arg string }{
		{"renice_pid", other}, {"renice_pid", me},
		{"renice_user", strconv.Itoa(e.turn("turn-sibling").UID)}, {"renice_user", "65534"},
		{"pin", other}, {"pin", me}, {"sched_other", other}, {"sched_other", me},
		{"ioprio_other", other}, {"ioprio_other", me}, {"prlimit_other", me},
	} {
		t.Run(c.action+" "+c.arg, func(t *testing.T) { assertBlocked(t, e.probe("turn-s3", c.action, c.arg), "") })
	}
	// What stays allowed reaches only the call's own turn.
	if r := e.probe("turn-s3", "renice_own_user", ""); !strings.Contains(r.stdout, "ALLOWED") {
		t.Fatalf("renicing its own user failed:\n%s", r)
	}
	var after unix.CPUSet
	_ = unix.SchedGetaffinity(0, &after)
	if niceOf(t, pid) != sibNice || niceOf(t, self) != selfNice || after != before {
		t.Fatalf("another turn's call or sandboxd was rescheduled: nice %d→%d, %d→%d, affinity %v→%v",
			sibNice, niceOf(t, pid), selfNice, niceOf(t, self), before.Count(), after.Count())
	}
}

// S4: a turn that holds as many processes as its limit allows does not
// keep another turn (of another user) from forking.
func TestProcessLimitIsPerTurn(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, envOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	held := make(chan result, 1)
	go func() {
		// 256 is the harness's RLIMIT_NPROC: fill it.
		r, _ := e.run(ctx, call{turn: "turn-hog", tool: "bash", args: jsonArgs("command",
			"for i in $(seq 300); do sleep 30 & done 2>/dev/null; echo full; wait"), timeoutMs: 20000})
		held <- r
	}()
	deadline := time.Now().Add(20 * time.Second)
	for countUserProcs(e.turn("turn-hog").UID) < 250 {
		if time.Now().After(deadline) {
			t.Fatalf("the hog holds only %d processes", countUserProcs(e.turn("turn-hog").UID))
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := e.must(call{turn: "turn-other", owner: "app/bob", tool: "bash", args: jsonArgs("command", "(echo forked) & wait")})
	if r.stdout != "forked\n" {
		t.Fatalf("another turn could not fork while one turn held its process limit:\n%s", r)
	}
	if _, err := e.client.EndTurn(authCtx(ctx, testToken), mkEnd("turn-hog")); err != nil {
		t.Fatal(err)
	}
	<-held
}

// S5: a call that knows another turn's workspace path learns nothing of it
// and cannot change it.
func TestCallCannotReachAnotherTurnsWorkspace(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, envOpts{})
	e.bash("turn-victim", "echo secret > f")
	ws := e.workspace("turn-victim")
	for _, c := range []struct{ action, arg, errno string }{
		{"stat", ws, "13"}, {"stat", filepath.Join(ws, "f"), "13"}, {"chmod000", ws, "13"},
		{"chmod000", filepath.Dir(ws), "1"}, {"listdir", filepath.Dir(ws), "13"}, {"listdir", e.scratch, "13"},
	} {
		t.Run(c.action+" "+c.arg, func(t *testing.T) { assertBlocked(t, e.probe("turn-attacker", c.action, c.arg), c.errno) })
	}
	if strings.Contains(ws, "turn-victim") {
		t.Fatalf("the workspace path %s names its turn", ws)
	}
	if r := e.bash("turn-victim", "cat f"); r.stdout != "secret\n" {
		t.Fatalf("the victim lost its workspace:\n%s", r)
	}
}

// S1: blocks allocated without growing a file's size count against the
// turn's disk limit: the call is stopped and the workspace emptied.
func TestAllocatedBlocksCount(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.bash("turn-falloc", `: > "$TMPDIR/x" && fallocate --keep-size -l 64M "$TMPDIR/x" && echo allocated; sleep 5`)
	if !strings.Contains(r.stdout, "allocated") {
		t.Fatalf("fallocate failed (the test needs a filesystem that supports it):\n%s", r)
	}
	if r.exit.Stopped != "disk_limit" {
		t.Fatalf("want disk_limit: %v", r.exit)
	}
	if entries, _ := os.ReadDir(e.workspace("turn-falloc")); len(entries) != 0 {
		t.Fatalf("workspace not emptied: %d entries", len(entries))
	}
}

// S1: each small file costs what it spends (a block and an inode), so a
// flood of one-byte files is stopped.
func TestSmallFilesCostTheirBlocks(t *testing.T) {
	e := newEnv(t, envOpts{})
	// 2000 one-byte files: 2 MB charged by size plus 1 KiB each, about
	// 10 MB in blocks, over the harness's 6 MiB turn limit.
	r := e.bash("turn-small", `python3 -c '
for i in range(2000):
    open("f%d" % i, "w").write("x")
print("made", flush=True)
import time; time.sleep(5)'`)
	if r.exit.Stopped != "disk_limit" {
		t.Fatalf("want disk_limit:\n%s", r)
	}
}

// S1: an inode flood in a chain of nested directories longer than any path
// is stopped within a check, and removed.
func TestDeepDirectoryChainIsStopped(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.bash("turn-deep", `python3 -c '
import os
for i in range(3000):
    os.mkdir("dd"); os.chdir("dd")
print("made", flush=True)
import time; time.sleep(5)'`)
	if r.exit.Stopped != "disk_limit" {
		t.Fatalf("want disk_limit:\n%s", r)
	}
	if entries, _ := os.ReadDir(e.workspace("turn-deep")); len(entries) != 0 {
		t.Fatalf("workspace not emptied: %d entries", len(entries))
	}
}

// W2: the agent's memory bounds each process of a call.
func TestCallMemoryLimit(t *testing.T) {
	e := newEnv(t, envOpts{callMemory: 256 << 20})
	if r := e.probe("turn-mem", "alloc", strconv.Itoa(512<<20)); !strings.Contains(r.stdout, "BLOCKED") {
		t.Fatalf("a call allocated 512 MiB under a 256 MiB limit:\n%s", r)
	}
	if r := e.probe("turn-mem", "alloc", strconv.Itoa(32<<20)); !strings.Contains(r.stdout, "ALLOWED") {
		t.Fatalf("a call could not allocate 32 MiB under a 256 MiB limit:\n%s", r)
	}
}

// W5: a call learns nothing of the machine's processes from sysinfo.
func TestNoSysinfo(t *testing.T) {
	e := newEnv(t, envOpts{})
	assertBlocked(t, e.probe("turn-sysinfo", "sysinfo", ""), "1")
}

// Nothing a turn started outlives it: EndTurn sweeps its uid, even a
// process that left the call's process group's reach by being reparented.
func TestEndTurnSweepsTheTurnsUser(t *testing.T) {
	requireRoot(t)
	e := newEnv(t, envOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		_, _ = e.run(ctx, call{turn: "turn-sweep", tool: "bash", args: jsonArgs("command", "(sleep 60 &); sleep 60")})
	}()
	deadline := time.Now().Add(10 * time.Second)
	uid := e.turn("turn-sweep").UID
	for countUserProcs(uid) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the call's processes did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := e.client.EndTurn(authCtx(ctx, testToken), mkEnd("turn-sweep")); err != nil {
		t.Fatal(err)
	}
	for i := 0; countUserProcs(uid) > 0; i++ {
		if i > 100 {
			t.Fatalf("%d processes of the ended turn's uid survived", countUserProcs(uid))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
