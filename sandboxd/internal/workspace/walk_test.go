package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// S1: blocks allocated without growing the size (fallocate --keep-size)
// are charged; they were invisible when usage was the sum of sizes.
func TestUsageCountsAllocatedBlocks(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, 8<<20); err != nil {
		t.Fatalf("fallocate (the scratch filesystem must support it): %v", err)
	}
	if st, _ := f.Stat(); st.Size() != 0 {
		t.Fatalf("size %d, want 0", st.Size())
	}
	if got := dirUsage(dir, 0).total; got < 8<<20 {
		t.Fatalf("usage %d, want at least the 8 MiB allocated", got)
	}
}

// mkChain makes n directories nested in dir through descriptors (the
// path would be longer than PATH_MAX).
func mkChain(t *testing.T, dir string, n int) {
	t.Helper()
	fd, err := unix.Open(dir, openDirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := unix.Mkdirat(fd, "dd", 0o700); err != nil {
			t.Fatalf("level %d: %v", i, err)
		}
		next, err := unix.Openat(fd, "dd", openDirFlags, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
}

// S1: an inode flood hidden in a chain of nested directories longer than
// any path is seen (as too deep), and removed.
func TestDeepChainIsOverLimitAndRemoved(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "w")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	mkChain(t, ws, 3000)
	if u := dirUsage(ws, 0); !u.deep {
		t.Fatalf("a chain of 3000 directories was not reported as too deep (total %d)", u.total)
	}
	if err := removeTree(ws); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(ws); !os.IsNotExist(err) {
		t.Fatalf("workspace left: %v", err)
	}
}

// W7: removal follows no symlink and changes no mode outside the tree,
// even where a directory inside was made unreadable.
func TestRemoveTreeFollowsNoSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(outside, 0o700)
	keep := filepath.Join(outside, "keep")
	_ = os.Chmod(outside, 0o700)
	if err := os.WriteFile(keep, []byte("x"), 0o400); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(outside, 0o500)
	ws := filepath.Join(dir, "w")
	for _, d := range []string{ws, filepath.Join(ws, "locked"), filepath.Join(ws, "locked", "in")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := os.Symlink(outside, filepath.Join(ws, "locked", "link"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Symlink(keep, filepath.Join(ws, "filelink"))
	_ = os.Chmod(filepath.Join(ws, "locked"), 0)
	if err := removeTree(ws); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(outside)
	if err != nil || st.Mode().Perm() != 0o500 {
		t.Fatalf("the symlinked directory changed: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(keep); err != nil || st.Mode().Perm() != 0o400 {
		t.Fatalf("the symlinked file changed or went: %v", err)
	}
}

// A directory listed over many reads (more entries than one read's buffer
// holds), with subdirectories of its own, is removed whole.
func TestRemoveTreeOfManyEntries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "h")
	sub := filepath.Join(dir, "w", "sub")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 200)
	for i := range 300 {
		for _, d := range []string{dir, sub} {
			if err := os.WriteFile(filepath.Join(d, long+strconv.Itoa(i)), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(sub, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := removeTree(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s is still there: %v", dir, err)
	}
}

// Files made while a removal runs never let it report success with the
// directory still there: it either removes everything or fails.
func TestRemoveTreeWhileFilesAppear(t *testing.T) {
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), "h")
		w := filepath.Join(dir, "w")
		if err := os.MkdirAll(w, 0o700); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			_ = os.WriteFile(filepath.Join(w, "f"+strconv.Itoa(i)), nil, 0o600)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = os.WriteFile(filepath.Join(w, "late"+strconv.Itoa(i)), nil, 0o600)
			}
		}()
		err := removeTree(dir)
		close(stop)
		<-done
		_, statErr := os.Lstat(dir)
		if err == nil && !os.IsNotExist(statErr) {
			t.Fatalf("round %d: removeTree reported success, but %s remains (%v)", round, dir, statErr)
		}
	}
}
