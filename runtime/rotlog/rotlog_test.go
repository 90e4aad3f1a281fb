package rotlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAppendRotatesAndLists: records go in one a line, the file is rotated
// past its size into stamped files, and Files lists them oldest first with the live file last; every line of
// every file is whole JSON and none is lost between the kept files.
func TestAppendRotatesAndLists(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "usage.jsonl")
	// Unrelated files beside it are never listed.
	for _, n := range []string{"usage-notes.jsonl", "usage.jsonl.bak", "other-2026-01-01T00-00-00.000.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err := Open(path, Options{MaxMB: 1, Backups: 2})
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("p", 1000)
	var wg sync.WaitGroup
	const writers, each = 4, 900 // about 3.6 MB: three rotations
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := w.Append(map[string]any{"g": g, "i": i, "pad": pad}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := Files(path)
	if err != nil {
		t.Fatal(err)
	}
	// lumberjack removes backups past the bound in the background, so only
	// that rotation happened is checked here, not how many are left.
	if len(files) < 2 {
		t.Fatalf("no rotation: %v", files)
	}
	if files[len(files)-1] != path {
		t.Fatalf("live file not last: %v", files)
	}
	lines := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // a backup past the bound, removed by lumberjack meanwhile
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 4096), 1<<20)
		for sc.Scan() {
			var v map[string]any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("%s: a line is not whole JSON: %v", f, err)
			}
			lines++
		}
		// Stat the open file: lumberjack may remove a backup by name at
		// any moment (it did, between the scan and a Stat of the path).
		st, err := fh.Stat()
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, over the 1 MB bound", f, st.Size())
		}
		if st.Mode().Perm() != FileMode {
			t.Errorf("%s has mode %v", f, st.Mode().Perm())
		}
	}
	if lines == 0 || lines > writers*each {
		t.Fatalf("%d lines", lines)
	}
}

func TestOpenRefusesBadPaths(t *testing.T) {
	if _, err := Open("", Options{}); err == nil {
		t.Error("empty path accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir", "x.jsonl"), Options{}); err == nil {
		t.Error("a path in a missing directory accepted")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x.jsonl"), Options{MaxMB: -1}); err == nil {
		t.Error("negative size accepted")
	}
}

func TestOptionsFromEnv(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if o, err := OptionsFromEnv(get); err != nil || o != (Options{}) {
		t.Fatalf("unset: %+v %v", o, err)
	}
	env["VESSEL_RECORD_LOG_MAX_MB"], env["VESSEL_RECORD_LOG_BACKUPS"] = "5", " 3 "
	if o, err := OptionsFromEnv(get); err != nil || o.MaxMB != 5 || o.Backups != 3 {
		t.Fatalf("set: %+v %v", o, err)
	}
	for _, bad := range []string{"0", "-1", "ten"} {
		env["VESSEL_RECORD_LOG_BACKUPS"] = bad
		if _, err := OptionsFromEnv(get); err == nil || !strings.Contains(err.Error(), "VESSEL_RECORD_LOG_BACKUPS") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
