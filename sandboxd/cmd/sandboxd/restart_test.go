package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// procsOfRange counts live processes whose uid is in [first, first+n).
func procsOfRange(first, n int) int {
	entries, _ := os.ReadDir("/proc")
	count := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+e.Name(), &st) != nil || int(st.Uid) < first || int(st.Uid) >= first+n {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			s := string(b)
			if i := strings.LastIndexByte(s, ')'); i > 0 && strings.HasPrefix(s[i+1:], " Z") {
				continue
			}
		}
		count++
	}
	return count
}

// Issue 21 (6): a call's processes that outlive a killed sandboxd (its
// children reparented away from the call's leader) are killed when
// sandboxd starts again, by the sweep of its uid range.
func TestRestartSweepsWhatAKilledSandboxdLeft(t *testing.T) {
	requireKernel(t)
	if os.Geteuid() != 0 {
		t.Skip("sandboxd needs root")
	}
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	const first, count = 510200, 16
	// sandboxd is killed here, so its cgroup tree stays: remove it.
	t.Cleanup(func() { removeCgroupTrees(t, "astralvessel-510200-16-") })
	start := func() (*exec.Cmd, sandboxv1.RunServiceClient, context.Context) {
		addr := freeAddr(t)
		cmd := exec.Command(bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
			"--listen", addr, "--uid-range", strconv.Itoa(first)+":"+strconv.Itoa(count),
			"--uid-lock-dir", filepath.Join(base, "uids"))
		cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=tok"}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c := sandboxv1.NewRunServiceClient(conn)
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer tok")
		for i := 0; ; i++ {
			if _, err := c.Status(ctx, &sandboxv1.StatusRequest{}); err == nil {
				break
			}
			if i > 200 {
				t.Fatal("sandboxd did not come up")
			}
			time.Sleep(50 * time.Millisecond)
		}
		return cmd, c, ctx
	}
	cmd, client, ctx := start()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := client.Run(cctx, &sandboxv1.RunRequest{TurnId: "t", Owner: "o", CallId: "c", Tool: "bash",
		ArgumentsJson: `{"command":"(sleep 300 &); (sleep 300 &); echo started; sleep 300"}`})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := st.Recv(); err != nil || !strings.Contains(string(ev.GetStdout()), "started") {
		t.Fatalf("the call did not start: %v %v", ev, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// The leader dies with sandboxd (parent-death signal); the reparented
	// sleeps do not.
	deadline := time.Now().Add(10 * time.Second)
	for procsOfRange(first, count) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the range after sandboxd died, want the 2 reparented sleeps", procsOfRange(first, count))
		}
		time.Sleep(20 * time.Millisecond)
	}
	start()
	deadline = time.Now().Add(10 * time.Second)
	for procsOfRange(first, count) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the previous run survived the restart", procsOfRange(first, count))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
