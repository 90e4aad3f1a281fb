package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalStackLogsAreJSON starts the local stack, runs one turn and reads
// every file in its log folder, the launcher's own stream
// (launcher.jsonl) included: every line is one JSON object, so a shipper
// reads one stream without special cases (issue 34). Like TestLocalStack it
// runs only with VESSEL_E2E_LOCAL=1.
func TestLocalStackLogsAreJSON(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	dep, _ := filepath.Abs("testdata/deployment.toml")
	info := startUp(t, bin, nil, "--scripted", dep)
	if code, b := helloTurn(t, info, "logs"); code != http.StatusOK || !strings.Contains(string(b), "TASK_STATE_COMPLETED") {
		t.Fatalf("turn: HTTP %d %.300s", code, b)
	}
	// Read while the stack runs: its folder goes with the test's temporary
	// folders before a cleanup registered here would run.
	files, err := filepath.Glob(filepath.Join(info.state, "logs", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no log files in %s: %v", filepath.Join(info.state, "logs"), err)
	}
	sawLauncher := false
	for _, f := range files {
		sawLauncher = sawLauncher || filepath.Base(f) == "launcher.jsonl"
		checkJSONLines(t, f)
	}
	if !sawLauncher {
		t.Errorf("no launcher.jsonl among %v", files)
	}
}

// checkJSONLines fails t for each line of file that is not one JSON object.
func checkJSONLines(t *testing.T, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	n, bad := 0, 0
	for sc.Scan() {
		n++
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			if bad++; bad <= 5 {
				t.Errorf("%s:%d is not a JSON object (%v): %.200s", filepath.Base(file), n, err, sc.Text())
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("%s: %v", file, err)
	}
	if bad > 5 {
		t.Errorf("%s: %d lines of %d are not JSON", filepath.Base(file), bad, n)
	}
}

// helloTurn sends one SendMessage ("hello") to the stack's field-guide as
// user and returns the HTTP status and body.
func helloTurn(t *testing.T, info *localUp, user string) (int, []byte) {
	t.Helper()
	return postJSONRPC(t, info, "field-guide", user, "m-"+user, "hello")
}
