package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/cgroup"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
)

// turnCaps are the cap flags as given (0: derive).
type turnCaps struct {
	turnProcs, ownerProcs, turnMemory, ownerMemory, callMemory int64
}

// limits fills the defaults. An owner gets half the container's pids
// limit (so one owner at its cap leaves the other half to everyone else),
// and a turn as much; memory follows the agent's memory per turn and
// twice that per owner.
func (c turnCaps) limits(containerProcs int64) (turn, owner cgroup.Limits) {
	owner.Procs = c.ownerProcs
	if owner.Procs <= 0 {
		owner.Procs = 256
		if containerProcs > 0 {
			owner.Procs = max(containerProcs/2, 16)
		}
	}
	turn.Procs = c.turnProcs
	if turn.Procs <= 0 {
		turn.Procs = owner.Procs
	}
	turn.Procs = min(turn.Procs, owner.Procs)
	turn.Memory = c.turnMemory
	if turn.Memory <= 0 {
		turn.Memory = c.callMemory
	}
	owner.Memory = c.ownerMemory
	if owner.Memory <= 0 {
		owner.Memory = 2 * turn.Memory
	}
	if owner.Memory > 0 && turn.Memory > owner.Memory {
		turn.Memory = owner.Memory
	}
	return turn, owner
}

// openCgroups makes the sandbox's cgroup tree, named by its uid range and
// its own name (treeName), so a restart of the same sandbox finds what
// its predecessor left and another sandbox never shares it.
func openCgroups(mode, name string, uids workspace.UIDRange, c turnCaps, logf func(string, ...any)) (*cgroup.Tree, cgroup.Limits, cgroup.Limits, error) {
	turn, owner := c.limits(cgroup.OwnProcsMax())
	switch mode {
	case "off":
		return nil, turn, owner, nil
	case "auto", "required":
	default:
		return nil, turn, owner, fmt.Errorf("--cgroups %q: want auto, required or off", mode)
	}
	t, err := cgroup.Open(fmt.Sprintf("astralvessel-%d-%d-%s", uids.First, uids.Count, name))
	if errors.Is(err, cgroup.ErrUnavailable) && mode == "auto" {
		logf("no cgroup per turn (%v): a turn's processes are bounded by RLIMIT_NPROC of its uid and "+
			"its memory per process; ending a turn sweeps its uid", err)
		return nil, turn, owner, nil
	}
	if err != nil {
		return nil, turn, owner, fmt.Errorf("--cgroups %s: %w", mode, err)
	}
	return t, turn, owner, nil
}

// treeName names a sandbox's cgroup tree after its agent and scratch
// directory, which a restart keeps and no other sandbox of the host has
// (a digest: both may hold any character).
func treeName(agent, scratch string) string {
	abs, err := filepath.Abs(scratch)
	if err != nil {
		abs = scratch
	}
	sum := sha256.Sum256([]byte(agent + "\x00" + abs))
	return hex.EncodeToString(sum[:6])
}
