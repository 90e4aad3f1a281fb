package uidlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

func lockDir(t *testing.T) string {
	testenv.Require(t, os.Geteuid() == 0, "needs root (the directory must be root's)")
	return filepath.Join(t.TempDir(), "uids")
}

// A second reservation overlapping a held one is refused and names the
// holder; a disjoint one is taken.
func TestOverlapRefused(t *testing.T) {
	dir := lockDir(t)
	a, err := Reserve(dir, 200000, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	_, err = Reserve(dir, 204000, 4096)
	if !errors.Is(err, ErrTaken) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) ||
		!strings.Contains(err.Error(), "200000:4096") {
		t.Fatalf("overlapping reservation: %v, want ErrTaken naming pid %d and 200000:4096", err, os.Getpid())
	}
	if _, err := Reserve(dir, 200000, 4096); !errors.Is(err, ErrTaken) {
		t.Fatalf("same range again: %v, want ErrTaken", err)
	}
	b, err := Reserve(dir, 204096, 4096)
	if err != nil {
		t.Fatalf("adjacent range: %v", err)
	}
	b.Release()
}

// A reservation whose holder is gone (released, or its process died and
// the lock with it) is taken over.
func TestStaleTakenOver(t *testing.T) {
	dir := lockDir(t)
	a, err := Reserve(dir, 300000, 16)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	// A file left by a sandboxd that died: present, unlocked.
	if err := os.WriteFile(filepath.Join(dir, fileName(300008, 16)), []byte("pid 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Reserve(dir, 300000, 16)
	if err != nil {
		t.Fatalf("stale reservation not taken over: %v", err)
	}
	defer b.Release()
	if _, err := os.Stat(filepath.Join(dir, fileName(300008, 16))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the stale file stayed: %v", err)
	}
}

// Symlinks and other non-plain files in the directory, a symlinked
// directory, and a directory others may write are refused.
func TestRefusesPlantedFiles(t *testing.T) {
	dir := lockDir(t)
	a, err := Reserve(dir, 400000, 16)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, fileName(400000, 16))); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(dir, 400000, 16); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlinked reservation: %v, want a refusal", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, fileName(400100, 16)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(dir, 400100, 16); err == nil || !strings.Contains(err.Error(), "not a plain file") {
		t.Fatalf("FIFO reservation: %v, want a refusal", err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(link, 400200, 16); err == nil {
		t.Fatal("a symlinked directory was accepted")
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(dir, 400300, 16); err == nil || !strings.Contains(err.Error(), "writable by nobody else") {
		t.Fatalf("world-writable directory: %v, want a refusal", err)
	}
}

// A parent others may write (a Kubernetes emptyDir is root's, mode 0777)
// is made root's, mode 0755, so nobody can rename the registry away and
// plant their own, and the change is returned for the caller to log; one
// owned by another user is refused, not taken over; a sticky parent (like
// /tmp) is left alone.
func TestParentWritableByOthersSecured(t *testing.T) {
	dir := lockDir(t)
	parent := filepath.Dir(dir)
	if err := os.Chown(parent, 0, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777); err != nil {
		t.Fatal(err)
	}
	r, err := Reserve(dir, 310000, 16)
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	if !strings.Contains(r.Secured, "mode 777") || !strings.Contains(r.Secured, "mode 755") {
		t.Fatalf("Secured = %q, want the old and new modes", r.Secured)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(parent, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 0 || st.Gid != 0 || st.Mode&0o7777 != 0o755 {
		t.Fatalf("parent is uid %d gid %d mode %o, want uid 0 gid 0 mode 755", st.Uid, st.Gid, st.Mode&0o7777)
	}
	r, err = Reserve(dir, 310000, 16) // nothing left to change
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	if r.Secured != "" {
		t.Fatalf("Secured = %q on a parent already secure, want nothing", r.Secured)
	}

	other := filepath.Join(t.TempDir(), "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(other, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(filepath.Join(other, "uids"), 310000, 16); err == nil || !strings.Contains(err.Error(), "neither this user") {
		t.Fatalf("a parent of uid 65534, mode 777: %v, want a refusal", err)
	}
	if err := syscall.Stat(other, &st); err != nil || st.Uid != 65534 || st.Mode&0o7777 != 0o777 {
		t.Fatalf("the other user's parent changed: uid %d mode %o (%v)", st.Uid, st.Mode&0o7777, err)
	}

	sticky := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(sticky, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sticky, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	r, err = Reserve(filepath.Join(sticky, "uids"), 310000, 16)
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	if fi, err := os.Stat(sticky); err != nil || fi.Mode()&os.ModePerm != 0o777 || fi.Mode()&os.ModeSticky == 0 {
		t.Fatalf("sticky parent changed: %v %v", fi.Mode(), err)
	}
}
