package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// replayUpstream serves recorded provider streams (vessel/model's replay
// corpus) as the stack's model upstream: the first request of a turn gets
// the case its user message names, a request after a tool result gets a
// short final answer. It keeps every request body it received.
type replayUpstream struct {
	dir    string
	mu     sync.Mutex
	bodies []string
}

func (u *replayUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, string(b))
	u.mu.Unlock()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(b, &req)
	w.Header().Set("Content-Type", "text/event-stream")
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "tool" {
		_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
		return
	}
	var name string
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			_ = json.Unmarshal(req.Messages[i].Content, &name)
			break
		}
	}
	body, err := os.ReadFile(filepath.Join(u.dir, filepath.Clean("/"+name)))
	if err != nil {
		http.Error(w, `{"error":{"message":"no such case"}}`, http.StatusNotFound)
		return
	}
	for bytes.HasPrefix(body, []byte("# ")) { // the source lines
		body = body[bytes.IndexByte(body, '\n')+1:]
	}
	_, _ = w.Write(body)
}

func (u *replayUpstream) last() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		return ""
	}
	return u.bodies[len(u.bodies)-1]
}

// TestLocalStackProviderReplays runs recorded provider streams through the
// real vessel, egress and sandbox: DeepSeek's reasoning, vLLM's reasoning
// under both its names, Gemini's thought signatures and the parallel calls of
// Ollama (ended by finish_reason stop), vLLM and OpenAI reach the next
// request through the egress, Mistral's thinking parts leave the answer text
// alone, a cut by length, Azure's content filter, a llama.cpp error line,
// Groq's event: error and OpenRouter's error chunk each fail the task with
// their reason.
func TestLocalStackProviderReplays(t *testing.T) {
	if os.Getenv("VESSEL_E2E_LOCAL") != "1" {
		t.Skip("set VESSEL_E2E_LOCAL=1 to run the local-stack end-to-end tests")
	}
	bin := productBins(t)
	up := &replayUpstream{dir: filepath.Join(repoRoot(t), "vessel", "model", "testdata", "providers")}
	srv := httptest.NewServer(up)
	defer srv.Close()

	dep, env := upstreamDeployment(t)
	env = append(env, "VESSEL_UPSTREAM_MODEL_URL="+srv.URL+"/v1", "VESSEL_MODEL_KEY=sk-replay")
	info := startUp(t, bin, env, dep)
	for _, c := range []struct {
		file     string
		want     []string // in the task's answer
		nextSent []string // in the last request the upstream received
	}{
		{"deepseek/thinking_tool.sse", []string{"TASK_STATE_COMPLETED", "done"},
			[]string{`"reasoning_content":"The user is asking for the weather in San Francisco. I need to use the weather tool`, `"tool_call_id":"call_00_ioIn7yN9p1ZOMNpDLwd4MgAF"`}},
		{"ollama/parallel_tools.sse", []string{"TASK_STATE_COMPLETED", "done"},
			[]string{`"tool_call_id":"call_b41oui0i"`, `"tool_call_id":"call_82xehfqo"`}},
		{"mistral/thinking_parts.sse", []string{"TASK_STATE_COMPLETED", "2 + 2 = 4"}, nil},
		{"azure/content_filter.sse", []string{"TASK_STATE_FAILED", `incomplete`, `content_filter`}, nil},
		{"gemini/parallel_tools.sse", []string{"TASK_STATE_COMPLETED", "done"},
			[]string{`"extra_content":{"google":{"thought_signature":"CiQBVKhc7sig1=="}}`, `"tool_call_id":"function-call-1"`, `"tool_call_id":"function-call-2"`}},
		{"openai/length.sse", []string{"TASK_STATE_FAILED", `incomplete`, `length`}, nil},
		{"llamacpp/error_event.sse", []string{"TASK_STATE_FAILED", "model_error", "the request exceeds the available context size"}, nil},
		{"groq/error_chunk.sse", []string{"TASK_STATE_FAILED", "model_error", "Tool choice is required, but model did not call a tool"}, nil},
		{"openrouter/length_then_error.sse", []string{"TASK_STATE_FAILED", `incomplete`, `length`}, nil},
		{"vllm/parallel_tools.sse", []string{"TASK_STATE_COMPLETED", "done"},
			[]string{`"tool_call_id":"call_d471ba25b4744d89afb7f854"`, `"tool_call_id":"call_0851281433174dbf9639472e"`}},
		{"vllm/reasoning_both_tool.sse", []string{"TASK_STATE_COMPLETED", "done"},
			[]string{`"reasoning":"\nOkay, the user is asking about the weather in London.`, `"reasoning_content":"\nOkay, the user is asking about the weather in London.`, `"tool_call_id":"chatcmpl-tool-b78bab43f5e43697"`}},
		{"openai/parallel_no_args.sse", []string{"TASK_STATE_COMPLETED", "done"},
			[]string{`"tool_call_id":"call_q2UyBRP7eXNTzAoR8lEhjc9Z"`, `"tool_call_id":"call_b51ijcpFkDiTQG1bQzsrmtW5"`}},
	} {
		t.Run(c.file, func(t *testing.T) {
			code, b := postJSONRPC(t, info, "field-guide", "replay", "m-"+strings.ReplaceAll(c.file, "/", "-"), c.file)
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Fatalf("HTTP %d: the task lacks %q: %.1500s", code, w, b)
				}
			}
			last := up.last()
			for _, w := range c.nextSent {
				if !strings.Contains(last, w) {
					t.Fatalf("the request after the tool step lacks %s: %.2000s", w, last)
				}
			}
		})
	}
}
