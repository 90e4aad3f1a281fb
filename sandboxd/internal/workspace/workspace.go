// Package workspace keeps one scratch directory per turn, shared by the
// turn's calls, and enforces the turn and user disk limits on them.
package workspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/cgroup"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/confine"
)

// PerEntry is what each file or directory costs on top of its allocated
// blocks: its inode and name (about 1 KiB of kernel memory on a tmpfs).
const PerEntry = 1024

// DefaultInterval is how often usage is measured unless Config says
// otherwise: twice a second, as docs/sandbox.md promises.
const DefaultInterval = 500 * time.Millisecond

// Stop reasons of calls killed by the checks here.
const (
	ReasonDiskLimit    = "disk_limit"
	ReasonProcessLimit = "process_limit"
)

var (
	turnIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	// ErrOwner is returned when a turn is used by someone other than its owner.
	ErrOwner = errors.New("turn belongs to another owner")
)

// ValidTurnID reports whether id may name a turn.
func ValidTurnID(id string) bool {
	return turnIDPattern.MatchString(id) && strings.Trim(id, ".") != ""
}

// Config sets the manager's limits.
type Config struct {
	Scratch   string
	TurnLimit int64
	UserLimit int64
	// TTL is how long an idle turn lives if the vessel never ends it.
	TTL time.Duration
	// UIDs are the users turns run as, one each (sandboxd runs as root).
	// An empty range keeps sandboxd's own user for every call: only for
	// tests without root, as main refuses to start that way.
	UIDs UIDRange
	// Interval is how often usage is measured (DefaultInterval if unset).
	Interval time.Duration
	// CallProcs stops a call whose process group holds more processes
	// (0: no check). RLIMIT_NPROC is per turn (its uid); this keeps the
	// calls of one turn from stalling each other until a timeout.
	CallProcs int
	// Cgroups, when set, is the sandbox's cgroup tree: each owner gets a
	// group with OwnerCaps and each turn a group beneath it with TurnCaps,
	// and ending a turn kills its group. Nil: no cgroup (the turn's uid
	// is swept instead; it is the turn's alone, the range being reserved
	// host-wide).
	Cgroups   *cgroup.Tree
	TurnCaps  cgroup.Limits
	OwnerCaps cgroup.Limits
}

// Manager owns the turns of one sandbox.
type Manager struct {
	cfg   Config
	mu    sync.Mutex
	turns map[string]*Turn
	// uids is nil without a range.
	uids *uidPool
	// newTicker starts Run's clock; tests substitute one they drive.
	newTicker func(time.Duration) (<-chan time.Time, func())
	// owners are the owners' cgroups, with how many live turns use each.
	owners map[string]*ownerGroup
	// ownerProcs is each owner's process count at the last check, for
	// the owner cap where no cgroup holds it.
	ownerProcs map[string]int
	// fullAt is when a check last found the scratch full (Unix ns).
	fullAt atomic.Int64
}

type ownerGroup struct {
	g     *cgroup.Group
	turns int
}

// realTicker is a time.Ticker as a channel and its stop function.
func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// Turn is one turn's workspace.
type Turn struct {
	ID    string
	Owner string
	Dir   string
	// UID and GID are the turn's own user, -1 without a range.
	UID, GID int
	// home is Dir's parent, readable only by the turn's group, so another
	// turn cannot even stat the workspace knowing its path.
	home string

	// emptying is held while the disk check stops the calls and empties
	// the workspace, so a stopped call can wait for it.
	emptying sync.Mutex
	mu       sync.Mutex
	calls    map[*Call]struct{}
	lastUsed time.Time
	usage    int64
	// inodes is how many distinct inodes the last check found (files the
	// walk reached and open files already deleted).
	inodes int64
	seq    int
	// outFiles counts the outbox files kept so far in this turn.
	outFiles outputfiles.Tally
	gone     bool
	// shared is what the turn's calls share (their Landlock ruleset);
	// End closes it.
	shared io.Closer
	// spare is an outbox made ahead for the turn's next call.
	spare string
	// cg is the turn's cgroup (nil without Config.Cgroups).
	cg *cgroup.Group
}

// Call is one running call of a turn.
type Call struct {
	// Pgid is the call's process group, 0 until it has started.
	Pgid int
	kill func(reason string)
}

// New prepares the scratch directory, removing turns a previous run left.
func New(cfg Config) (*Manager, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 30 * time.Minute
	}
	abs, err := filepath.Abs(cfg.Scratch)
	if err != nil {
		return nil, fmt.Errorf("scratch path: %w", err)
	}
	cfg.Scratch = abs
	if err := os.MkdirAll(abs, 0o711); err != nil {
		return nil, fmt.Errorf("creating scratch %s: %w", abs, err)
	}
	// The scratch root belongs to sandboxd, searchable but not listable by
	// calls: a call owning it could lock every later turn out (chmod 000).
	if err := os.Chown(abs, os.Geteuid(), os.Getegid()); err != nil {
		return nil, fmt.Errorf("taking ownership of scratch %s: %w", abs, err)
	}
	if err := os.Chmod(abs, 0o711); err != nil {
		return nil, fmt.Errorf("setting the mode of scratch %s: %w", abs, err)
	}
	m := &Manager{cfg: cfg, turns: map[string]*Turn{}, newTicker: realTicker, owners: map[string]*ownerGroup{}}
	if cfg.UIDs.Count > 0 {
		if err := cfg.UIDs.Check(); err != nil {
			return nil, err
		}
		m.uids = newUIDPool(cfg.UIDs)
		if err := startClean(cfg); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("reading scratch %s: %w", abs, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "t-") || strings.HasPrefix(e.Name(), homePrefix) {
			if err := removeTree(filepath.Join(abs, e.Name())); err != nil {
				return nil, fmt.Errorf("removing stale turn: %w", err)
			}
		}
	}
	return m, nil
}

// homePrefix starts the name of each turn's home in the scratch root; the
// rest is random, so knowing a turn id tells nothing about where it lives.
const homePrefix = "h-"

// Scratch is the absolute scratch directory.
func (m *Manager) Scratch() string { return m.cfg.Scratch }

// TurnLimit is the per-turn disk limit, also every call's file size limit.
func (m *Manager) TurnLimit() int64 { return m.cfg.TurnLimit }

// Acquire returns the turn's workspace, creating it on first use.
func (m *Manager) Acquire(id, owner string) (*Turn, error) {
	if !ValidTurnID(id) {
		return nil, fmt.Errorf("invalid turn id %q: use 1 to 128 of [A-Za-z0-9._:-]", id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.turns[id]; ok {
		if t.Owner != owner {
			return nil, ErrOwner
		}
		t.touch()
		return t, nil
	}
	t := &Turn{ID: id, Owner: owner, UID: -1, GID: -1, calls: map[*Call]struct{}{}, lastUsed: time.Now()}
	if m.uids != nil {
		uid, ok := m.uids.take()
		if !ok {
			return nil, fmt.Errorf("all %d call uids (--uid-range) are held by live turns: end turns or widen the range", m.cfg.UIDs.Count)
		}
		t.UID, t.GID = int(uid), int(uid)
	}
	err := m.joinGroups(t)
	if err == nil {
		err = m.makeHome(t)
	}
	if err != nil {
		m.leaveGroups(t)
		if t.UID >= 0 {
			m.uids.give(uint32(t.UID)) // nothing ran as it; m.mu is held
		}
		return nil, err
	}
	m.turns[id] = t
	return t, nil
}

// makeHome makes scratch/h-<random> (sandboxd's, mode 0710, group the
// turn's) and in it the workspace w (the turn's own, mode 0700).
func (m *Manager) makeHome(t *Turn) error {
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("naming the workspace: %w", err)
	}
	t.home = filepath.Join(m.cfg.Scratch, homePrefix+hex.EncodeToString(rnd[:]))
	t.Dir = filepath.Join(t.home, "w")
	if err := os.Mkdir(t.home, 0o700); err != nil {
		return fmt.Errorf("creating workspace: %w", err)
	}
	err := os.Mkdir(t.Dir, 0o700)
	if err == nil && t.UID >= 0 {
		if err = os.Chown(t.Dir, t.UID, t.GID); err == nil {
			if err = os.Chown(t.home, os.Geteuid(), t.GID); err == nil {
				err = os.Chmod(t.home, 0o710)
			}
		}
	} else if err == nil {
		err = os.Chmod(t.home, 0o711)
	}
	if err != nil {
		_ = removeTree(t.home)
		return fmt.Errorf("creating workspace for uid %d: %w", t.UID, err)
	}
	return nil
}

// release ends everything still running as the turn's uid and returns the
// uid to the pool; a uid that could not be swept is never handed out again.
func (m *Manager) release(t *Turn) error {
	if m.uids == nil || t.UID < 0 {
		return nil
	}
	t.mu.Lock()
	cg := t.cg
	t.mu.Unlock()
	var err error
	if cg != nil {
		err = cg.Kill()
	} else {
		err = confine.KillUser(uint32(t.UID), uint32(t.GID))
	}
	if err != nil {
		return fmt.Errorf("turn %s: %w (uid %d retired)", t.ID, err, t.UID)
	}
	m.mu.Lock()
	m.leaveGroups(t)
	m.uids.give(uint32(t.UID))
	m.mu.Unlock()
	return nil
}

// Credential is who the turn's calls run as; nil keeps sandboxd's user.
func (t *Turn) Credential() *syscall.Credential {
	if t.UID < 0 {
		return nil
	}
	return &syscall.Credential{Uid: uint32(t.UID), Gid: uint32(t.GID), Groups: []uint32{}}
}

// Lookup returns a live turn.
func (m *Manager) Lookup(id string) (*Turn, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.turns[id]
	return t, ok
}

// End kills the turn's calls and deletes its workspace.
func (m *Manager) End(id string) (bool, error) {
	m.mu.Lock()
	t, ok := m.turns[id]
	delete(m.turns, id)
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	t.mu.Lock()
	t.gone = true
	shared := t.shared
	t.shared = nil
	t.mu.Unlock()
	if shared != nil {
		_ = shared.Close()
	}
	t.killCalls("cancelled")
	// Every process of the turn's uid, wherever it went, dies before the
	// workspace goes and the uid is handed on.
	sweepErr := m.release(t)
	// Killed processes die asynchronously and may still create files.
	var err error
	for range 50 {
		if err = removeTree(t.home); err == nil {
			return true, sweepErr
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true, errors.Join(sweepErr, fmt.Errorf("deleting workspace of turn %s: %w", id, err))
}

// TurnInfo is what List reports of a live turn.
type TurnInfo struct {
	ID, Owner string
	Running   int
	Idle      time.Duration
	Usage     int64
	// Inodes is the distinct inodes the last check counted; a walk that
	// stopped early at a limit counts only those it reached.
	Inodes int64
}

// List reports every live turn, so a vessel that restarted can end the
// turns no vessel runs any more (their bytes count against their users).
func (m *Manager) List() []TurnInfo {
	m.mu.Lock()
	turns := make([]*Turn, 0, len(m.turns))
	for _, t := range m.turns {
		turns = append(turns, t)
	}
	m.mu.Unlock()
	now := time.Now()
	out := make([]TurnInfo, 0, len(turns))
	for _, t := range turns {
		t.mu.Lock()
		out = append(out, TurnInfo{ID: t.ID, Owner: t.Owner, Running: len(t.calls), Idle: now.Sub(t.lastUsed), Usage: t.usage, Inodes: t.inodes})
		t.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Count reports the number of live turns.
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns)
}

// Begin registers a call; kill stops it with a reason. It fails when the
// turn has been ended meanwhile.
func (t *Turn) Begin(kill func(reason string)) (*Call, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return nil, errors.New("turn has ended")
	}
	c := &Call{kill: kill}
	t.calls[c] = struct{}{}
	t.lastUsed = time.Now()
	return c, nil
}

// Shared returns what the turn's calls share, made by mk on the first use;
// End closes it. It fails once the turn has ended.
func (t *Turn) Shared(mk func() (io.Closer, error)) (io.Closer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone {
		return nil, errors.New("turn has ended")
	}
	if t.shared == nil {
		c, err := mk()
		if err != nil {
			return nil, err
		}
		t.shared = c
	}
	return t.shared, nil
}

// SetPgid records the call's process group for the open-file scan.
func (t *Turn) SetPgid(c *Call, pgid int) {
	t.mu.Lock()
	c.Pgid = pgid
	t.mu.Unlock()
}

// Done unregisters a call.
func (t *Turn) Done(c *Call) {
	t.mu.Lock()
	delete(t.calls, c)
	t.lastUsed = time.Now()
	t.mu.Unlock()
}

// NextSeq numbers the turn's calls (for per-call outbox directories).
func (t *Turn) NextSeq() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	return t.seq
}

// PutSpare offers an outbox made ahead for the next call; false (keep
// nothing) when the turn has ended or already has one.
func (t *Turn) PutSpare(rel string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone || t.spare != "" {
		return false
	}
	t.spare = rel
	return true
}

// TakeSpare hands the outbox made ahead to one call ("" if none).
func (t *Turn) TakeSpare() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	rel := t.spare
	t.spare = ""
	return rel
}

// ReserveFile counts one outbox file of size n against the turn's file
// limits, returning false (and counting nothing) when it would exceed them.
// Calls of one turn run at once, so the count is kept under the turn's lock.
func (t *Turn) ReserveFile(n int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.outFiles.Reserve(n)
}

// Usage is the last measured disk use.
func (t *Turn) Usage() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usage
}

func (t *Turn) touch() {
	t.mu.Lock()
	t.lastUsed = time.Now()
	t.mu.Unlock()
}

func (t *Turn) killCalls(reason string) {
	t.mu.Lock()
	calls := make([]*Call, 0, len(t.calls))
	for c := range t.calls {
		calls = append(calls, c)
	}
	t.mu.Unlock()
	for _, c := range calls {
		c.kill(reason)
	}
}

// callsOver lists the calls whose group holds more than limit processes.
func (t *Turn) callsOver(counts map[int]int, limit int) []*Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*Call
	for c := range t.calls {
		if c.Pgid > 0 && counts[c.Pgid] > limit {
			out = append(out, c)
		}
	}
	return out
}

func (t *Turn) pgids() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []int
	for c := range t.calls {
		if c.Pgid > 0 {
			out = append(out, c.Pgid)
		}
	}
	return out
}

// Run measures usage every interval, enforces limits and sweeps idle
// turns until ctx ends.
func (m *Manager) Run(ctx context.Context, logf func(string, ...any)) {
	tick, stop := m.newTicker(m.cfg.Interval)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			m.Check(logf)
		}
	}
}

// Check measures every turn once, enforces the limits and sweeps idle
// turns.
func (m *Manager) Check(logf func(string, ...any)) {
	m.noteFull()
	m.mu.Lock()
	turns := make([]*Turn, 0, len(m.turns))
	for _, t := range m.turns {
		turns = append(turns, t)
	}
	m.mu.Unlock()
	now := time.Now()
	for _, t := range turns {
		t.mu.Lock()
		idle := len(t.calls) == 0 && now.Sub(t.lastUsed) > m.cfg.TTL
		t.mu.Unlock()
		if idle {
			if _, err := m.End(t.ID); err != nil {
				logf("sweeping idle turn %s: %v", t.ID, err)
			}
		}
	}
	stop := max(m.cfg.TurnLimit, m.cfg.UserLimit)
	walked := map[*Turn]usage{}
	seen := map[*Turn]map[fileID]bool{}
	for _, t := range turns {
		du := dirUsage(t.Dir, stop)
		walked[t], seen[t] = du, du.seen
		if du.deep {
			logf("turn %s nests directories deeper than %d: treating it as over its disk limit", t.ID, MaxDepth)
		}
	}
	open, counts := openFiles(turns, seen)
	if m.cfg.CallProcs > 0 {
		for _, t := range turns {
			for _, c := range t.callsOver(counts, m.cfg.CallProcs) {
				logf("a call of turn %s runs more than %d processes: stopping it", t.ID, m.cfg.CallProcs)
				c.kill(ReasonProcessLimit)
			}
		}
	}
	m.checkOwnerProcs(turns, counts, logf)
	byOwner := map[string][]*Turn{}
	for _, t := range turns {
		u := walked[t].total + open[t]
		t.mu.Lock()
		t.usage = u
		t.inodes = int64(len(seen[t]))
		gone := t.gone
		t.mu.Unlock()
		if gone {
			continue
		}
		if walked[t].deep || (m.cfg.TurnLimit > 0 && u > m.cfg.TurnLimit) {
			logf("turn %s uses %d bytes, over its limit of %d: stopping its calls and emptying it", t.ID, u, m.cfg.TurnLimit)
			m.empty(t)
			continue
		}
		byOwner[t.Owner] = append(byOwner[t.Owner], t)
	}
	if m.cfg.UserLimit <= 0 {
		return
	}
	for owner, ts := range byOwner {
		var sum int64
		for _, t := range ts {
			sum += t.Usage()
		}
		if sum <= m.cfg.UserLimit {
			continue
		}
		// Empty the most recently active turns first: they are the ones
		// that pushed the user over.
		sort.Slice(ts, func(i, j int) bool { return ts[i].lastActive().After(ts[j].lastActive()) })
		for _, t := range ts {
			if sum <= m.cfg.UserLimit {
				break
			}
			logf("user %q uses %d bytes, over the limit of %d: stopping turn %s and emptying it", owner, sum, m.cfg.UserLimit, t.ID)
			sum -= t.Usage()
			m.empty(t)
		}
	}
}

func (t *Turn) lastActive() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.calls) > 0 {
		return time.Now()
	}
	return t.lastUsed
}

// empty stops the turn's calls and removes everything in its workspace.
// SIGKILL takes effect asynchronously, so removal repeats until nothing
// is left (or a second has passed).
func (m *Manager) empty(t *Turn) {
	t.emptying.Lock()
	defer t.emptying.Unlock()
	t.killCalls(ReasonDiskLimit)
	for range 50 {
		if emptyDir(t.Dir) == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.mu.Lock()
	t.usage = 0
	t.mu.Unlock()
}

// WaitEmptied returns once a running disk-limit cleanup has finished.
func (t *Turn) WaitEmptied() {
	t.emptying.Lock()
	//lint:ignore SA2001 the empty critical section is the point: wait for the holder
	t.emptying.Unlock()
}

// fileID identifies a file across names and open descriptors.
type fileID struct{ dev, ino uint64 }

// usage is one measurement of a workspace.
type usage struct {
	total int64
	seen  map[fileID]bool
	// deep is set when the tree nests deeper than MaxDepth.
	deep bool
}
