package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/astraldeep/astralvessel-go/runtime/testenv"
)

// smallTmpfs mounts a tmpfs of size bytes for the test: a real full disk.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		testenv.Require(t, false, "mounting a tmpfs needs root: "+err.Error())
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes until the filesystem is full and returns the filler's path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return p
			}
			t.Fatal(err)
		}
	}
}

func ownerCtx(owner string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(owner, nil)
	return ctx
}

// Issue 21 (4): with the store's disk full, a finished turn keeps its end
// (the SDK sees the update succeed, so the client gets the final event),
// GetTask answers it, Ping reports the failure, and once there is room
// again the end is written; nothing records a wrong reason.
func TestFullDiskKeepsTheEnd(t *testing.T) {
	dir := smallTmpfs(t, "4m")
	url := "sqlite://" + filepath.Join(dir, "tasks.sqlite")
	b, err := Open(context.Background(), url, Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	st := b.Agent("a")
	ctx := ownerCtx("app/alice")
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	v, err := st.Create(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	filler := fill(t, dir)
	big := strings.Repeat("the answer ", 100_000) // about 1 MB: needs new pages
	done := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []*a2a.Artifact{{ID: "a", Name: AnswerArtifactName, Parts: []*a2a.Part{a2a.NewTextPart(big)}}}}
	v2, err := st.Update(ctx, &taskstore.UpdateRequest{Task: done, PrevVersion: v})
	if err != nil {
		t.Fatalf("the finished turn's update failed on a full disk: %v", err)
	}
	got, err := st.Get(ctx, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateCompleted || got.Version != v2 {
		t.Fatalf("GetTask on a full disk: %v %v", got, err)
	}
	pinger := b.(Pinger)
	if err := pinger.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "writes fail") {
		t.Fatalf("Ping on a full disk: %v", err)
	}
	sb := b.(*sqliteBackend)
	sb.flush(context.Background()) // still full: nothing changes
	if err := pinger.Ping(context.Background()); err == nil {
		t.Fatal("Ping passed while the end is still unwritten")
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	sb.flush(context.Background())
	if err := pinger.Ping(context.Background()); err != nil {
		t.Fatalf("Ping after room came back and the end was written: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// A restart finds the end on disk, not a failed task.
	b, err = Open(context.Background(), url, Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err = b.Agent("a").Get(ctx, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateCompleted || len(got.Task.Artifacts) != 1 {
		t.Fatalf("after the restart: %+v %v", got, err)
	}
}

// A restart while an end is still unwritten records the one thing known:
// the vessel stopped before the end was stored.
func TestRestartReasonIsTrue(t *testing.T) {
	dir := smallTmpfs(t, "4m")
	url := "sqlite://" + filepath.Join(dir, "tasks.sqlite")
	b, err := Open(context.Background(), url, Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	st := b.Agent("a")
	ctx := ownerCtx("app/alice")
	v, err := st.Create(ctx, &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}})
	if err != nil {
		t.Fatal(err)
	}
	filler := fill(t, dir)
	done := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []*a2a.Artifact{{ID: "a", Name: AnswerArtifactName, Parts: []*a2a.Part{a2a.NewTextPart(strings.Repeat("x", 1<<20))}}}}
	if _, err := st.Update(ctx, &taskstore.UpdateRequest{Task: done, PrevVersion: v}); err != nil {
		t.Fatal(err)
	}
	_ = b.Close() // the last flush fails too: the disk is still full
	_ = os.Remove(filler)
	b, err = Open(context.Background(), url, Options{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Agent("a").Get(ctx, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateFailed || got.Task.Status.Message.Parts[0].Text() != RestartReason {
		t.Fatalf("after the restart: %+v %v", got, err)
	}
}
