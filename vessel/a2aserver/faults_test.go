package a2aserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/a2aserver"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// brokenModel is an OpenAI-compatible server that misbehaves in the way the
// last user message names; it records how much it managed to write.
type brokenModel struct {
	written atomic.Int64 // bytes of the last response
	srv     *httptest.Server
}

func lastUserText(r *http.Request) string {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		return ""
	}
	for i := len(body.Messages) - 1; i >= 0; i-- {
		if body.Messages[i].Role == "user" {
			var s string
			_ = json.Unmarshal(body.Messages[i].Content, &s)
			return s
		}
	}
	return ""
}

func newBrokenModel(t *testing.T) *brokenModel {
	b := &brokenModel{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mode := lastUserText(r)
		w.Header().Set("Content-Type", "text/event-stream")
		b.written.Store(0)
		write := func(s string) bool {
			n, err := fmt.Fprint(w, s)
			b.written.Add(int64(n))
			return err == nil
		}
		// Each mode writes up to total bytes, the same buffer again and again.
		var head, line string
		total := int64(50 << 20)
		switch mode {
		case "text flood": // 50 MB of text in 16 KiB pieces
			line = `data: {"choices":[{"delta":{"content":"` + strings.Repeat("t", 16<<10) + `"}}]}` + "\n\n"
		case "one huge chunk": // one 20 MB delta
			total = 20 << 20
			head = `data: {"choices":[{"delta":{"content":"`
			line = strings.Repeat("h", 64<<10)
		case "reasoning flood": // 50 MB of reasoning
			line = `data: {"choices":[{"delta":{"reasoning_content":"` + strings.Repeat("r", 16<<10) + `"}}]}` + "\n\n"
		case "huge arguments": // a tool call whose arguments never end
			head = `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":""}}]}}]}` + "\n\n"
			line = `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("a", 16<<10) + `"}}]}}]}` + "\n\n"
		case "cut by length": // a stop at the token limit, mid-answer
			write(`data: {"choices":[{"delta":{"content":"{\""},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n")
			return
		default:
			write(`data: {"choices":[{"delta":{"content":"fine"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
			return
		}
		if !write(head) {
			return
		}
		for b.written.Load() < total {
			if !write(line) {
				return
			}
		}
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// heapPeak samples the heap while a turn runs and returns the growth of its
// peak over the level before.
type heapPeak struct {
	base, peak uint64
	stop       chan struct{}
	wg         sync.WaitGroup
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p := &heapPeak{base: ms.HeapAlloc, peak: ms.HeapAlloc, stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				p.peak = max(p.peak, ms.HeapAlloc)
			}
		}
	}()
	return p
}

func (p *heapPeak) growth() uint64 {
	close(p.stop)
	p.wg.Wait()
	return p.peak - p.base
}

// TestIncompleteAnswerFails: an answer cut at the model's token limit is
// never stored as completed: the task fails with status incomplete, and
// the reason is in turn.finished and in the final status's metadata.
func TestIncompleteAnswerFails(t *testing.T) {
	bm := newBrokenModel(t)
	h := newHarness(t, func(d *settings.Deployment) {
		d.Agents[0].Manifest.Model.BaseURL = bm.srv.URL + "/v1"
	})
	var evs []a2a.Event
	for ev, err := range h.client("field-guide").SendStreamingMessage(as(h.keyApp1, "alice"), &a2a.SendMessageRequest{Message: textMsg("cut by length")}) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	state, data := lastEvent(t, evs)
	su := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if state != a2a.TaskStateFailed || data["status"] != "incomplete" || data["reason"] != "length" || su.Metadata[a2aserver.ReasonMetaKey] != "length" {
		t.Fatalf("final: %s %v %v", state, data, su.Metadata)
	}
	if !strings.HasPrefix(fmt.Sprint(data["error"]), "incomplete: length") || fmt.Sprint(data["completion_tokens"]) != "1" {
		t.Fatalf("final: %v", data)
	}
}

// TestModelOutputLimits: a model streaming 50 MB of text, one 20 MB chunk,
// or endless tool-call arguments ends the turn with output_limit, the
// stream cut; the stored answer is at most the limit and the heap grows by
// far less than what the model sent.
func TestModelOutputLimits(t *testing.T) {
	bm := newBrokenModel(t)
	h := newHarness(t, func(d *settings.Deployment) {
		d.Agents[0].Manifest.Model.BaseURL = bm.srv.URL + "/v1" // limits left at their defaults (1 MiB)
		d.Agents[1].Manifest.Model.BaseURL = bm.srv.URL + "/v1"
		d.Agents[1].Manifest.Model.MaxAnswerBytes = 64 << 10
	})
	// Less garbage between collections, so the peak shows what is kept.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	const limit = 1 << 20
	for _, tc := range []struct {
		agent, key, mode, why string
		limit                 int
	}{
		{"field-guide", h.keyApp1, "text flood", "max_answer_bytes", limit},
		{"field-guide", h.keyApp1, "one huge chunk", "stream went over", limit},
		{"field-guide", h.keyApp1, "huge arguments", "max_tool_arguments_bytes", limit},
		{"field-guide", h.keyApp1, "reasoning flood", "reasoning went over", limit},
		{"reader", h.keyApp2, "text flood", "limit of 65536 bytes", 64 << 10},
	} {
		t.Run(tc.agent+" "+tc.mode, func(t *testing.T) {
			peak := startHeapPeak()
			var last a2a.Event
			var id a2a.TaskID
			text := 0
			for ev, err := range h.client(tc.agent).SendStreamingMessage(as(tc.key, "alice"), &a2a.SendMessageRequest{Message: textMsg(tc.mode)}) {
				if err != nil {
					t.Fatal(err)
				}
				if task, ok := ev.(*a2a.Task); ok {
					id = task.ID
				}
				if d := eventOf(ev); d["type"] == "text.delta" {
					text += len(d["text"].(string))
				}
				last = ev // keep one frame only: the test itself must not hold the stream
			}
			grew := peak.growth()
			state, data := lastEvent(t, []a2a.Event{last})
			if state != a2a.TaskStateFailed || data["status"] != "output_limit" || !strings.Contains(fmt.Sprint(data["error"]), tc.why) {
				t.Fatalf("final: %s %v", state, data)
			}
			if text > tc.limit {
				t.Fatalf("%d bytes of text.delta, limit %d", text, tc.limit)
			}
			if w := bm.written.Load(); w >= 20<<20 {
				t.Fatalf("the model wrote %d bytes: its stream was not closed at the limit", w)
			}
			task, err := h.client(tc.agent).GetTask(as(tc.key, "alice"), &a2a.GetTaskRequest{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			answer := 0
			for _, a := range task.Artifacts {
				for _, p := range a.Parts {
					answer += len(p.Text())
				}
			}
			if answer > tc.limit || task.Status.State != a2a.TaskStateFailed {
				t.Fatalf("stored task: %s, answer %d bytes, limit %d", task.Status.State, answer, tc.limit)
			}
			t.Logf("%s: model wrote %d MB before the cut, heap peak +%.1f MB, answer %d bytes", tc.mode, bm.written.Load()>>20, float64(grew)/(1<<20), answer)
			// The heap is the test process's: the vessel's copies of the answer
			// (model, loop, artifact, the SDK's copy, store, SSE encoding) and
			// the in-process client's (SSE line, decoded frame, GetTask).
			// Without the limits it grew with what the model sent (50 MB here).
			if grew > 10*limit+4<<20 {
				t.Fatalf("heap grew by %d bytes for a %d-byte limit", grew, limit)
			}
		})
	}
}
