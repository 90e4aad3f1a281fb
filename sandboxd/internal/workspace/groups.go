package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/sandboxd/internal/cgroup"
)

// startClean makes sure the range is this sandboxd's alone before any
// turn runs: what a previous sandboxd of the same range left in its
// cgroup tree is provably that sandboxd's and is killed; any other
// process running as a uid of the range was started by someone else (another
// deployment with an overlapping range, a user), and sandboxd refuses to
// start rather than kill or share with it.
func startClean(cfg Config) error {
	if cfg.Cgroups != nil {
		if err := cfg.Cgroups.Kill(); err != nil {
			return fmt.Errorf("stopping what a previous sandboxd of this range left in %s: %w", cfg.Cgroups.Dirs()[0], err)
		}
	}
	procs := ProcsIn(cfg.UIDs)
	if len(procs) == 0 {
		return nil
	}
	names := make([]string, 0, 3)
	for _, p := range procs[:min(len(procs), 3)] {
		names = append(names, p.String())
	}
	return fmt.Errorf("refusing to start: %d processes this sandboxd did not start already run as uids of "+
		"--uid-range %d:%d (%s): another deployment or user on this host uses these uids; stop them, or give "+
		"this sandbox another range ([call_uids] in deployment.toml)", len(procs), cfg.UIDs.First, cfg.UIDs.Count,
		strings.Join(names, "; "))
}

// ownerDir names an owner's cgroup; the owner name itself is the
// caller's, so only a digest of it reaches the file system.
func ownerDir(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return "o-" + hex.EncodeToString(sum[:8])
}

// joinGroups makes the turn's cgroup beneath its owner's; m.mu is held.
func (m *Manager) joinGroups(t *Turn) error {
	if m.cfg.Cgroups == nil || t.UID < 0 {
		return nil
	}
	og := m.owners[t.Owner]
	if og == nil {
		g, err := m.cfg.Cgroups.Group(ownerDir(t.Owner), m.cfg.OwnerCaps)
		if err != nil {
			return fmt.Errorf("making the owner's cgroup: %w", err)
		}
		og = &ownerGroup{g: g}
		m.owners[t.Owner] = og
	}
	og.turns++
	g, err := og.g.Child("t-"+strconv.Itoa(t.UID), m.cfg.TurnCaps)
	if err != nil {
		return fmt.Errorf("making the turn's cgroup: %w", err)
	}
	t.mu.Lock()
	t.cg = g
	t.mu.Unlock()
	return nil
}

// leaveGroups removes the turn's (killed) cgroup and its owner's once
// the owner has no turn left; m.mu is held.
func (m *Manager) leaveGroups(t *Turn) {
	if m.cfg.Cgroups == nil || t.UID < 0 {
		return
	}
	t.mu.Lock()
	cg := t.cg
	t.cg = nil
	t.mu.Unlock()
	if cg != nil && cg.Remove() != nil {
		// A call that joined while the turn ended: kill it, then remove.
		_ = cg.Kill()
		_ = cg.Remove()
	}
	og := m.owners[t.Owner]
	if og == nil {
		return
	}
	if og.turns--; og.turns <= 0 {
		_ = og.g.Remove()
		delete(m.owners, t.Owner)
	}
}

// OpenCgroup opens the turn's cgroup.procs files for a call to join
// (none without cgroups); the caller closes them after the start.
func (t *Turn) OpenCgroup() ([]*os.File, error) {
	t.mu.Lock()
	cg := t.cg
	gone := t.gone
	t.mu.Unlock()
	if cg == nil {
		return nil, nil
	}
	if gone {
		return nil, errors.New("turn has ended")
	}
	return cg.OpenJoin()
}

// AtProcCap says whose process cap a new call of t would exceed: "turn",
// "owner" or "" (none, or no cgroups).
func (m *Manager) AtProcCap(t *Turn) string {
	t.mu.Lock()
	cg := t.cg
	t.mu.Unlock()
	if cg == nil {
		// No cgroup: the owner's count from the last check.
		m.mu.Lock()
		n := m.ownerProcs[t.Owner]
		m.mu.Unlock()
		if t.UID >= 0 && m.cfg.OwnerCaps.Procs > 0 && int64(n) >= m.cfg.OwnerCaps.Procs {
			return "owner"
		}
		return ""
	}
	if cg.AtProcCap() {
		return "turn"
	}
	m.mu.Lock()
	og := m.owners[t.Owner]
	m.mu.Unlock()
	if og != nil && og.g.AtProcCap() {
		return "owner"
	}
	return ""
}

// Caps are the turn's and owner's process and memory caps.
func (m *Manager) Caps() (turn, owner cgroup.Limits, on bool) {
	return m.cfg.TurnCaps, m.cfg.OwnerCaps, m.cfg.Cgroups != nil
}

// callCount is a running call and the processes its group held at a check.
type callCount struct {
	c *Call
	n int
}

// callCounts lists t's running calls with their process counts.
func (t *Turn) callCounts(counts map[int]int) []callCount {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]callCount, 0, len(t.calls))
	for c := range t.calls {
		if c.Pgid > 0 {
			out = append(out, callCount{c, counts[c.Pgid]})
		}
	}
	return out
}

// checkOwnerProcs holds each owner to its process cap where no cgroup
// does (a container without a delegated one): from this check's counts,
// an owner over its cap has its calls holding the most processes stopped
// (process_limit) until it is back within it, and its next calls are
// refused while it stays at it (AtProcCap).
func (m *Manager) checkOwnerProcs(turns []*Turn, counts map[int]int, logf func(string, ...any)) {
	limit := m.cfg.OwnerCaps.Procs
	if m.cfg.Cgroups != nil || limit <= 0 {
		return
	}
	per := map[string]int{}
	calls := map[string][]callCount{}
	for _, t := range turns {
		for _, cc := range t.callCounts(counts) {
			per[t.Owner] += cc.n
			calls[t.Owner] = append(calls[t.Owner], cc)
		}
	}
	m.mu.Lock()
	m.ownerProcs = per
	m.mu.Unlock()
	for owner, n := range per {
		if int64(n) <= limit {
			continue
		}
		cs := calls[owner]
		sort.Slice(cs, func(i, j int) bool { return cs[i].n > cs[j].n })
		for _, cc := range cs {
			if int64(n) <= limit {
				break
			}
			logf("owner %q runs %d processes, over its cap of %d: stopping a call of %d", owner, n, limit, cc.n)
			cc.c.kill(ReasonProcessLimit)
			n -= cc.n
		}
	}
}
