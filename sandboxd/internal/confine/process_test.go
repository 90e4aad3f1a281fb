package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startShell starts sh -c script confined to a fresh workspace.
func startShell(t *testing.T, script string) *Process {
	t.Helper()
	return startShellTier(t, script, false)
}

// startShellTier is startShell, without Landlock when noLandlock (the
// gvisor tier's calls).
func startShellTier(t *testing.T, script string, noLandlock bool) *Process {
	t.Helper()
	p, err := startShellIn(t.TempDir(), script, noLandlock)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startShellIn is startShellTier with the workspace ws, returning its
// error: for goroutines other than the test's, which must not call
// t.Fatal.
func startShellIn(ws, script string, noLandlock bool) (*Process, error) {
	filter, err := BuildFilter()
	if err != nil {
		return nil, err
	}
	var ro []string
	for _, d := range []string{"/usr", "/bin", "/lib", "/lib64", "/etc"} {
		if _, err := os.Stat(d); err == nil {
			ro = append(ro, d)
		}
	}
	p, err := Start(Options{
		Spec: Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
			ReadOnly: ro, ReadWrite: []string{ws}, Devices: []string{"/dev/null"}, NoLandlock: noLandlock,
			Limits: Limits{NoFile: 64, NProc: 512, CPUSecs: 10}, Filter: filter},
		Dir: ws, Timeout: time.Minute, OutputCap: 1 << 20,
	})
	if err != nil {
		return nil, fmt.Errorf("starting %q: %w", script, err)
	}
	return p, nil
}

// TestNoLandlockKeepsSeccomp: a gvisor-tier call runs without Landlock
// (/proc and a file outside its grants are readable, where the confined
// tier refuses them) but still under the seccomp filter (mode 2 in /proc/self/status).
func TestNoLandlockKeepsSeccomp(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(secret, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// mknod is the filter's (EACCES) in both tiers: no FIFO where Landlock is absent.
	script := "mkfifo fifo 2>/dev/null && echo made-fifo; grep '^Seccomp:' /proc/self/status; cat " + secret
	for _, tc := range []struct {
		noLandlock bool
		want       string
		code       int
	}{
		// Landlock grants neither /proc nor the file.
		{false, "", 1},
		{true, "Seccomp:\t2\noutside\n", 0},
	} {
		p := startShellTier(t, script, tc.noLandlock)
		var out strings.Builder
		res := p.Wait(func(stream int, data []byte) error {
			if stream == Stdout {
				out.Write(data)
			}
			return nil
		})
		if res.Code != tc.code || out.String() != tc.want {
			t.Errorf("noLandlock %v: result %+v, stdout %q, want code %d and %q", tc.noLandlock, res, out.String(), tc.code, tc.want)
		}
	}
}

// The leader's exit is waited for on its pidfd, and Wait still reports it.
func TestCallIsWaitedForOnItsPidfd(t *testing.T) {
	p := startShell(t, "echo out; exit 3")
	if p.pidfd == nil {
		t.Fatal("the spawn gave no pidfd: a thread would block in waitid for every call")
	}
	var out strings.Builder
	res := p.Wait(func(stream int, data []byte) error {
		if stream == Stdout {
			out.Write(data)
		}
		return nil
	})
	if res.Code != 3 || out.String() != "out\n" {
		t.Fatalf("result %+v, stdout %q", res, out.String())
	}
	if p.pidfd.Fd() != ^uintptr(0) {
		t.Fatal("the pidfd is still open after Wait")
	}
}

// pollExit returns once the leader has exited, but leaves it unreaped, so
// its pid (the group id that killGroup signals) cannot be reused before
// Wait reaps it.
func TestPollExitLeavesTheLeaderUnreaped(t *testing.T) {
	child, err := os.StartProcess("/bin/sh", []string{"sh", "-c", "sleep 0.1"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = child.Wait() }()
	fd, err := unix.PidfdOpen(child.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Skipf("no pidfd_open: %v", err)
	}
	p := &Process{pid: child.Pid, pidfd: os.NewFile(uintptr(fd), "pidfd")}
	defer p.pidfd.Close()
	if !p.pollExit() {
		t.Fatal("pollExit could not wait on the pidfd")
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(child.Pid) + "/stat")
	if err != nil {
		t.Fatalf("the leader is gone (reaped?): %v", err)
	}
	s := string(stat)
	if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) == 0 || f[0] != "Z" {
		t.Fatalf("the leader is not an unreaped zombie: %s", s)
	}

	if (&Process{pid: child.Pid}).pollExit() {
		t.Fatal("pollExit without a pidfd claims to have waited")
	}
}

// Wait passes on every byte of both streams, each in order, and returns
// only once both pipes have closed.
func TestWaitPassesBothStreamsWhole(t *testing.T) {
	p := startShell(t, `i=0; while [ $i -lt 3000 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done`)
	var out, errs strings.Builder
	res := p.Wait(func(stream int, data []byte) error {
		switch stream {
		case Stdout:
			out.Write(data)
		case Stderr:
			errs.Write(data)
		default:
			t.Errorf("a chunk of stream %d", stream)
		}
		return nil
	})
	if res.Code != 0 || res.Truncated {
		t.Fatalf("result %+v", res)
	}
	var wantOut, wantErr strings.Builder
	for i := range 3000 {
		wantOut.WriteString("out" + strconv.Itoa(i) + "\n")
		wantErr.WriteString("err" + strconv.Itoa(i) + "\n")
	}
	if out.String() != wantOut.String() || errs.String() != wantErr.String() {
		t.Fatalf("stdout %d bytes (want %d), stderr %d bytes (want %d)", out.Len(), wantOut.Len(), errs.Len(), wantErr.Len())
	}
}
