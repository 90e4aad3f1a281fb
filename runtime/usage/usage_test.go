package usage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/rotlog"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func rec(app, user, agent, status string, at time.Duration, in, out int64) *Record {
	return &Record{Time: t0.Add(at), Task: "task-" + user, Owner: app + "/" + user, App: app, User: user, Agent: agent,
		Model: "m", Status: status, TokensIn: in, TokensOut: out, Steps: 2, ToolCalls: 3, Files: 1, DurationMS: 100}
}

// writeRotatedLog records n turns (and three more) through a Recorder into
// path until it rotates, then appends malformed lines to the oldest rotated
// file and to the live one; it returns the rotated files.
func writeRotatedLog(t *testing.T, path string, n int) []string {
	t.Helper()
	rc, err := Open(path, rotlog.Options{MaxMB: 1, Backups: 50})
	if err != nil {
		t.Fatal(err)
	}
	// Long owners make each record big, so 3000 of them rotate the 1 MB file.
	long := strings.Repeat("u", 400)
	for i := range n {
		app := "app1"
		if i%3 == 0 {
			app = "app2"
		}
		if err := rc.Record(rec(app, long, "alpha", "ok", time.Duration(i)*time.Second, 10, 1)); err != nil {
			t.Fatal(err)
		}
	}
	// Outside the range below: before From and at To.
	_ = rc.Record(rec("app1", "early", "alpha", "ok", -time.Hour, 1000, 1000))
	_ = rc.Record(rec("app1", "late", "alpha", "ok", 24*time.Hour, 1000, 1000))
	onRoute := rec("app1", "bob", "beta", "model_error", time.Minute, 7, 0)
	onRoute.Route = "azure"
	_ = rc.Record(onRoute)
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := rotlog.Files(path)
	if len(files) < 2 {
		t.Fatalf("the log did not rotate: %v", files)
	}
	// A broken line in a rotated file and one in the live file.
	f, _ := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("{not json\n")
	f.Close()
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"time":"2026-12-01T10:00:00Z","agent":"alpha","status":"ok","tokens_in":-5}` + "\n\n" + `{"surprise":1}` + "\n")
	f.Close()
	return files
}

// TestSummariseRotatedLogs: records written through the Recorder into a
// real file that rotates are all found again (live file and rotated ones),
// summed by app, user and agent within the time range; malformed lines are
// reported by file and line and the rest still counts.
func TestSummariseRotatedLogs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.jsonl")
	const n = 3000
	files := writeRotatedLog(t, path, n)

	from, to := t0, t0.Add(24*time.Hour)
	s, err := SummariseFiles([]string{path}, from, to, ByApp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Records != n+1 {
		t.Fatalf("%d records in range, want %d", s.Records, n+1)
	}
	if s.BadCount != 3 || len(s.Bad) != 3 {
		t.Fatalf("bad lines: %d %v", s.BadCount, s.Bad)
	}
	if s.Bad[0].File != files[0] || !strings.Contains(s.Bad[0].String(), files[0]+":") {
		t.Errorf("first bad line: %v", s.Bad[0])
	}
	want := map[string]Row{
		"app1": {Turns: 2001, TokensIn: 20007, TokensOut: 2000},
		"app2": {Turns: 1000, TokensIn: 10000, TokensOut: 1000},
	}
	if len(s.Rows) != 2 {
		t.Fatalf("rows: %+v", s.Rows)
	}
	for _, r := range s.Rows {
		w := want[r.Key]
		if r.Turns != w.Turns || r.TokensIn != w.TokensIn || r.TokensOut != w.TokensOut || r.Steps != 2*w.Turns || r.ToolCalls != 3*w.Turns {
			t.Errorf("row %s: %+v, want %+v", r.Key, r, w)
		}
	}
	s, _ = SummariseFiles([]string{path}, from, to, ByAgent)
	if len(s.Rows) != 2 || s.Rows[1].Key != "beta" || s.Rows[1].Statuses["model_error"] != 1 {
		t.Errorf("by agent: %+v", s.Rows)
	}
	// Records without a route (written before routes) took the default one.
	s, _ = SummariseFiles([]string{path}, from, to, ByRoute)
	if len(s.Rows) != 2 || s.Rows[0].Key != "azure" || s.Rows[0].Turns != 1 || s.Rows[1].Key != "default" || s.Rows[1].Turns != n {
		t.Errorf("by route: %+v", s.Rows)
	}
	s, _ = SummariseFiles([]string{path}, from, to, ByUser)
	if len(s.Rows) != 3 || s.Rows[0].Key != "app1/bob" {
		t.Errorf("by user: %+v", s.Rows)
	}
	if _, err := SummariseFiles([]string{filepath.Join(dir, "none.jsonl")}, from, to, ByApp); err == nil {
		t.Error("a missing log summarised")
	}
}

// TestOverlongLineSkipped: a line over the bound is reported and the next
// record still counts.
func TestOverlongLineSkipped(t *testing.T) {
	good := `{"time":"2026-12-01T10:00:00Z","task":"t","owner":"a/u","app":"a","user":"u","agent":"alpha","model":"m","status":"ok","tokens_in":1,"tokens_out":2,"steps":1,"tool_calls":0,"files":0,"duration_ms":5}`
	su := &Summariser{By: ByAgent}
	in := strings.Repeat("x", maxLine+100) + "\n" + good + "\n" + strings.Repeat("y", maxLine+1)
	if err := su.Add("mem", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	s := su.Summary()
	if s.Records != 1 || s.BadCount != 2 || s.Bad[0].Line != 1 || s.Bad[1].Line != 3 {
		t.Fatalf("%+v", s)
	}
}

func TestSplitOwner(t *testing.T) {
	for in, want := range map[string][2]string{"app/u/x": {"app", "u/x"}, "iss|sub": {"iss", "sub"}, "solo": {"solo", ""}} {
		if a, u := SplitOwner(in); a != want[0] || u != want[1] {
			t.Errorf("%s: %s %s", in, a, u)
		}
	}
}

func FuzzSummariseLine(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-01T10:00:00Z","agent":"a","status":"ok"}`))
	f.Add([]byte("{\n}\n\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		su := &Summariser{By: ByApp}
		if err := su.Add("fuzz", strings.NewReader(string(b))); err != nil {
			t.Fatal(err)
		}
		s := su.Summary()
		for _, r := range s.Rows {
			if r.TokensIn < 0 || r.Turns <= 0 {
				t.Fatalf("row %+v", r)
			}
		}
	})
}
