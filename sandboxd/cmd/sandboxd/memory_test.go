package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sandboxv1 "github.com/astraldeep/astralvessel-go/proto/astralvessel/sandbox/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// peakRSS is a process's high-water resident size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// W3: many parallel output floods to a reader that falls behind keep
// sandboxd's own memory bounded (the output budget, gRPC's per-stream
// write quota and the runtime's soft memory limit), instead of growing
// with every call's output (they once took it from 35 to 244 MB; here
// about 17 to 130 MB without the limit).
func TestOutputFloodsKeepSandboxdSmall(t *testing.T) {
	requireKernel(t)
	if os.Geteuid() != 0 {
		t.Skip("sandboxd needs root")
	}
	base, pkg := agentDir(t)
	bin := buildBinary(t, base)
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--agent", "a", "--package", pkg, "--tools", testTools, "--scratch", filepath.Join(base, "scratch"),
		"--listen", addr, "--uid-range", "510064:64", "--output-budget", "4MiB")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "VESSEL_SANDBOX_TOKEN=tok"}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stopSandboxd(cmd)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := sandboxv1.NewRunServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer tok")
	for i := 0; ; i++ {
		if _, err := client.Status(ctx, &sandboxv1.StatusRequest{}); err == nil {
			break
		}
		if i > 200 {
			t.Fatalf("sandboxd did not come up\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := peakRSS(t, cmd.Process.Pid)
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			st, err := client.Run(cctx, &sandboxv1.RunRequest{TurnId: fmt.Sprintf("flood-%d", i), Owner: "o", CallId: "c",
				Tool: "bash", ArgumentsJson: `{"command":"head -c 16M /dev/zero | tr '\\0' x"}`})
			if err != nil {
				t.Error(err)
				return
			}
			for {
				ev, err := st.Recv()
				if err != nil || ev.GetExit() != nil {
					return
				}
				time.Sleep(2 * time.Millisecond) // a reader that falls behind
			}
		}()
	}
	wg.Wait()
	grown := peakRSS(t, cmd.Process.Pid) - before
	t.Logf("sandboxd's peak RSS grew by %d MiB (from %d MiB)", grown>>20, before>>20)
	if grown > 96<<20 {
		t.Fatalf("24 output floods grew sandboxd by %d MiB", grown>>20)
	}
}
