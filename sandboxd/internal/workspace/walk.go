package workspace

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxDepth is the deepest directory nesting a workspace may hold. A deeper
// tree counts as over the turn's disk limit: paths that long cannot be
// walked by name, and a chain of a hundred thousand nested directories was
// how an inode flood once hid from the measurement.
const MaxDepth = 256

// openDirFlags open a directory without following a symlink put in its
// place, so a call can never point the walk or the removal elsewhere.
const openDirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// direntBuf is how much of a directory is read at once (getdents), so a
// directory of a million entries is never held in memory whole.
const direntBuf = 8 << 10

// readNames reads the next names of the directory fd into names[:0]; an
// empty result is the end of the directory. short reports that the last
// read left room for another entry in buf: on Linux the directory had
// ended then, though a file system may also return less, so it is only a
// hint, to be checked (removal tries rmdir, which fails on what remains).
func readNames(fd int, buf []byte, names []string) (_ []string, short bool, _ error) {
	names = names[:0]
	for len(names) == 0 {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return names, false, err
		}
		if n <= 0 {
			return names, true, nil
		}
		short = len(buf)-n >= maxDirent
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	return names, short, nil
}

// maxDirent is the largest entry getdents64 returns: its 19-byte header
// and a 255-byte name with its NUL, padded to 8 bytes.
const maxDirent = 280

// cost is what an entry uses on disk: its allocated blocks (fallocate
// with --keep-size allocates without growing the size; a sparse file
// allocates less than its size) plus PerEntry for its inode and name.
func cost(st *unix.Stat_t) int64 { return st.Blocks*512 + PerEntry }

// dirUsage measures a workspace through directory descriptors: every
// entry's cost, each inode's blocks once. It stops early once the total
// passes stop (> 0), and reports deep when the tree nests deeper than
// MaxDepth (the caller treats that as over the limit).
func dirUsage(dir string, stop int64) usage {
	u := usage{seen: map[fileID]bool{}}
	fd, err := unix.Open(dir, openDirFlags, 0)
	if err != nil {
		return u
	}
	u.walk(fd, 1, stop)
	return u
}

// walk adds the entries of the directory fd (which it closes); false
// stops the whole walk.
func (u *usage) walk(fd, depth int, stop int64) bool {
	defer unix.Close(fd)
	buf := make([]byte, direntBuf)
	var names []string
	for {
		var err error
		names, _, err = readNames(fd, buf, names)
		for _, name := range names {
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			id := fileID{st.Dev, st.Ino}
			if !u.seen[id] {
				u.seen[id] = true
				u.total += cost(&st)
			} else {
				u.total += PerEntry // another name of a counted inode
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				if depth >= MaxDepth {
					u.deep = true
					return false
				}
				child, err := openDirAt(fd, name, &st)
				if err == nil && !u.walk(child, depth+1, stop) {
					return false
				}
			}
			if stop > 0 && u.total > stop {
				return false
			}
		}
		if err != nil || len(names) == 0 {
			return true
		}
	}
}

// openDirAt opens the directory name in dfd. A directory a call made
// unreadable is made readable again when sandboxd owns it (calls sharing
// sandboxd's uid, in tests without root); root reads it anyway. The mode
// change never follows a symlink (fchmodat2 with AT_SYMLINK_NOFOLLOW).
func openDirAt(dfd int, name string, st *unix.Stat_t) (int, error) {
	fd, err := unix.Openat(dfd, name, openDirFlags, 0)
	if errors.Is(err, unix.EACCES) && st.Uid == uint32(os.Geteuid()) {
		if chmodNoFollow(dfd, name, 0o700) == nil {
			fd, err = unix.Openat(dfd, name, openDirFlags, 0)
		}
	}
	return fd, err
}

func chmodNoFollow(dfd int, name string, mode uint32) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(dfd), uintptr(unsafe.Pointer(p)), uintptr(mode), unix.AT_SYMLINK_NOFOLLOW, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// removeTree deletes dir and everything in it through directory
// descriptors: no symlink is followed, no mode is changed as root, and a
// chain nested deeper than the descriptors it keeps open is moved up to
// the top (renameat) and removed from there.
func removeTree(dir string) error {
	top, err := unix.Open(dir, openDirFlags, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	r := remover{top: top}
	gone, err := r.empty(top, 1, func() error { return unix.Rmdir(dir) })
	unix.Close(top)
	if err != nil {
		return fmt.Errorf("emptying %s: %w", dir, err)
	}
	if gone {
		return nil
	}
	if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// emptyDir removes everything inside dir, keeping dir itself.
func emptyDir(dir string) error {
	top, err := unix.Open(dir, openDirFlags, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", dir, err)
	}
	defer unix.Close(top)
	r := remover{top: top}
	_, err = r.empty(top, 1, nil)
	return err
}

// removeDepth is how many directory descriptors a removal keeps open.
const removeDepth = 32

type remover struct {
	top   int
	moved int
}

// empty removes every entry of the directory dfd, reading it again from
// the start until nothing is left, and fails when a pass removes nothing.
// With rmdir (which removes the directory itself), a pass whose read was
// short tries it at once instead of reading again to see the directory
// empty: gone reports it succeeded; a directory not yet empty (something
// made meanwhile, or a short read that was not the end) is read again.
func (r *remover) empty(dfd, depth int, rmdir func() error) (gone bool, _ error) {
	buf := make([]byte, direntBuf)
	var names []string
	// Every caller hands over a directory it has just opened, so the
	// first pass starts at the beginning without a seek.
	for pass := 0; ; pass++ {
		if pass > 0 {
			if _, err := unix.Seek(dfd, 0, 0); err != nil {
				return false, err
			}
		}
		var short bool
		var err error
		if names, short, err = readNames(dfd, buf, names); err != nil {
			return false, err
		}
		if len(names) == 0 {
			return false, nil
		}
		removed := 0
		var last error
		for _, name := range names {
			if err := r.remove(dfd, name, depth); err != nil {
				last = err
				continue
			}
			removed++
		}
		if removed == 0 {
			return false, last
		}
		if short && rmdir != nil {
			switch err := rmdir(); {
			case err == nil || errors.Is(err, unix.ENOENT):
				return true, nil
			case !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST):
				return false, fmt.Errorf("removing the emptied directory: %w", err)
			}
		}
	}
}

func (r *remover) remove(dfd int, name string, depth int) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("unlinking %s: %w", name, err)
		}
		return nil
	}
	if depth >= removeDepth {
		// Pull the deep subtree up to the top; a later pass of the top
		// directory removes it with descriptors to spare.
		r.moved++
		up := ".sbx-up-" + strconv.Itoa(r.moved)
		if err := unix.Renameat(dfd, name, r.top, up); err != nil {
			return fmt.Errorf("moving %s up: %w", name, err)
		}
		return nil
	}
	child, err := openDirAt(dfd, name, &st)
	if err != nil {
		return fmt.Errorf("opening %s: %w", name, err)
	}
	gone, err := r.empty(child, depth+1, func() error { return unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR) })
	unix.Close(child)
	if err != nil {
		return err
	}
	if gone {
		return nil
	}
	if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing %s: %w", name, err)
	}
	return nil
}
