package main

import (
	"testing"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/cgroup"
)

// The default caps: an owner half the container's pids limit, a turn as
// much, memory the agent's per turn and twice that per owner; flags win,
// and a turn never gets more than its owner.
func TestDefaultCaps(t *testing.T) {
	for _, c := range []struct {
		name        string
		caps        turnCaps
		container   int64
		turn, owner cgroup.Limits
	}{
		{"compose example", turnCaps{callMemory: 512 << 20}, 256, cgroup.Limits{Procs: 128, Memory: 512 << 20}, cgroup.Limits{Procs: 128, Memory: 1 << 30}},
		{"no container limit", turnCaps{}, 0, cgroup.Limits{Procs: 256}, cgroup.Limits{Procs: 256}},
		{"tiny container", turnCaps{}, 8, cgroup.Limits{Procs: 16}, cgroup.Limits{Procs: 16}},
		{"flags", turnCaps{turnProcs: 500, ownerProcs: 40, turnMemory: 3 << 30, ownerMemory: 1 << 30}, 256,
			cgroup.Limits{Procs: 40, Memory: 1 << 30}, cgroup.Limits{Procs: 40, Memory: 1 << 30}},
	} {
		turn, owner := c.caps.limits(c.container)
		if turn != c.turn || owner != c.owner {
			t.Errorf("%s: turn %+v owner %+v, want %+v %+v", c.name, turn, owner, c.turn, c.owner)
		}
	}
}
