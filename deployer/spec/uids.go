package spec

import (
	"fmt"
	"hash/fnv"

	"github.com/astraldeep/astralvessel-go/runtime/uids"
)

// Call identities. sandboxd runs each turn's tool calls under a uid (and
// gid, the same number) of its own, taken from the range its agent is
// given. uids are global to the kernel (no user namespace is used), and the
// kernel counts RLIMIT_NPROC per uid across every container, so two agents
// sharing a uid could exhaust each other's process limit and see each
// other's files by ownership. Each agent therefore gets a disjoint block,
// above every service uid (the Compose services use 61001..61010) and the
// traditional system and user ranges.
const (
	// CallUIDBase is the first uid of agent 0's range.
	CallUIDBase = 100000
	// CallUIDsPerAgent is the size of every agent's range; it bounds the
	// turns one sandbox can hold at once.
	CallUIDsPerAgent = 4096
	// maxCallUID keeps every range below 2^31 (runtime/uids).
	maxCallUID = uids.MaxCallUID
)

// UIDRange is a block of uids [First, First+Count); gid k is uid k. It is
// runtime/uids' type, so sandboxd's --uid-range and call_uids accept the
// same ranges.
type UIDRange = uids.UIDRange

// CallUIDRange is the uid range of the agent at position index (0-based)
// in deployment.toml's [[agents]]: FIRST = 100000 + 4096*index, COUNT =
// 4096. The Compose generator and both local stack launchers pass it to the
// agent's sandboxd as --uid-range, so every sandbox on a host gets its own
// block. It fails for a negative index or one whose range would pass 2^31.
func CallUIDRange(index int) (UIDRange, error) {
	if index < 0 || int64(index) > (maxCallUID-CallUIDBase+1)/CallUIDsPerAgent-1 {
		return UIDRange{}, fmt.Errorf("call uid range: agent index %d out of range (0 to %d)",
			index, (maxCallUID-CallUIDBase+1)/CallUIDsPerAgent-1)
	}
	return UIDRange{First: uint32(CallUIDBase + CallUIDsPerAgent*index), Count: CallUIDsPerAgent}, nil
}

// CallUIDs is the [call_uids] table: where this deployment's call uids
// start and how many each agent gets. Agent i gets [First + i*Count,
// First + (i+1)*Count) unless its [agents.sandbox] call_uids names a
// range of its own.
type CallUIDs struct {
	// First is the first uid of agent 0; 0 derives it from vessel.project
	// (ProjectCallUIDBase), so two deployments with different projects get
	// different blocks without anyone choosing.
	First uint32 `toml:"first"`
	// Count is each agent's range size (default CallUIDsPerAgent).
	Count uint32 `toml:"count"`
}

// Project blocks: each project's agents share a block of
// projectBlockAgents*CallUIDsPerAgent uids, picked by a digest of the
// project name among projectBlocks blocks (all below 2^31).
const (
	projectBlockAgents = 64
	projectBlockUIDs   = projectBlockAgents * CallUIDsPerAgent
	projectBlocks      = 8000
	// MinCallUID is the lowest uid a call range may hold (runtime/uids).
	MinCallUID = uids.MinCallUID
)

// ProjectCallUIDBase is the default first call uid of a project: a block
// chosen by a digest of the name. Two projects land on the same block with
// a chance of 1 in 8000; sandboxd's host-wide reservation then refuses the
// second to start and says so, and [call_uids] first settles it.
func ProjectCallUIDBase(project string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(project))
	return uint32(projectBlockUIDs * (1 + uint64(h.Sum32())%projectBlocks))
}

// ParseUIDRange reads FIRST:COUNT (runtime/uids.Parse).
func ParseUIDRange(s string) (UIDRange, error) { return uids.Parse(s) }

func checkCallRange(r UIDRange) error { return r.Check() }

// callUIDs resolves every agent's range (Sandbox.UIDs) and refuses
// ranges that overlap within the file.
func (v *validator) callUIDs() {
	c, cu := v.c, &v.d.CallUIDs
	if cu.Count == 0 {
		if c.set("call_uids.count") {
			c.add("call_uids.count", "must be more than 0")
		}
		cu.Count = CallUIDsPerAgent
	}
	if cu.First == 0 {
		cu.First = ProjectCallUIDBase(v.d.Vessel.Project)
	}
	if err := checkCallRange(UIDRange{First: cu.First, Count: cu.Count}); err != nil {
		c.add("call_uids.first", "%v", err)
		return
	}
	for i := range v.d.Agents {
		a := &v.d.Agents[i]
		f := fmt.Sprintf("agents[%d].sandbox.call_uids", i)
		if a.Sandbox.CallUIDs != "" {
			r, err := ParseUIDRange(a.Sandbox.CallUIDs)
			if err != nil {
				c.add(f, "%v", err)
				continue
			}
			a.Sandbox.UIDs = r
		} else {
			r := UIDRange{First: cu.First + uint32(i)*cu.Count, Count: cu.Count}
			if err := checkCallRange(r); err != nil || uint64(cu.First)+uint64(i+1)*uint64(cu.Count) > maxCallUID+1 {
				c.add("call_uids", "agent %d's range would run past %d: lower call_uids.first or count", i, uint32(maxCallUID))
				continue
			}
			a.Sandbox.UIDs = r
		}
		for j := range i {
			o := v.d.Agents[j].Sandbox.UIDs
			if o.Count > 0 && a.Sandbox.UIDs.Overlaps(o) {
				c.add(f, "range %s overlaps agent %q's %s: every sandbox needs uids of its own", a.Sandbox.UIDs, v.d.Agents[j].ID, o)
			}
		}
	}
}
