package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/metadata"

	"github.com/astraldeep/astralvessel-go/runtime/audit"
	"github.com/astraldeep/astralvessel-go/runtime/metricdoc"
	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/server"
	"github.com/astraldeep/astralvessel-go/sandboxd/internal/workspace"
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

// TestAuditProcessActivity: each call writes one OCSF Process Activity
// event to a real file, joinable to the turn by the task id the vessel
// sent: a confined shell call with its pid and the turn's uid, a failing
// exit, a call stopped at its timeout, and a refused unknown tool.
func TestAuditProcessActivity(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, "sandboxd", "test", rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOpts{audit: w})
	ctx := metadata.AppendToOutgoingContext(context.Background(), telemetry.TaskIDMetadata, "task-a1")
	for _, c := range []call{
		{turn: "turn-a1", owner: "app/ann", tool: "bash", args: `{"command":"echo hi"}`},
		{turn: "turn-a1", owner: "app/ann", tool: "bash", args: `{"command":"exit 3"}`},
		{turn: "turn-a1", owner: "app/ann", tool: "bash", args: `{"command":"sleep 5"}`, timeoutMs: 200},
		{turn: "turn-a1", owner: "app/ann", tool: "no-such-tool", args: `{}`},
	} {
		if _, err := e.run(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	evs, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4", len(evs))
	}
	for _, ev := range evs {
		if ev.ClassUID != audit.ClassProcessActivity || ev.CategoryUID != audit.CategorySystem || ev.TypeUID != 100701 ||
			ev.Metadata.CorrelationUID != "task-a1" || ev.Actor.User.Name != "app/ann" || ev.Unmapped["turn"] != "turn-a1" {
			t.Errorf("event %+v", ev)
		}
	}
	ok, nonzero, stopped, unknown := evs[0], evs[1], evs[2], evs[3]
	if ok.StatusID != audit.StatusSuccess || ok.Process.Name != "bash" || ok.Process.Pid <= 0 || *ok.ExitCode != 0 {
		t.Errorf("ok call: %+v %+v", ok, ok.Process)
	}
	if *nonzero.ExitCode != 3 || nonzero.StatusCode != "nonzero" {
		t.Errorf("exit 3: %+v", nonzero)
	}
	if stopped.StatusID != audit.StatusFailure || stopped.StatusDetail != "stopped: timeout" {
		t.Errorf("timeout: %+v", stopped)
	}
	if unknown.StatusID != audit.StatusFailure || unknown.Process.Name != "unknown" || unknown.Process.Pid != 0 || unknown.StatusDetail == "" {
		t.Errorf("unknown tool: %+v %+v", unknown, unknown.Process)
	}
}

// TestEveryMetricDocumented: docs/operations.md lists exactly the
// sandboxd_ series NewMetrics and RegisterTier register.
func TestEveryMetricDocumented(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	wm, err := workspace.New(workspace.Config{Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var rec metricdoc.Recorder
	server.NewMetrics(&rec, wm)
	server.RegisterTier(&rec, "confined")
	for _, m := range metricdoc.Mismatches(rec.Names, metricdoc.Documented(md), "sandboxd_") {
		t.Error(m)
	}
}
