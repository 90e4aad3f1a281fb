package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
	usagelog "github.com/astraldeep/astralvessel-go/runtime/usage"
)

// TestUsageCommand: astralvessel usage sums a real usage log by app, user
// and agent within --from/--to, reports a malformed line on stderr without
// failing, and refuses bad flags with exit 2.
func TestUsageCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.jsonl")
	rc, err := usagelog.Open(path, rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i, r := range []usagelog.Record{
		{Owner: "shop/ann", App: "shop", User: "ann", Agent: "alpha", Status: "ok", TokensIn: 100, TokensOut: 10, Steps: 2, ToolCalls: 1, DurationMS: 1500},
		{Owner: "shop/bob", App: "shop", User: "bob", Agent: "beta", Status: "model_error", TokensIn: 50, Steps: 1, DurationMS: 500},
		{Owner: "desk/ann", App: "desk", User: "ann", Agent: "alpha", Status: "ok", TokensIn: 1, TokensOut: 1, Steps: 1},
	} {
		r.Time, r.Task, r.Model = at.Add(time.Duration(i)*time.Hour), "t", "m"
		if err := rc.Record(&r); err != nil {
			t.Fatal(err)
		}
	}
	_ = rc.Record(&usagelog.Record{Time: at.AddDate(0, 0, 2), Agent: "alpha", Status: "ok", App: "late", Owner: "late/x"})
	_ = rc.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("garbage\n")
	f.Close()

	code, out, errOut := run("usage", path, "--by", "app", "--from", "2026-12-01", "--to", "2026-12-02")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, path+":5:") {
		t.Errorf("malformed line not reported: %q", errOut)
	}
	for _, want := range []string{"APP", "desk  ", "shop  ", "model_error=1,ok=1", "3 turn(s), 1 malformed line(s) skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "late") {
		t.Errorf("a record after --to counted:\n%s", out)
	}
	t.Setenv("VESSEL_USAGE_LOG", path)
	code, out, _ = run("usage", "--by", "user", "--to", "2026-12-02T00:00:00Z", "--json")
	var js struct {
		Records int64          `json:"records"`
		Rows    []usagelog.Row `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.Records != 3 || len(js.Rows) != 3 || js.Rows[1].Key != "shop/ann" || js.Rows[1].TokensIn != 100 {
		t.Fatalf("--json by user: exit %d %s", code, out)
	}
	for _, bad := range [][]string{
		{"usage", path, "--by", "model"},
		{"usage", path, "--from", "yesterday"},
		{"usage", path, "--from", "2026-12-02", "--to", "2026-12-01"},
	} {
		if code, _, errOut := run(bad...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d %q", bad, code, errOut)
		}
	}
	if code, _, _ := run("usage", filepath.Join(t.TempDir(), "missing.jsonl")); code != 1 {
		t.Errorf("a missing log: exit %d", code)
	}
}

// TestUsageReadsTheDeployedLog: in the folder astralvessel deploy wrote,
// usage needs no argument (records/vessel/usage.jsonl); elsewhere, with
// nothing named, it says what to set.
func TestUsageReadsTheDeployedLog(t *testing.T) {
	t.Setenv("VESSEL_USAGE_LOG", "")
	t.Chdir(t.TempDir())
	if code, _, errOut := run("usage"); code != 2 || !strings.Contains(errOut, "VESSEL_USAGE_LOG") || !strings.Contains(errOut, "records/vessel/usage.jsonl") {
		t.Fatalf("no log anywhere: exit %d %q", code, errOut)
	}
	if err := os.MkdirAll(filepath.Join("records", "vessel"), 0o750); err != nil {
		t.Fatal(err)
	}
	rc, err := usagelog.Open(filepath.Join("records", "vessel", "usage.jsonl"), rotlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Record(&usagelog.Record{Time: time.Now().UTC(), Task: "t", Owner: "shop/ann", App: "shop", User: "ann", Agent: "alpha", Status: "ok"}); err != nil {
		t.Fatal(err)
	}
	_ = rc.Close()
	if code, out, errOut := run("usage", "--by", "app"); code != 0 || !strings.Contains(out, "shop") || !strings.Contains(out, "1 turn(s)") {
		t.Fatalf("usage in the deploy folder: exit %d %q %q", code, out, errOut)
	}
}
