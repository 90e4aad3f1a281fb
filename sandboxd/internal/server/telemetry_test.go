package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/metadata"

	"github.com/astraldeep/astralvessel-go/deployer/telemetry"
)

// TestCallLinesCarryTaskIDAndSeriesMove: sandboxd logs the task id the
// vessel sent on its line about each call, and the call series move with
// the tool's name and exit class, never the task or the owner.
func TestCallLinesCarryTaskIDAndSeriesMove(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	e := newEnv(t, envOpts{logger: zap.New(core), registry: reg})
	ctx := metadata.AppendToOutgoingContext(context.Background(), telemetry.TaskIDMetadata, "task-5e1d")
	for _, c := range []call{
		{turn: "turn-t1", owner: "app/owner-q7", tool: "bash", args: `{"command":"echo hi"}`},
		{turn: "turn-t1", owner: "app/owner-q7", tool: "bash", args: `{"command":"exit 3"}`},
		{turn: "turn-t1", owner: "app/owner-q7", tool: "no-such-tool", args: `{}`},
	} {
		if _, err := e.run(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	lines := logs.FilterMessage("call").All()
	if len(lines) != 3 {
		t.Fatalf("want 3 call lines, got %d", len(lines))
	}
	wantExit := []string{"ok", "nonzero", "error"}
	for i, l := range lines {
		m := l.ContextMap()
		if m["task"] != "task-5e1d" || m["turn"] != "turn-t1" || m["exit"] != wantExit[i] {
			t.Errorf("line %d: %v", i, m)
		}
	}
	hs := httptest.NewServer(telemetry.Handler(reg))
	defer hs.Close()
	resp, err := http.Get(hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	out := string(b)
	for _, want := range []string{
		`sandboxd_calls_total{exit="ok",tool="bash"} 1`,
		`sandboxd_calls_total{exit="nonzero",tool="bash"} 1`,
		`sandboxd_calls_total{exit="error",tool="unknown"} 1`,
		`sandboxd_call_duration_seconds_count{tool="bash"} 2`,
		`sandboxd_spawn_duration_seconds_count 2`,
		`sandboxd_active_turns 1`,
		`sandboxd_workspace_bytes `,
		`sandboxd_workspace_inodes `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %s", want)
		}
	}
	for _, secret := range []string{"task-5e1d", "turn-t1", "owner-q7", "no-such-tool"} {
		if strings.Contains(out, secret) {
			t.Errorf("a series carries %q", secret)
		}
	}
}
