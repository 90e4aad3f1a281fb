// Package cgroup gives each turn of a sandbox a control group of its own,
// beneath one per owner, beneath one per sandbox (named by its uid range):
// the kernel then bounds a turn's and an owner's processes and memory, and
// ending a turn kills exactly the processes in its group, wherever they
// went and whatever uid they run as. cgroup v2 is used where it holds the
// pids and memory controllers, else the v1 pids and memory hierarchies.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// controllers are the ones a turn's group needs.
var controllers = []string{"pids", "memory"}

// Limits bound one group; zero leaves a limit unset (the parent's holds).
type Limits struct {
	Procs  int64
	Memory int64
}

// Tree is a sandbox's base group: one directory per hierarchy (one with
// v2, pids and memory with v1).
type Tree struct {
	v2   bool
	dirs []string
}

// Group is one owner's or one turn's group.
type Group struct {
	v2   bool
	dirs []string
}

// ErrUnavailable is returned by Open when no hierarchy with the pids and
// memory controllers can be written here (an engine that does not
// delegate one, a read-only /sys/fs/cgroup).
var ErrUnavailable = errors.New("no writable cgroup with the pids and memory controllers")

// Open makes (or reuses) the base group name beneath sandboxd's own group
// in each hierarchy.
func Open(name string) (*Tree, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	own, err := ownPaths()
	if err != nil {
		return nil, err
	}
	if m, ok := mounts["2"]; ok && v2Has(m, own["2"]) {
		dir, err := v2Base(m, own["2"], name)
		if err != nil {
			return nil, err
		}
		return &Tree{v2: true, dirs: []string{dir}}, nil
	}
	t := &Tree{}
	for _, c := range controllers {
		m, ok := mounts[c]
		if !ok {
			return nil, fmt.Errorf("%w: no cgroup v1 %s hierarchy is mounted", ErrUnavailable, c)
		}
		dir := filepath.Join(m, own[c], name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		t.dirs = append(t.dirs, dir)
	}
	return t, nil
}

// V2 reports whether the tree is a cgroup v2 one.
func (t *Tree) V2() bool { return t.v2 }

// Dirs are the base directories, one per hierarchy.
func (t *Tree) Dirs() []string { return t.dirs }

// Group makes (or reuses) the child rel of the tree with limits.
func (t *Tree) Group(rel string, lim Limits) (*Group, error) {
	return (&Group{v2: t.v2, dirs: t.dirs}).Child(rel, lim)
}

// Child makes (or reuses) the child name of g with limits.
func (g *Group) Child(name string, lim Limits) (*Group, error) {
	c := &Group{v2: g.v2}
	for _, d := range g.dirs {
		dir := filepath.Join(d, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("making cgroup %s: %w", dir, err)
		}
		c.dirs = append(c.dirs, dir)
	}
	if g.v2 {
		// A v2 group hands controllers to its children only when told to.
		if err := enable(g.dirs[0]); err != nil {
			return nil, err
		}
	}
	if err := c.setLimits(lim); err != nil {
		_ = c.Remove()
		return nil, err
	}
	return c, nil
}

func (g *Group) setLimits(lim Limits) error {
	for _, d := range g.dirs {
		var file, val string
		switch {
		case g.v2 && lim.Procs > 0:
			if err := write(filepath.Join(d, "pids.max"), strconv.FormatInt(lim.Procs, 10)); err != nil {
				return err
			}
			if lim.Memory <= 0 {
				continue
			}
			file, val = "memory.max", strconv.FormatInt(lim.Memory, 10)
		case g.v2 && lim.Memory > 0:
			file, val = "memory.max", strconv.FormatInt(lim.Memory, 10)
		case !g.v2 && lim.Procs > 0 && fileIn(d, "pids.max"):
			file, val = "pids.max", strconv.FormatInt(lim.Procs, 10)
		case !g.v2 && lim.Memory > 0 && fileIn(d, "memory.limit_in_bytes"):
			file, val = "memory.limit_in_bytes", strconv.FormatInt(lim.Memory, 10)
		default:
			continue
		}
		if err := write(filepath.Join(d, file), val); err != nil {
			return err
		}
		if g.v2 && file == "memory.max" {
			// Swap would let a turn exceed its memory unseen.
			_ = write(filepath.Join(d, "memory.swap.max"), "0")
		}
	}
	return nil
}

func fileIn(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// Dirs are the group's directories, one per hierarchy.
func (g *Group) Dirs() []string { return g.dirs }

// OpenJoin opens each hierarchy's cgroup.procs for writing: a process
// that writes "0" to each joins the group (the call launcher does, before
// it drops root). The caller closes them.
func (g *Group) OpenJoin() ([]*os.File, error) {
	var out []*os.File
	for _, d := range g.dirs {
		f, err := os.OpenFile(filepath.Join(d, "cgroup.procs"), os.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, fmt.Errorf("opening cgroup %s: %w", d, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Procs lists the processes in the group and its children.
func (g *Group) Procs() []int { return procsUnder(g.dirs) }

// Kill ends every process in the group and its children, and waits (up
// to about two seconds) until the group is empty. Processes forking
// meanwhile are caught by repeating: pids.max bounds how many there are.
func (g *Group) Kill() error {
	if g.v2 {
		// cgroup.kill (Linux 5.14) kills the whole subtree at once.
		_ = write(filepath.Join(g.dirs[0], "cgroup.kill"), "1")
	}
	return killUntilEmpty(g.dirs)
}

// Remove deletes the group's directories (children first); a group that
// still holds processes stays.
func (g *Group) Remove() error {
	var errs []error
	for _, d := range g.dirs {
		errs = append(errs, removeTree(d))
	}
	return errors.Join(errs...)
}

// Kill ends every process left in the tree (a previous sandboxd's) and
// removes its children.
func (t *Tree) Kill() error {
	g := &Group{v2: t.v2, dirs: t.dirs}
	if err := g.Kill(); err != nil {
		return err
	}
	var errs []error
	for _, d := range t.dirs {
		subs, _ := os.ReadDir(d)
		for _, s := range subs {
			if s.IsDir() {
				errs = append(errs, removeTree(filepath.Join(d, s.Name())))
			}
		}
	}
	return errors.Join(errs...)
}

// Procs lists every process in the tree.
func (t *Tree) Procs() []int { return procsUnder(t.dirs) }

// Remove deletes the tree's directories once empty.
func (t *Tree) Remove() error { return (&Group{v2: t.v2, dirs: t.dirs}).Remove() }

func killUntilEmpty(dirs []string) error {
	for range 200 {
		pids := procsUnder(dirs)
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("cgroup %s: processes still running after SIGKILL", dirs[0])
}

// procsUnder reads cgroup.procs of every group under dirs. Zombies are
// gone from cgroup.procs, so an empty list means nothing can run.
func procsUnder(dirs []string) []int {
	seen := map[int]bool{}
	var out []int
	for _, root := range dirs {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	return out
}

// removeTree removes a group directory and its children, deepest first
// (cgroup directories are removed with rmdir only).
func removeTree(dir string) error {
	subs, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, s := range subs {
		if s.IsDir() {
			errs = append(errs, removeTree(filepath.Join(dir, s.Name())))
		}
	}
	if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

func write(path, val string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(val); err != nil {
		return fmt.Errorf("cgroup: writing %s to %s: %w", val, path, err)
	}
	return nil
}

// enable turns on the pids and memory controllers for dir's children.
func enable(dir string) error {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	have := strings.Fields(string(b))
	for _, c := range controllers {
		if !contains(have, c) {
			if err := write(filepath.Join(dir, "cgroup.subtree_control"), "+"+c); err != nil {
				return err
			}
		}
	}
	return nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// v2Has reports whether the v2 group own offers pids and memory.
func v2Has(mount, own string) bool {
	b, err := os.ReadFile(filepath.Join(mount, own, "cgroup.controllers"))
	if err != nil {
		return false
	}
	have := strings.Fields(string(b))
	return contains(have, "pids") && contains(have, "memory")
}

// v2Base makes the base group in v2. A v2 group holding processes cannot
// hand controllers to children (no internal processes), so the base goes,
// in order of preference: beneath sandboxd's own group when it can hand
// them out (the root group, exempt from that rule, or an empty one);
// beside sandboxd's own group, when its parent already hands out pids and
// memory (a slice, say); or beneath sandboxd's own group once sandboxd has
// moved itself (only itself: never the other processes sharing its group)
// into a leaf "sandboxd" of it, as PID 1 of a container does.
func v2Base(mount, own, name string) (string, error) {
	dir := filepath.Join(mount, own)
	parent := filepath.Dir(dir)
	switch {
	case enable(dir) == nil:
	case own != "/" && hasAll(filepath.Join(parent, "cgroup.subtree_control")):
		dir = parent
	default:
		leaf := filepath.Join(dir, "sandboxd")
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if err := write(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if err := enable(dir); err != nil {
			return "", fmt.Errorf("%w: sandboxd's group %s holds other processes: %v", ErrUnavailable, dir, err)
		}
	}
	if err := enable(dir); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	base := filepath.Join(dir, name)
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := enable(base); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return base, nil
}

// hasAll reports whether a subtree_control file lists pids and memory.
func hasAll(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	have := strings.Fields(string(b))
	return contains(have, "pids") && contains(have, "memory")
}

// cgroupMounts maps "2" and each v1 controller to its mount point.
func cgroupMounts() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading mounts: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		switch b[0] {
		case "cgroup2":
			if _, dup := out["2"]; !dup {
				out["2"] = a[4]
			}
		case "cgroup":
			for _, o := range strings.Split(b[2], ",") {
				if contains(controllers, o) {
					out[o] = a[4]
				}
			}
		}
	}
	return out, sc.Err()
}

// ownPaths maps "2" and each v1 controller to sandboxd's own group.
func ownPaths() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("reading own cgroup: %w", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			out["2"] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			out[c] = f[2]
		}
	}
	return out, nil
}

// AtProcCap reports whether the group holds as many processes as its
// pids.max allows (a process moved in is never refused by the kernel, but
// could not fork).
func (g *Group) AtProcCap() bool {
	for _, d := range g.dirs {
		maxB, err1 := os.ReadFile(filepath.Join(d, "pids.max"))
		curB, err2 := os.ReadFile(filepath.Join(d, "pids.current"))
		if err1 != nil || err2 != nil {
			continue
		}
		lim, err1 := strconv.ParseInt(strings.TrimSpace(string(maxB)), 10, 64)
		cur, err2 := strconv.ParseInt(strings.TrimSpace(string(curB)), 10, 64)
		if err1 == nil && err2 == nil && cur >= lim {
			return true
		}
	}
	return false
}

// OwnProcsMax is the pids.max of sandboxd's own group (its container's
// limit, usually); 0 when unlimited or unknown.
func OwnProcsMax() int64 {
	mounts, err1 := cgroupMounts()
	own, err2 := ownPaths()
	if err1 != nil || err2 != nil {
		return 0
	}
	var dir string
	if m, ok := mounts["2"]; ok && v2Has(m, own["2"]) {
		dir = filepath.Join(m, own["2"])
	} else if m, ok := mounts["pids"]; ok {
		dir = filepath.Join(m, own["pids"])
	}
	// The nearest limit up the tree holds.
	for dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "pids.max")); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				return n
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir || !strings.HasPrefix(parent, "/sys/fs/cgroup/") {
			break
		}
		dir = parent
	}
	return 0
}
