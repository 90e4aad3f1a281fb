package workspace

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/uids"
)

// UIDRange is the block of user ids a sandbox hands to turns: each live
// turn's calls run as a uid (and the equal gid) of their own, so process
// limits, file ownership, scheduling and signals are per turn. Ranges of
// different sandboxes must not overlap: uids are the kernel's, shared by
// every container of the host. It is runtime/uids' type, so --uid-range
// and the deployer's call_uids accept the same ranges.
type UIDRange = uids.UIDRange

// ParseUIDRange reads FIRST:COUNT (runtime/uids.Parse).
func ParseUIDRange(s string) (UIDRange, error) { return uids.Parse(s) }

// MinCallUID is the lowest uid a call may run as (runtime/uids).
const MinCallUID = uids.MinCallUID

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

// Proc is a process found running as a uid of a range.
type Proc struct {
	PID  int
	UID  uint32
	Comm string
}

// String names the process for an error message.
func (p Proc) String() string { return fmt.Sprintf("pid %d (%s) as uid %d", p.PID, p.Comm, p.UID) }

// ProcsIn lists the live processes (zombies aside) with any of their real,
// effective, saved or file-system uids in r, read from /proc.
func ProcsIn(r UIDRange) []Proc {
	var out []Proc
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + p.Name() + "/status")
		if err != nil {
			continue
		}
		var comm string
		var uids []string
		zombie := false
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				comm = strings.TrimSpace(v)
			} else if v, ok := strings.CutPrefix(line, "State:"); ok {
				zombie = strings.HasPrefix(strings.TrimSpace(v), "Z")
			} else if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				uids = strings.Fields(v)
			}
		}
		if zombie {
			continue
		}
		for _, s := range uids {
			if u, err := strconv.ParseUint(s, 10, 32); err == nil && r.Contains(uint32(u)) {
				out = append(out, Proc{PID: pid, UID: uint32(u), Comm: comm})
				break
			}
		}
	}
	return out
}
