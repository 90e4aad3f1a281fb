package localstack

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 21 (9): a sandbox that dies is started again while the rest of the
// stack keeps running, stack.json follows its new pid, and a process the
// stack cannot do without stops everything with a reason.
func TestWaitRestartsASandboxAndStopsForTheRest(t *testing.T) {
	dir := t.TempDir()
	sleep := "/bin/sleep"
	if _, err := os.Stat(sleep); err != nil {
		sleep = "/usr/bin/sleep"
	}
	vessel, err := startProc(procSpec{name: "vessel", bin: sleep, args: []string{"1000"}, env: os.Environ(), logDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := startProc(procSpec{name: "sandbox-a", bin: sleep, args: []string{"0.2"}, env: os.Environ(), logDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var notes bytes.Buffer
	s := &Stack{StateDir: dir, procs: []*Proc{vessel, sb}, Notes: &notes}
	defer s.Stop()
	if err := s.writeInfo(); err != nil {
		t.Fatal(err)
	}
	first, _ := ReadInfo(dir)
	errc := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { errc <- s.Wait(ctx) }()
	// The sleep of 0.2 s exits again and again: five restarts, then Wait
	// gives up on the stack, naming the sandbox.
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "sandbox-a exited") || !strings.Contains(err.Error(), "after 5 restarts") {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not give up on a sandbox that keeps exiting")
	}
	if got := strings.Count(notes.String(), "starting it again"); got != MaxSandboxRestarts {
		t.Fatalf("%d restarts noted, want %d:\n%s", got, MaxSandboxRestarts, notes.String())
	}
	if exited, _ := vessel.Exited(); exited {
		t.Fatal("the vessel was stopped by a sandbox restart")
	}
	last, err := ReadInfo(dir)
	if err != nil || len(last.Processes) != 2 || last.Processes[1].Name != "sandbox-a" ||
		last.Processes[1].PID == first.Processes[1].PID || last.Processes[0].PID != vessel.Pid() ||
		last.Processes[1].Log != filepath.Join(dir, "sandbox-a.log") {
		t.Fatalf("stack.json processes: first %+v, last %+v (%v)", first.Processes, last.Processes, err)
	}
	// The vessel is not restarted: its exit stops the stack.
	vessel.stop(time.Second)
	s2 := &Stack{StateDir: dir, procs: []*Proc{vessel}, Notes: &notes}
	if err := s2.Wait(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot serve without it") {
		t.Fatalf("Wait after the vessel exited: %v", err)
	}
}
