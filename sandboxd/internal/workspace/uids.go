package workspace

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// UIDRange is the block of user ids a sandbox hands to turns: each live
// turn's calls run as a uid (and the equal gid) of their own, so process
// limits, file ownership, scheduling and signals are per turn. Ranges of
// different sandboxes must not overlap: uids are the kernel's, shared by
// every container of the host.
type UIDRange struct {
	First uint32
	Count uint32
}

// ParseUIDRange reads FIRST:COUNT.
func ParseUIDRange(s string) (UIDRange, error) {
	a, b, ok := strings.Cut(s, ":")
	first, err1 := strconv.ParseUint(a, 10, 32)
	count, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return UIDRange{}, fmt.Errorf("uid range %q: want FIRST:COUNT, for example 100000:4096", s)
	}
	r := UIDRange{First: uint32(first), Count: uint32(count)}
	return r, r.Check()
}

// Check refuses ranges that hold root, the usual system and login users, or
// wrap around.
func (r UIDRange) Check() error {
	switch {
	case r.Count == 0:
		return fmt.Errorf("uid range %d:%d is empty", r.First, r.Count)
	case r.First < MinCallUID:
		return fmt.Errorf("uid range %d:%d starts below %d, among system and login users", r.First, r.Count, MinCallUID)
	case uint64(r.First)+uint64(r.Count) > 1<<32-1:
		return fmt.Errorf("uid range %d:%d runs past the largest uid", r.First, r.Count)
	}
	return nil
}

// Contains reports whether uid is in the range.
func (r UIDRange) Contains(uid uint32) bool { return uid >= r.First && uid-r.First < r.Count }

// MinCallUID is the lowest uid a call may run as: below it live root,
// system users and the users of the host.
const MinCallUID = 65536

// uidPool hands out a range's uids first in, first out, so a released uid
// is reused as late as possible.
type uidPool struct {
	free []uint32
}

func newUIDPool(r UIDRange) *uidPool {
	p := &uidPool{free: make([]uint32, r.Count)}
	for i := range p.free {
		p.free[i] = r.First + uint32(i)
	}
	return p
}

func (p *uidPool) take() (uint32, bool) {
	if len(p.free) == 0 {
		return 0, false
	}
	uid := p.free[0]
	p.free = p.free[1:]
	return uid, true
}

func (p *uidPool) give(uid uint32) { p.free = append(p.free, uid) }

// processesOf lists the uids of r that own a process now (from /proc), so
// start-up can sweep what a previous sandboxd left running.
func processesOf(r UIDRange) map[uint32]bool {
	out := map[uint32]bool{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		info, err := os.Stat("/proc/" + p.Name())
		if err != nil {
			continue
		}
		if st, ok := statOwner(info); ok && r.Contains(st) {
			out[st] = true
		}
	}
	return out
}

func statOwner(info os.FileInfo) (uint32, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
