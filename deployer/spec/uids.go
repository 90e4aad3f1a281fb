package spec

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
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
	// maxCallUID keeps every range below 2^31: larger uids are mishandled by
	// some tools (tar, NFS, signed 32-bit fields) and 2^32-1 is (uid_t)-1.
	maxCallUID = 1<<31 - 1
)

// UIDRange is a block of uids [First, First+Count); gid k is uid k.
type UIDRange struct {
	First, Count uint32
}

// String is the sandboxd --uid-range value, FIRST:COUNT.
func (r UIDRange) String() string { return fmt.Sprintf("%d:%d", r.First, r.Count) }

// Last is the highest uid in the range.
func (r UIDRange) Last() uint32 { return r.First + r.Count - 1 }

// Contains reports whether uid lies in the range.
func (r UIDRange) Contains(uid uint32) bool { return uid >= r.First && uid-r.First < r.Count }

// Overlaps reports whether the two ranges share a uid.
func (r UIDRange) Overlaps(o UIDRange) bool {
	return r.Count > 0 && o.Count > 0 && r.First <= o.Last() && o.First <= r.Last()
}

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
	// MinCallUID is the lowest uid a call range may hold: below it live
	// root, system users, the host's users and every service uid.
	MinCallUID = 65536
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

// ParseUIDRange reads FIRST:COUNT.
func ParseUIDRange(s string) (UIDRange, error) {
	a, b, ok := strings.Cut(s, ":")
	first, err1 := strconv.ParseUint(a, 10, 32)
	count, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return UIDRange{}, fmt.Errorf("%q: want FIRST:COUNT, for example 300000:4096", s)
	}
	return UIDRange{First: uint32(first), Count: uint32(count)}, checkCallRange(UIDRange{First: uint32(first), Count: uint32(count)})
}

func checkCallRange(r UIDRange) error {
	switch {
	case r.Count == 0:
		return fmt.Errorf("range %s is empty", r)
	case r.First < MinCallUID:
		return fmt.Errorf("range %s starts below %d, among system, login and service users", r, MinCallUID)
	case uint64(r.First)+uint64(r.Count)-1 > maxCallUID:
		return fmt.Errorf("range %s runs past %d", r, uint32(maxCallUID))
	}
	return nil
}

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
