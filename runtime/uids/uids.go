// Package uids is the call uid range both the deployer (deployment.toml's
// call_uids) and sandboxd (--uid-range) read, so the two accept the same
// ranges.
package uids

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	// MinCallUID is the lowest uid a call may run as: below it live root,
	// system users, the host's login users and every service uid.
	MinCallUID = 65536
	// MaxCallUID keeps every range below 2^31: larger uids are mishandled
	// by some tools (tar, NFS, signed 32-bit fields) and 2^32-1 is
	// (uid_t)-1.
	MaxCallUID = 1<<31 - 1
)

// UIDRange is a block of uids [First, First+Count); gid k is uid k.
type UIDRange struct {
	First, Count uint32
}

// String is the FIRST:COUNT form Parse reads.
func (r UIDRange) String() string { return fmt.Sprintf("%d:%d", r.First, r.Count) }

// Last is the highest uid in the range.
func (r UIDRange) Last() uint32 { return r.First + r.Count - 1 }

// Contains reports whether uid lies in the range.
func (r UIDRange) Contains(uid uint32) bool { return uid >= r.First && uid-r.First < r.Count }

// Overlaps reports whether the two ranges share a uid.
func (r UIDRange) Overlaps(o UIDRange) bool {
	return r.Count > 0 && o.Count > 0 && r.First <= o.Last() && o.First <= r.Last()
}

// Check refuses empty ranges, ranges that hold uids below MinCallUID, and
// ranges that run past MaxCallUID.
func (r UIDRange) Check() error {
	switch {
	case r.Count == 0:
		return fmt.Errorf("uid range %s is empty", r)
	case r.First < MinCallUID:
		return fmt.Errorf("uid range %s starts below %d, among system, login and service users", r, MinCallUID)
	case uint64(r.First)+uint64(r.Count)-1 > MaxCallUID:
		return fmt.Errorf("uid range %s runs past %d", r, uint32(MaxCallUID))
	}
	return nil
}

// Parse reads FIRST:COUNT and checks the range.
func Parse(s string) (UIDRange, error) {
	a, b, ok := strings.Cut(s, ":")
	first, err1 := strconv.ParseUint(a, 10, 32)
	count, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return UIDRange{}, fmt.Errorf("uid range %q: want FIRST:COUNT, for example 300000:4096", s)
	}
	r := UIDRange{First: uint32(first), Count: uint32(count)}
	return r, r.Check()
}
