package spec

import "fmt"

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
