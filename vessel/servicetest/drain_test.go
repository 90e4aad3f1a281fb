package servicetest

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// waitNotReady polls the vessel's /health for 2 s and fails unless the
// guide agent turns unready in that time.
func waitNotReady(t *testing.T, vesselURL string) {
	t.Helper()
	sent := time.Now()
	notReady := false
	for time.Since(sent) < 2*time.Second && !notReady {
		resp, err := http.Get(vesselURL + "/health")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			notReady = strings.Contains(string(b), `"guide":false`)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !notReady {
		t.Fatal("readiness did not go false after SIGTERM")
	}
}

// TestSIGTERMDrains: SIGTERM with 20 streams running. Readiness goes false
// at once; a turn that ends within shutdown_grace_seconds finishes
// normally; every other stream still gets its final turn.finished, status
// shutdown, and its task is stored failed; the process exits 0.
func TestSIGTERMDrains(t *testing.T) {
	// 21 streams from one user: above the default per-owner caps ([limits]).
	s := startStackWith(t, stackConfig{vessel: "shutdown_grace_seconds = 4",
		deployment: "[limits]\nmax_turns_per_owner = 32\nmax_streams_per_owner = 32\n"})
	cl := s.client()
	texts := []string{"#script:brief"} // about 2 s
	for range 20 {
		texts = append(texts, "#script:slow") // about 20 s
	}
	type result struct {
		id   a2a.TaskID
		last map[string]any
		st   a2a.TaskState
		err  error
	}
	results := make([]result, len(texts))
	streaming := make(chan struct{}, len(texts))
	var wg sync.WaitGroup
	for i, text := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for ev, err := range cl.SendStreamingMessage(alice(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}) {
				if err != nil {
					results[i].err = err
					return
				}
				if task, ok := ev.(*a2a.Task); ok {
					results[i].id = task.ID
				}
				if d := dataOf(ev); d != nil {
					if first && d["type"] == "text.delta" {
						first = false
						streaming <- struct{}{}
					}
					results[i].last = d
					results[i].st = ev.(*a2a.TaskStatusUpdateEvent).Status.State
				}
			}
		}()
	}
	for range texts {
		select {
		case <-streaming:
		case <-time.After(30 * time.Second):
			t.Fatal("the turns did not all start streaming")
		}
	}
	if err := s.vessel.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitNotReady(t, s.vesselURL)
	wg.Wait()
	exited := make(chan error, 1)
	go func() { exited <- s.vessel.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the vessel exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the vessel did not exit")
	}
	for i, r := range results {
		want, state := "shutdown", a2a.TaskStateFailed
		if i == 0 {
			want, state = "ok", a2a.TaskStateCompleted
		}
		if r.err != nil || r.last["type"] != "turn.finished" || r.last["status"] != want || r.st != state {
			t.Fatalf("stream %d (%s): %v, last event %v in %s", i, texts[i], r.err, r.last, r.st)
		}
	}
	logs, _ := os.ReadFile(s.logs.Name())
	if !strings.Contains(string(logs), "vessel stopping") || !strings.Contains(string(logs), `"stopped":20`) {
		t.Fatalf("drain not logged:\n%s", logs)
	}
	// The tasks were stored failed with the shutdown status by the drain,
	// not by the next start's sweep of running tasks.
	s.startVessel()
	for _, r := range results[1:] {
		task, err := cl.GetTask(alice(), &a2a.GetTaskRequest{ID: r.id})
		if err != nil || task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil {
			t.Fatalf("stored task: %+v %v", task, err)
		}
		if d, _ := task.Status.Message.Parts[0].Data().(map[string]any); d["status"] != "shutdown" {
			t.Fatalf("stored status message %+v", task.Status.Message)
		}
	}
}
