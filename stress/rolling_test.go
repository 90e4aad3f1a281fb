package main

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/stress/internal/load"
	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// Issue 21 (2): a rolling restart of one replica of two loses no turn that
// could finish. SIGTERM reaches replica A while three turns stream on it:
// they finish within the grace period, a new turn is served by B meanwhile,
// and A exits cleanly; B reads every turn as completed.
func TestLocalStackRollingRestartLosesNoTurn(t *testing.T) {
	ctx, st, onA, onB := twoReplicas(t, "", "rolling-user")

	// Three turns of about 3 s stream on A.
	const n = 3
	ids := make([]string, n)
	states := make([]string, n)
	var started, ended sync.WaitGroup
	for i := range n {
		started.Add(1)
		ended.Add(1)
		go func() {
			defer ended.Done()
			once := sync.OnceFunc(started.Done)
			defer once()
			stream := onA.Turn(ctx, client.TurnRequest{Text: load.SlowTurnText})
			for ev, err := range stream.Events() {
				if err != nil {
					t.Errorf("turn %d on A: %v", i, err)
					return
				}
				if _, ok := ev.(client.TextDelta); ok && stream.TaskID() != "" {
					ids[i] = stream.TaskID()
					once()
				}
			}
			states[i] = stream.Result().State
		}()
	}
	started.Wait()

	// A is asked to stop, as a rolling restart does.
	if err := syscall.Kill(st.Vessels[0].Pid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// B serves a new turn meanwhile.
	res, err := onB.Ask(ctx, client.TurnRequest{Text: "#script:load a turn on B"})
	if err != nil || res.State != string(a2a.TaskStateCompleted) {
		t.Fatalf("a turn on B while A drains: %+v %v", res, err)
	}
	ended.Wait()
	for i := range n {
		if states[i] != string(a2a.TaskStateCompleted) {
			t.Errorf("turn %d on A ended %q, want completed (a turn that could finish was lost)", i, states[i])
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		exited, err := st.Vessels[0].Exited()
		if exited {
			if err != nil && !strings.Contains(err.Error(), "exit status 0") {
				t.Fatalf("A did not exit cleanly: %v\n%s", err, st.LogTail(st.Vessels[0], 2000))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A did not exit after its turns drained")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i, id := range ids {
		got, err := onB.Get(ctx, id)
		if err != nil || got.State != string(a2a.TaskStateCompleted) {
			t.Errorf("turn %d read on B: %+v %v", i, got, err)
		}
	}
}
