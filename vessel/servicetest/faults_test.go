package servicetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// misbehaving answers the last user messages it knows with a broken stream
// and hands every other request to next (the scripted model).
func misbehaving(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		mode := ""
		for _, m := range body.Messages {
			if m.Role == "user" {
				_ = json.Unmarshal(m.Content, &mode)
			}
		}
		var head, line string
		total := 50 << 20
		switch mode {
		case "flood":
			line = `data: {"choices":[{"delta":{"content":"` + strings.Repeat("t", 16<<10) + `"}}]}` + "\n\n"
		case "chunk":
			total = 20 << 20
			head, line = `data: {"choices":[{"delta":{"content":"`, strings.Repeat("h", 64<<10)
		case "reasoning":
			line = `data: {"choices":[{"delta":{"reasoning_content":"` + strings.Repeat("r", 16<<10) + `"}}]}` + "\n\n"
		case "arguments":
			head = `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":""}}]}}]}` + "\n\n"
			line = `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("a", 16<<10) + `"}}]}}]}` + "\n\n"
		default:
			r.Body = io.NopCloser(bytes.NewReader(raw))
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		written, _ := fmt.Fprint(w, head)
		for written < total {
			n, err := fmt.Fprint(w, line)
			if err != nil {
				return
			}
			written += n
		}
	})
}

// vmKB reads a field such as VmHWM or VmRSS (kB) of a process.
func vmKB(t *testing.T, pid int, field string) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestModelFloodMemory: the real vessel against a model that streams 50 MB
// of text, one 20 MB chunk, endless tool-call arguments or 50 MB of
// reasoning: each turn ends
// with output_limit and the vessel's peak resident memory stays near its
// resting size (it grew with the output before the limits: 242 MB for
// 10 MB of text).
func TestModelFloodMemory(t *testing.T) {
	s := startStackWith(t, stackConfig{model: misbehaving})
	pid := s.vessel.Process.Pid
	rest := vmKB(t, pid, "VmRSS")
	cl := s.client()
	for _, mode := range []string{"flood", "chunk", "arguments", "reasoning"} {
		var last a2a.Event
		var id a2a.TaskID
		for ev, err := range cl.SendStreamingMessage(alice(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(mode))}) {
			if err != nil {
				t.Fatal(err)
			}
			if task, ok := ev.(*a2a.Task); ok {
				id = task.ID
			}
			last = ev
		}
		if d := dataOf(last); d["status"] != "output_limit" {
			t.Fatalf("%s: final %v", mode, d)
		}
		task, err := cl.GetTask(alice(), &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		answer := 0
		for _, a := range task.Artifacts {
			for _, p := range a.Parts {
				answer += len(p.Text())
			}
		}
		if task.Status.State != a2a.TaskStateFailed || answer > 1<<20 {
			t.Fatalf("%s: stored %s with a %d-byte answer", mode, task.Status.State, answer)
		}
		t.Logf("%s: vessel resident at rest %d MB, peak so far %d MB, stored answer %d bytes", mode, rest>>10, vmKB(t, pid, "VmHWM")>>10, answer)
	}
	if peak := vmKB(t, pid, "VmHWM"); peak-rest > 128<<10 {
		t.Fatalf("the vessel's peak resident memory grew by %d MB", (peak-rest)>>10)
	}
}
