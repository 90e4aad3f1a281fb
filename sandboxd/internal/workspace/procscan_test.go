package workspace

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
	"golang.org/x/sys/unix"
)

// startCall starts sh -c script as a confined call in a fresh workspace.
func startCall(t *testing.T, script string) (*confine.Process, error) {
	filter, err := confine.BuildFilter()
	if err != nil {
		return nil, err
	}
	var ro []string
	for _, d := range []string{"/usr", "/bin", "/lib", "/lib64", "/etc"} {
		if _, err := os.Stat(d); err == nil {
			ro = append(ro, d)
		}
	}
	ws := t.TempDir()
	return confine.Start(confine.Options{
		Spec: confine.Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
			ReadOnly: ro, ReadWrite: []string{ws}, Devices: []string{"/dev/null"},
			Limits: confine.Limits{NoFile: 64, NProc: 64, CPUSecs: 10}, Filter: filter},
		Dir: ws, Timeout: time.Minute, OutputCap: 1 << 20,
	})
}

// When the scan cannot give its thread sandboxd's fs uid back, the thread
// is dropped; a call started on that thread before (here by a hook on the
// scan's thread) keeps running: calls are never forked on it, so the
// thread's end sends no parent-death signal to them.
func TestCallSurvivesTheDroppedScanThread(t *testing.T) {
	testenv.Require(t, os.Geteuid() == 0, "root (setfsuid, confined calls)")
	_, err := unix.SetfsuidRetUid(-1)
	testenv.Require(t, err == nil, "setfsuid (gVisor has none, and then the scan never changes its thread)")
	// A process group for the scan to visit, so that it takes the turn's ids.
	grp := exec.Command("sleep", "30")
	grp.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := grp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = grp.Process.Kill()
		_ = grp.Wait()
	}()
	turn := &Turn{ID: "t", Dir: t.TempDir(), UID: 65534, GID: 65534,
		calls: map[*Call]struct{}{{Pgid: grp.Process.Pid}: {}}}

	oldRestore := restoreIDs
	restoreIDs = func() {} // the ids stay the turn's: the thread must be dropped
	defer func() { restoreIDs = oldRestore; onScanThread = nil }()

	var p *confine.Process
	for try := 0; p == nil; try++ {
		if try == 20 {
			t.Fatal("the scan ran on the main thread every time (which the runtime never ends)")
		}
		var err error
		onScanThread = func() {
			if unix.Gettid() == os.Getpid() {
				return // never terminated by the runtime: proves nothing
			}
			p, err = startCall(t, "sleep 0.5; echo alive")
		}
		_, counts := openFiles([]*Turn{turn}, map[*Turn]map[fileID]bool{})
		if err != nil {
			t.Fatalf("starting the call on the scan's thread: %v", err)
		}
		if counts[grp.Process.Pid] != 1 {
			t.Fatalf("the scan counted %v, want the sleep's group", counts)
		}
		runtime.Gosched()
	}
	var out strings.Builder
	res := p.Wait(func(stream int, data []byte) error {
		if stream == confine.Stdout {
			out.Write(data)
		}
		return nil
	})
	if res.Code != 0 || res.Signal != "" || out.String() != "alive\n" {
		t.Fatalf("the call died with the scan's dropped thread: result %+v, stdout %q", res, out.String())
	}
}
