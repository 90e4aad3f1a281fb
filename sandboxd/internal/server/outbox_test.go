package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/outputfiles/outputfilestest"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
)

func writeGoodFiles(t *testing.T, e *env) string {
	dir := filepath.Join(e.pkg, "files")
	if err := mkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "chart.png"), outputfilestest.TinyPNG(t), 0o644)
	write(t, filepath.Join(dir, "chart.svg"), []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>`), 0o644)
	write(t, filepath.Join(dir, "table.csv"), []byte("name,count\nwren,3\n\"robin, red\",4\n"), 0o644)
	write(t, filepath.Join(dir, "report.pdf"), []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"), 0o644)
	return dir
}

func names[T interface{ GetName() string }](xs []T) string {
	var out []string
	for _, x := range xs {
		out = append(out, x.GetName())
	}
	return strings.Join(out, ",")
}

func TestOutboxKeepsGoodFiles(t *testing.T) {
	e := newEnv(t, envOpts{})
	dir := writeGoodFiles(t, e)
	r := e.bash("turn-ob", "cp "+dir+"/* \"$VESSEL_OUTBOX\"/")
	if names(r.files) != "chart.png,chart.svg,report.pdf,table.csv" || len(r.refused) != 0 {
		t.Fatalf("files %s refused %v\n%s", names(r.files), r.refused, r)
	}
	for _, f := range r.files {
		want := map[string]string{"chart.png": "image/png", "chart.svg": "image/svg+xml", "report.pdf": "application/pdf", "table.csv": "text/csv"}[f.Name]
		if f.MediaType != want || len(f.Content) == 0 {
			t.Fatalf("%s: %s %d bytes", f.Name, f.MediaType, len(f.Content))
		}
	}
	// The outbox is emptied after each call.
	r = e.bash("turn-ob", "ls -A \"$VESSEL_OUTBOX\" | wc -l")
	if strings.Fields(r.stdout)[0] != "0" {
		t.Fatalf("outbox not emptied:\n%s", r)
	}
}

func TestOutboxRefusesBadFiles(t *testing.T) {
	e := newEnv(t, envOpts{})
	dir := writeGoodFiles(t, e)
	bad := map[string]string{
		"fake.png":      "echo not a png > $O/fake.png",
		"html.svg":      "echo '<html><body/></html>' > $O/html.svg",
		"broken.svg":    "echo '<svg><g></svg>' > $O/broken.svg",
		"ragged.csv":    "printf 'a,b\\n1,2,3\\n' > $O/ragged.csv",
		"binary.csv":    "printf 'a,b\\n\\xff\\xfe,1\\n' > $O/binary.csv",
		"nohdr.pdf":     "echo hello > $O/nohdr.pdf",
		".hidden.png":   "cp " + dir + "/chart.png $O/.hidden.png",
		"bad name.png":  "cp " + dir + "/chart.png \"$O/bad name.png\"",
		"noext":         "cp " + dir + "/chart.png $O/noext",
		"evil.exe":      "cp /bin/true $O/evil.exe",
		"notes.txt":     "echo hi > $O/notes.txt",
		"link.csv":      "ln -s /etc/passwd $O/link.csv",
		"inlink.png":    "cp " + dir + "/chart.png chart.png; ln -s $PWD/chart.png $O/inlink.png",
		"dir.png":       "mkdir $O/dir.png",
		"big.png":       "(cat " + dir + "/chart.png; head -c 4100000 /dev/zero) > $O/big.png",
		"truncated.pdf": "head -c 20 " + dir + "/report.pdf > $O/truncated.pdf",
	}
	for name, cmd := range bad {
		t.Run(name, func(t *testing.T) {
			r := e.bash("turn-bad", "O=\"$VESSEL_OUTBOX\"; "+cmd)
			if len(r.files) != 0 {
				t.Fatalf("kept %s\n%s", names(r.files), r)
			}
			if len(r.refused) != 1 || r.refused[0].Name != name || r.refused[0].Reason == "" {
				t.Fatalf("refused %v\n%s", r.refused, r)
			}
		})
	}
}

func TestOutboxReplacedBySymlink(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := e.bash("turn-swap", "rmdir \"$VESSEL_OUTBOX\" && ln -s /etc \"$VESSEL_OUTBOX\"")
	if len(r.files) != 0 {
		t.Fatalf("followed a swapped outbox: %s", names(r.files))
	}
	// Putting links (and a full directory) at the names the next outboxes
	// would get only spoils those names: the next call gets a fresh one.
	e.bash("turn-swap", "for i in $(seq 1 20); do ln -s /etc .outbox-$i; done; "+
		"rm -f .outbox-3 && mkdir .outbox-3 && echo a,b > .outbox-3/old.csv")
	dir := writeGoodFiles(t, e)
	for range 2 {
		r = e.bash("turn-swap", "test -L \"$VESSEL_OUTBOX\" && echo LINK; cp "+dir+"/table.csv \"$VESSEL_OUTBOX\"/")
		if names(r.files) != "table.csv" || len(r.refused) != 0 || r.exit.Error != "" || r.stdout != "" {
			t.Fatalf("outbox not recreated: %s", r)
		}
	}
}

func TestOutboxLimits(t *testing.T) {
	e := newEnv(t, envOpts{})
	dir := writeGoodFiles(t, e)
	r := e.bash("turn-lim", "for i in 1 2 3 4 5; do cp "+dir+"/chart.png \"$VESSEL_OUTBOX\"/c$i.png; done")
	if len(r.files) != 4 || len(r.refused) != 1 || !strings.Contains(r.refused[0].Reason, "at most 4") {
		t.Fatalf("per call: files %s refused %v", names(r.files), r.refused)
	}
	r = e.bash("turn-lim", "for i in 6 7 8 9 10; do cp "+dir+"/chart.png \"$VESSEL_OUTBOX\"/c$i.png; done")
	if len(r.files) != 4 || len(r.refused) != 1 {
		t.Fatalf("second call: files %s refused %v", names(r.files), r.refused)
	}
	r = e.bash("turn-lim", "cp "+dir+"/chart.png \"$VESSEL_OUTBOX\"/c11.png")
	if len(r.files) != 0 || len(r.refused) != 1 || !strings.Contains(r.refused[0].Reason, "turn may return at most 8") {
		t.Fatalf("per turn: files %s refused %v", names(r.files), r.refused)
	}
}

func TestOutboxOnlyListedTypes(t *testing.T) {
	e := newEnv(t, envOpts{manifest: &toolset.Set{Tools: toolset.Builtins{Enabled: []string{"bash"}}, Output: toolset.Output{Files: []string{"png"}}}})
	dir := writeGoodFiles(t, e)
	r := e.bash("turn-types", "cp "+dir+"/* \"$VESSEL_OUTBOX\"/")
	if names(r.files) != "chart.png" || len(r.refused) != 3 {
		t.Fatalf("files %s refused %v", names(r.files), r.refused)
	}
	// Built-ins the manifest does not enable are refused.
	r = e.must(call{turn: "turn-types", tool: "read", args: jsonArgs("path", "x")})
	if !strings.Contains(r.exit.Error, "not enabled") {
		t.Fatalf("read ran: %s", r)
	}
}

// The next call's outbox is made ahead; a call gets it only if it is still
// a fresh, empty directory when the call starts.
func TestOutboxMadeAheadMustStayFresh(t *testing.T) {
	e := newEnv(t, envOpts{})
	dir := writeGoodFiles(t, e)
	spoil := map[string]func(spare string){
		"file put in": func(spare string) {
			_ = os.WriteFile(filepath.Join(spare, "table.csv"), []byte("a,b\n1,2\n"), 0o644)
		},
		"replaced by a link": func(spare string) {
			_ = os.Remove(spare)
			_ = os.Symlink(dir, spare)
		},
		"opened up": func(spare string) { _ = os.Chmod(spare, 0o777) },
	}
	for name, how := range spoil {
		t.Run(name, func(t *testing.T) {
			turn := "turn-ahead-" + strings.ReplaceAll(name, " ", "-")
			e.bash(turn, "true")
			spare := waitSpare(t, e.workspace(turn))
			how(spare)
			r := e.bash(turn, "ls -A \"$VESSEL_OUTBOX\"; stat -c %a \"$VESSEL_OUTBOX\"; test -L \"$VESSEL_OUTBOX\" && echo LINK")
			if len(r.files) != 0 || strings.TrimSpace(r.stdout) != "700" {
				t.Fatalf("the call got a spoiled outbox: files %s\n%s", names(r.files), r)
			}
		})
	}
}

// A call's empty outbox is kept for the next call only as it was made.
func TestOutboxLeftOpenIsNotHandedOn(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.bash("turn-open", "chmod 777 \"$VESSEL_OUTBOX\"")
	waitSpare(t, e.workspace("turn-open"))
	r := e.bash("turn-open", "stat -c %a \"$VESSEL_OUTBOX\"; ls -A \"$VESSEL_OUTBOX\"")
	if strings.TrimSpace(r.stdout) != "700" {
		t.Fatalf("the next call got the opened outbox:\n%s", r)
	}
}

// waitSpare returns the outbox made ahead for a turn's next call.
func waitSpare(t *testing.T, ws string) string {
	t.Helper()
	for range 500 {
		if boxes, _ := filepath.Glob(filepath.Join(ws, ".outbox-*")); len(boxes) == 1 {
			return boxes[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no outbox made ahead")
	return ""
}
