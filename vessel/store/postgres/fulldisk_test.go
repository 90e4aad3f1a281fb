package postgres

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// fullDiskCluster starts a PostgreSQL cluster of its own whose data folder
// is a small tmpfs, reached only through a socket in that folder, and
// returns its DSN and the folder. It needs root (the mount) and PostgreSQL's
// server binaries (PG_BIN, default PostgreSQL 15's), run as the postgres
// user; the test runs where the other PostgreSQL tests do.
func fullDiskCluster(t *testing.T) (dsn, dir string) {
	t.Helper()
	testDSN(t)
	testenv.Require(t, os.Geteuid() == 0, "a tmpfs data folder needs root")
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	_, err := os.Stat(filepath.Join(bin, "initdb"))
	testenv.Require(t, err == nil, "PostgreSQL's initdb not found in "+bin+" (set PG_BIN)")
	u, err := user.Lookup("postgres")
	testenv.Require(t, err == nil, "no postgres user to run the server as")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	// Folders of their own straight under the temporary folder: the server's
	// user cannot pass through the test's own (0700, root's).
	mkdir := func() string {
		d, err := os.MkdirTemp("", "vessel-pgfull-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(d) })
		return d
	}
	dir = mkdir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=96m,mode=0700"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	logDir := mkdir()
	for _, d := range []string{dir, logDir} {
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	data := filepath.Join(dir, "data")
	run("initdb", "-D", data, "-U", "vessel", "--auth=trust", "-E", "UTF8", "--no-locale")
	run("pg_ctl", "-D", data, "-l", filepath.Join(logDir, "server.log"), "-w", "-t", "60", "-o",
		"-c listen_addresses= -k "+dir+" -p 5432 -c fsync=off -c shared_buffers=16MB -c max_connections=30", "start")
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		_ = cmd.Run()
	})
	return "host=" + dir + " port=5432 user=vessel dbname=postgres sslmode=disable", dir
}

// TestPingFullDataDisk: a real full disk under PostgreSQL's data folder. A
// task write is refused (could not extend file); the lease probe's one-row
// update may still fit its page, but Ping fails from then on, while a
// stored task is still read; with room again Ping passes and tasks are
// written.
func TestPingFullDataDisk(t *testing.T) {
	dsn, dir := fullDiskCluster(t)
	db := openTest(t, dsn, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := storedTask(t, db)
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping before the disk is full: %v", err)
	}

	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	for len(chunk) > 1 { // the last few bytes too
		chunk = chunk[:len(chunk)/2]
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
	}
	_ = f.Close()

	// Task writes until one needs a new block (the text, random, is
	// stored out of line in new TOAST blocks).
	var refused error
	for i := 0; i < 200 && refused == nil; i++ {
		task := newTask("big-"+strconv.Itoa(i), "c1", a2a.TaskStateCompleted)
		msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart(randomText(t, 64<<10)))
		task.Status.Message = msg
		if _, err := db.Agent("alpha").Create(as("alice"), task); err != nil {
			refused = err
		}
	}
	if refused == nil || !refusesWrites(refused) {
		t.Fatalf("task writes on a full disk: %v, want one refused for space", refused)
	}
	if !strings.Contains(refused.Error(), "53100") {
		t.Fatalf("task write refused with %v, want SQLSTATE 53100 (disk full)", refused)
	}
	err = db.Ping(ctx)
	if err == nil {
		t.Fatal("Ping passed on a full data disk after a task write was refused")
	}
	t.Logf("Ping on a full disk: %v", err)
	got, err := newDB(db.pool, db.opts).Agent("alpha").Get(as("alice"), id)
	if err != nil || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("Get of a stored task on a full disk = %+v, %v", got, err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("Ping with room again: %v", err)
	}
	if _, err := db.Agent("alpha").Create(as("alice"), newTask("after", "c1", a2a.TaskStateCompleted)); err != nil {
		t.Fatalf("Create with room again: %v", err)
	}
	if err := db.writeFailure(); err != nil {
		t.Fatalf("the note of the refused write outlived a write that went through: %v", err)
	}
}

// randomText is n hexadecimal characters that do not compress much.
func randomText(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	const hexdig = "0123456789abcdef"
	out := make([]byte, 0, n)
	for _, c := range b {
		out = append(out, hexdig[c>>4], hexdig[c&15])
	}
	return string(out)
}
