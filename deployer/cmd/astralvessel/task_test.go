package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Issue 17 (6): ask --background prints the task id at once; task ID shows
// its state and, once it ended, its answer.
func TestAskBackgroundAndTask(t *testing.T) {
	agent := &fakeAgent{}
	srv, state := fakeStack(t, agent)
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := dispatch([]string{"ask", "--state", state, "--background", "Which", "birds", "fish?"}, &out, &errb); code != 0 {
		t.Fatalf("ask --background: code %d, stderr %s", code, errb.String())
	}
	id := strings.TrimSpace(out.String())
	if id == "" || strings.Contains(id, " ") || !strings.Contains(errb.String(), "astralvessel task "+id) {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out.Reset()
		errb.Reset()
		if code := dispatch([]string{"task", "--state", state, id}, &out, &errb); code != 0 {
			t.Fatalf("task: code %d, stderr %s", code, errb.String())
		}
		if strings.HasPrefix(out.String(), "task "+id+": TASK_STATE_COMPLETED\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task output %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "Ospreys.") {
		t.Errorf("no answer in %q", out.String())
	}
	// Usage errors.
	if code := dispatch([]string{"task", "--state", state}, &out, &errb); code != 2 {
		t.Errorf("task without an id: %d", code)
	}
	if code := dispatch([]string{"ask", "--state", state, "--webhook", "http://127.0.0.1:1/h", "hi"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "need --background") {
		t.Errorf("--webhook without --background: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"ask", "--state", state, "--background", "--webhook-working", "hi"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), "--webhook-working needs --webhook") {
		t.Errorf("--webhook-working without --webhook: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := dispatch([]string{"task", "--state", state, "no-such-task"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not found") {
		t.Errorf("unknown task: %d %s", code, errb.String())
	}
}
