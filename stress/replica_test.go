package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/stress/internal/load"
	"github.com/astraldeep/astralvessel-go/stress/internal/stack"
	"github.com/astraldeep/astralvessel-go/vessel/client"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// TestLocalStackReplicaDeathFailsItsTasks kills a vessel replica in the middle of a
// turn and checks, through the other replica, that the turn ends failed and
// that a follower's stream ends instead of waiting forever.
func TestLocalStackReplicaDeathFailsItsTasks(t *testing.T) {
	// A short lease so the test does not wait the default 15 s.
	ctx, st, onA, onB := twoReplicas(t, "vessel_lease_ttl=3s", "crash-user")

	// A turn streams on replica A.
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	stream := onA.Turn(streamCtx, client.TurnRequest{Text: load.SlowTurnText})
	var id string
	for ev, err := range stream.Events() {
		if err != nil {
			t.Fatalf("turn on A: %v", err)
		}
		if _, ok := ev.(client.TextDelta); ok && stream.TaskID() != "" {
			id = stream.TaskID()
			break
		}
	}
	if id == "" {
		t.Fatal("the turn on A streamed no text")
	}

	// B follows it.
	followed := make(chan a2a.TaskState, 1)
	firstFrame := make(chan struct{})
	go func() {
		var last a2a.TaskState
		seen := false
		for ev, err := range onB.A2A().SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(id)}) {
			if err != nil {
				t.Logf("subscription on B: %v", err)
				break
			}
			if task, ok := ev.(*a2a.Task); ok {
				last = task.Status.State
				if !seen {
					seen = true
					close(firstFrame)
				}
			}
		}
		followed <- last
	}()
	select {
	case <-firstFrame:
	case st := <-followed:
		t.Fatalf("subscription on B ended at once, in %q", st)
	case <-ctx.Done():
		t.Fatal("no snapshot from SubscribeToTask on B")
	}

	// A dies mid-turn.
	st.Vessels[0].Kill()

	select {
	case state := <-followed:
		if state != a2a.TaskStateFailed {
			t.Fatalf("subscription on B ended in %s, want failed", state)
		}
	case <-ctx.Done():
		t.Fatal("the subscription on B never ended after A died")
	}
	res, err := onB.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != string(a2a.TaskStateFailed) {
		t.Fatalf("task after A died: %s, want failed", res.State)
	}
}

// twoReplicas starts the stack with two vessel replicas on PostgreSQL (the
// DSN gets the extra vessel_* setting, if any) and a client of each for
// user; it skips without VESSEL_E2E_LOCAL=1 and, outside CI, without
// VESSEL_TEST_POSTGRES. The context only bounds a broken run: nothing
// asserts on elapsed time.
func twoReplicas(t *testing.T, setting, user string, opts ...func(*stack.Config)) (context.Context, *stack.Stack, *client.Client, *client.Client) {
	t.Helper()
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run against the local stack")
	}
	dsn := os.Getenv("VESSEL_TEST_POSTGRES")
	testenv.Require(t, dsn != "", "VESSEL_TEST_POSTGRES not set; run deploy/postgres-test.sh to get a DSN")
	if setting != "" {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		dsn += sep + setting
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir, err := os.MkdirTemp("", "stress-replicas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg := stack.Config{
		Dir: dir, BinDir: testBin(t), Replicas: 2, Postgres: dsn,
		Script: load.Script(200), Log: testLog{t},
	}
	for _, o := range opts {
		o(&cfg)
	}
	st, err := stack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)
	mk := func(i int) *client.Client {
		c, err := client.New(st.Endpoint[i], stack.AgentID, client.Options{AppKey: st.AppKey, User: user})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return ctx, st, mk(0), mk(1)
}
