// Package uidlock reserves a sandbox's call-uid range on the whole host:
// uids are the kernel's, shared by every container and every deployment,
// so two sandboxes with overlapping ranges would signal, limit and
// sweep each other's calls. Each reservation is a file named by its
// range in one root-owned directory, held under flock(2) for the life of
// the sandboxd that took it; a file nobody holds is a stale one (its
// sandboxd died) and is removed.
package uidlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultDir is where sandboxd reserves its range; Compose mounts the
// host's directory there so containers see each other's reservations.
const DefaultDir = "/run/astralvessel/uids"

// Reservation is a held range; Release gives it back (so does exit).
type Reservation struct {
	dirfd int
	name  string
	f     *os.File
	// Secured says what Reserve changed on the registry's parent (owner
	// and mode, see secureParent), for the caller to log; "" if nothing.
	Secured string
}

// ErrTaken is wrapped by Reserve when a live sandboxd holds an
// overlapping range.
var ErrTaken = errors.New("uid range reserved by another sandboxd")

const prefix = "range-"

func fileName(first, count uint32) string {
	return prefix + strconv.FormatUint(uint64(first), 10) + "-" + strconv.FormatUint(uint64(count), 10)
}

func parseName(name string) (first, count uint32, ok bool) {
	a, b, ok := strings.Cut(strings.TrimPrefix(name, prefix), "-")
	f, err1 := strconv.ParseUint(a, 10, 32)
	c, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || !strings.HasPrefix(name, prefix) || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint32(f), uint32(c), true
}

func overlaps(f1, c1, f2, c2 uint32) bool {
	return uint64(f1) < uint64(f2)+uint64(c2) && uint64(f2) < uint64(f1)+uint64(c1)
}

// Reserve takes first:count in dir, or says which live sandboxd holds an
// overlapping range.
func Reserve(dir string, first, count uint32) (*Reservation, error) {
	dirfd, secured, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unix.Close(dirfd)
		}
	}()
	// One reservation is checked and taken at a time on the host.
	reg, err := openFile(dirfd, dir, ".registry")
	if err != nil {
		return nil, err
	}
	defer reg.Close()
	if err := flock(reg, unix.LOCK_EX); err != nil {
		return nil, fmt.Errorf("locking %s: %w", filepath.Join(dir, ".registry"), err)
	}
	names, err := listDir(dir)
	if err != nil {
		return nil, err
	}
	mine := fileName(first, count)
	for _, n := range names {
		f2, c2, isRange := parseName(n)
		if !isRange || !overlaps(first, count, f2, c2) {
			continue
		}
		if err := takeOverStale(dirfd, dir, n, f2, c2, first, count); err != nil {
			return nil, err
		}
	}
	f, err := openFile(dirfd, dir, mine)
	if err != nil {
		return nil, err
	}
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s is held: %v", ErrTaken, filepath.Join(dir, mine), err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	ok = true
	return &Reservation{dirfd: dirfd, name: mine, f: f, Secured: secured}, nil
}

// takeOverStale removes the reservation file name unless a live sandboxd
// holds it, in which case the error names that sandboxd's pid.
func takeOverStale(dirfd int, dir, name string, f2, c2, first, count uint32) error {
	f, err := openFile(dirfd, dir, name)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := "an unknown process"
		var buf [32]byte
		n, _ := f.ReadAt(buf[:], 0)
		if p := strings.TrimSpace(strings.TrimPrefix(string(buf[:n]), "pid ")); p != "" {
			holder = "pid " + p
		}
		return fmt.Errorf("%w: --uid-range %d:%d overlaps %d:%d, which %s holds (%s): another deployment's "+
			"sandboxd runs on this host with those uids; give one of them another range ([call_uids] in deployment.toml)",
			ErrTaken, first, count, f2, c2, holder, filepath.Join(dir, name))
	}
	// Stale: its sandboxd is gone. Removed under the registry lock, so
	// nobody can be taking it meanwhile.
	if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing stale reservation %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// Release removes the reservation file and unlocks it.
func (r *Reservation) Release() {
	if r == nil || r.f == nil {
		return
	}
	_ = unix.Unlinkat(r.dirfd, r.name, 0)
	r.f.Close()
	unix.Close(r.dirfd)
	r.f = nil
}

// openDir makes dir (root's, mode 0700) and opens it without following a
// symlink; a directory another user owns or may write is refused, as it
// would let that user forge or remove reservations. It also returns what
// it changed on dir's parent (secureParent), "" if nothing.
func openDir(dir string) (int, string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return -1, "", fmt.Errorf("uid reservations: %w", err)
	}
	secured, err := secureParent(filepath.Dir(dir))
	if err != nil {
		return -1, "", err
	}
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, "", fmt.Errorf("uid reservations: making %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("uid reservations: opening %s (a symlink is refused): %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, "", fmt.Errorf("uid reservations: %s: %w", dir, err)
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		unix.Close(fd)
		return -1, "", fmt.Errorf("uid reservations: %s is owned by uid %d with mode %o: it must be this user's (uid %d) "+
			"and writable by nobody else", dir, st.Uid, st.Mode&0o7777, os.Geteuid())
	}
	return fd, secured, nil
}

// secureParent makes the registry's parent directory this user's, mode
// 0755, when others may write it without the sticky bit: there anyone could
// rename the registry away and plant one of their own. A Kubernetes emptyDir
// mounted at the parent is such a directory (root's, mode 0777). A parent
// owned by another user than this one or root is refused rather than taken
// over: that user chose it and may have a use for it. It returns what it
// changed, "" if nothing.
func secureParent(parent string) (string, error) {
	fd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("uid reservations: opening %s: %w", parent, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", fmt.Errorf("uid reservations: %s: %w", parent, err)
	}
	if st.Mode&0o022 == 0 || st.Mode&unix.S_ISVTX != 0 {
		return "", nil
	}
	euid := os.Geteuid()
	if int(st.Uid) != euid && st.Uid != 0 {
		return "", fmt.Errorf("uid reservations: %s (uid %d, mode %o) is writable by others and owned by "+
			"neither this user (uid %d) nor root: give it mode 0755 or the sticky bit", parent, st.Uid, st.Mode&0o7777, euid)
	}
	if err := unix.Fchown(fd, euid, os.Getegid()); err != nil {
		return "", fmt.Errorf("uid reservations: %s (uid %d, mode %o) is writable by others, and making it uid %d's "+
			"failed: %w; give it mode 0755 or the sticky bit", parent, st.Uid, st.Mode&0o7777, euid, err)
	}
	if err := unix.Fchmod(fd, 0o755); err != nil {
		return "", fmt.Errorf("uid reservations: %s (mode %o) is writable by others, and making it mode 0755 "+
			"failed: %w", parent, st.Mode&0o7777, err)
	}
	return fmt.Sprintf("%s was uid %d gid %d mode %o, writable by others: made it uid %d gid %d mode 755",
		parent, st.Uid, st.Gid, st.Mode&0o7777, euid, os.Getegid()), nil
}

// openFile opens (creating) a regular file in the directory, refusing
// symlinks and anything else that is not a plain file of one link.
func openFile(dirfd int, dir, name string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s (a symlink is refused): %w", filepath.Join(dir, name), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is not a plain file: refusing it", filepath.Join(dir, name))
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, name)), nil
}

func listDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("uid reservations: %w", err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, nil
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
