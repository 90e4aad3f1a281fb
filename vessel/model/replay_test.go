package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/transcript"
)

// loadCase reads a replay file: its "# source:" header lines name where
// the stream comes from and are not sent.
func loadCase(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "providers", name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("# source: ")) {
		t.Fatalf("%s does not name its source", name)
	}
	for bytes.HasPrefix(b, []byte("# ")) {
		b = b[bytes.IndexByte(b, '\n')+1:]
	}
	return b
}

// replay serves a recorded stream on loopback and counts requests.
func replay(t *testing.T, body []byte) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		ct := "text/event-stream"
		if bytes.HasPrefix(body, []byte("{")) {
			ct = "application/json" // a server that ignored stream:true
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

type call struct{ id, name, args, extra string }

// TestReplayProviders replays each provider's recorded stream through a
// real HTTP server and checks the exact outcome: the answer, the tool
// calls, the status and reason, the tokens, and what the next request of
// the turn sends back.
func TestReplayProviders(t *testing.T) {
	for _, c := range []struct {
		file       string
		text       string
		calls      []call
		incomplete string // the IncompleteError reason, if any
		errMsg     string // a substring of the *Error's message, if any
		in, out    int
		extra      string // the assistant message's provider fields
		reasoning  string
	}{
		{file: "openai/text.sse", text: "Hello there.", in: 9, out: 3},
		{file: "openai/parallel_tools.sse", calls: []call{{"call_a", "get_weather", `{"city":"Paris"}`, ""}, {"call_b", "get_weather", `{"city":"Oslo"}`, ""}}, in: 80, out: 40},
		{file: "openai/length.sse", text: `{"`, incomplete: IncompleteLength, in: 12, out: 1},
		{file: "openai/refusal.sse", text: "I'm sorry, I can't help with that.", incomplete: IncompleteRefusal},
		{file: "openai/tool_cut_by_length.sse", incomplete: IncompleteLength, calls: []call{{"call_x", "bash", `{"command":"ls -`, ""}}},
		{file: "azure/content_filter.sse", text: "Hey Jude, better", incomplete: IncompleteContentFilter},
		{file: "gemini/parallel_tools.sse", calls: []call{
			{"function-call-1", "species", `{"name":"osprey"}`, `{"extra_content":{"google":{"thought_signature":"CiQBVKhc7sig1=="}}}`},
			{"function-call-2", "species", `{"name":"heron"}`, ""}}, in: 50, out: 20},
		{file: "deepseek/thinking_tool.sse", calls: []call{{"call_00_ds", "get_date", "{}", ""}}, in: 30, out: 25,
			extra: `{"reasoning_content":"The user wants the date.\n"}`, reasoning: "The user wants the date.\n"},
		{file: "groq/usage.sse", text: "Fast.", in: 15, out: 2},
		{file: "vllm/error_object.sse", text: "Part", errMsg: "The decoder prompt is longer than the maximum model length"},
		{file: "llamacpp/error_event.sse", text: "Partial", errMsg: "the request exceeds the available context size. try increasing"},
		{file: "llamacpp/event_error.sse", text: "Partial", errMsg: "slot unavailable"},
		{file: "ollama/bare_error.sse", text: "Hal", errMsg: "model runner has unexpectedly stopped"},
		{file: "mistral/tool_call.sse", calls: []call{{"D681PevKs", "retrieve_payment_status", `{"transaction_id": "T1001"}`, ""}}, in: 90, out: 30},
		{file: "openrouter/error_with_usage.sse", text: "Some", errMsg: "Provider disconnected unexpectedly", in: 10, out: 4},
		{file: "openrouter/reasoning.sse", text: "Done.", in: 12, out: 6, reasoning: "Think.",
			extra: `{"reasoning_details":[{"type":"reasoning.text","text":"Think.","format":"anthropic-claude-v1","index":0}],"reasoning":"Think."}`},
		{file: "openai/tool.sse", calls: []call{{"call_1", "bash", `{"command":"ls"}`, ""}}, in: 50, out: 10},
		{file: "openai/whole_parallel.json", calls: []call{{"call_w1", "bash", `{"command":"ls"}`, ""}, {"call_w2", "bash", `{"command":"pwd"}`, ""}}, in: 30, out: 20},
		{file: "openai/whole_length.json", text: `{"a": [1, 2`, incomplete: IncompleteLength, in: 5, out: 8},
		{file: "azure/text.sse", text: "Fine.", in: 14, out: 2},
		{file: "anthropic/text.sse", text: "Hello from Claude.", in: 11, out: 5},
		{file: "anthropic/tool.sse", calls: []call{{"toolu_01", "get_weather", `{"city": "Rome"}`, ""}}, in: 40, out: 12},
		{file: "anthropic/length.sse", text: "The list: 1.", incomplete: IncompleteLength, in: 8, out: 4},
		{file: "together/text.sse", text: "Hi!", in: 6, out: 2},
		{file: "together/parallel_tools.sse", calls: []call{{"call_t1", "get_weather", `{"city":"Lima"}`, ""}, {"call_t2", "get_weather", `{"city":"Quito"}`, ""}}, in: 70, out: 30},
		{file: "lmstudio/text.sse", text: "Local answer.", in: 20, out: 3},
		{file: "lmstudio/tool.sse", calls: []call{{"365174485", "get_delivery_date", `{"order_id":"123"}`, ""}}},
		{file: "ollama/text.sse", text: "Hallo.", in: 26, out: 4},
		{file: "ollama/tool.sse", calls: []call{{"call_o1", "get_weather", `{"city":"Toronto"}`, ""}}},
		{file: "vllm/reasoning_tool.sse", calls: []call{{"chatcmpl-tool-1", "get_weather", `{"city": "Kyiv"}`, ""}}, in: 100, out: 33,
			reasoning: "Check the weather.", extra: `{"reasoning":"Check the weather."}`},
		{file: "vllm/length.sse", text: "Once upon a", incomplete: IncompleteLength, in: 5, out: 3},
		{file: "gemini/text.sse", text: "Ospreys eat fish.", in: 8, out: 5},
		{file: "gemini/content_filter.sse", text: "I can", incomplete: IncompleteContentFilter, in: 9, out: 2},
		{file: "mistral/length.sse", text: "Paris is the", incomplete: IncompleteLength, in: 10, out: 2},
		{file: "mistral/parallel_tools.sse", calls: []call{{"aaaaaaaaa", "retrieve_payment_status", `{"transaction_id": "T1"}`, ""}, {"bbbbbbbbb", "retrieve_payment_date", `{"transaction_id": "T1"}`, ""}}, in: 90, out: 40},
		{file: "deepseek/text.sse", text: "Hello!", in: 10, out: 2},
		{file: "openai/error_chunk.sse", text: "Par", errMsg: "The server had an error while processing your request"},
		{file: "azure/parallel_tools.sse", calls: []call{{"call_az1", "lookup", `{"q":"a"}`, ""}, {"call_az2", "lookup", `{"q":"b"}`, ""}}, in: 60, out: 30},
		{file: "azure/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "gemini/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "deepseek/parallel_tools.sse", calls: []call{{"call_00_a", "lookup", `{"q":"a"}`, ""}, {"call_01_b", "lookup", `{"q":"b"}`, ""}}, in: 60, out: 30},
		{file: "deepseek/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "groq/parallel_tools.sse", calls: []call{{"call_g1", "lookup", `{"q":"a"}`, ""}, {"call_g2", "lookup", `{"q":"b"}`, ""}}, in: 60, out: 30},
		{file: "groq/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "vllm/text.sse", text: "Plain text.", in: 12, out: 3},
		{file: "vllm/parallel_tools.sse", calls: []call{{"chatcmpl-tool-a", "lookup", `{"q":"a"}`, ""}, {"chatcmpl-tool-b", "lookup", `{"q":"b"}`, ""}}, in: 60, out: 30},
		{file: "llamacpp/text.sse", text: "Local.", in: 9, out: 2},
		{file: "llamacpp/tool.sse", calls: []call{{"Zx1", "get_time", `{"tz":"UTC"}`, ""}}},
		{file: "ollama/parallel_tools.sse", calls: []call{{"call_oa", "lookup", `{"q":"a"}`, ""}, {"call_ob", "lookup", `{"q":"b"}`, ""}}, in: 60, out: 30},
		{file: "ollama/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "mistral/text.sse", text: "Bonjour.", in: 5, out: 3},
		{file: "openrouter/tool.sse", calls: []call{{"toolu_or1", "lookup", `{"q":"a"}`, ""}}, in: 40, out: 10},
		{file: "together/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "lmstudio/length.sse", text: "Three words and", incomplete: IncompleteLength, in: 7, out: 3},
		{file: "anthropic/parallel_tools.sse", calls: []call{{"toolu_a", "lookup", `{"q":"a"}`, ""}, {"toolu_b", "lookup", `{"q":"b"}`, ""}}, in: 60, out: 30},
		{file: "groq/reasoning_tool.sse", calls: []call{{"fc_1", "calculate", `{"expression":"2+2"}`, ""}}, in: 120, out: 30, reasoning: "Need a sum."},
		{file: "mistral/thinking_parts.sse", text: "The answer is 4.", reasoning: "Two plus two is four.", in: 12, out: 18},
		{file: "ollama/object_arguments.sse", calls: []call{{"call_obj1", "get_weather", `{"city":"Toronto","days":[1,2]}`, ""}}, in: 40, out: 12},
		{file: "groq/tool.sse", calls: []call{{"call_g1", "calculate", `{"expression":"25 * 4"}`, ""}}, in: 300, out: 20},
	} {
		t.Run(c.file, func(t *testing.T) {
			srv, n := replay(t, loadCase(t, c.file))
			var h rec
			resp, err := (&Client{BaseURL: srv.URL, Backoff: 1}).Complete(context.Background(), req(), &h)
			if got := n.Load(); got != 1 {
				t.Fatalf("%d requests: a provider's answer is never retried", got)
			}
			if h.text.String() != c.text {
				t.Fatalf("text streamed %q, want %q", h.text.String(), c.text)
			}
			if h.reasoning.String() != c.reasoning {
				t.Fatalf("reasoning %q, want %q", h.reasoning.String(), c.reasoning)
			}
			var me *Error
			var ie *IncompleteError
			switch {
			case c.errMsg != "":
				if !errors.As(err, &me) || !strings.Contains(me.Message, c.errMsg) {
					t.Fatalf("err %v, want a model error with %q", err, c.errMsg)
				}
				if me.Usage.PromptTokens != c.in || me.Usage.CompletionTokens != c.out {
					t.Fatalf("usage %+v, want %d/%d", me.Usage, c.in, c.out)
				}
				return
			case c.incomplete != "":
				if !errors.As(err, &ie) || ie.Reason != c.incomplete {
					t.Fatalf("err %v, want incomplete %s", err, c.incomplete)
				}
			case err != nil:
				t.Fatal(err)
			}
			if resp.Usage.PromptTokens != c.in || resp.Usage.CompletionTokens != c.out {
				t.Fatalf("usage %+v, want %d/%d", resp.Usage, c.in, c.out)
			}
			if got := resp.Content + resp.Refusal; got != c.text {
				t.Fatalf("answer %q, want %q", got, c.text)
			}
			if string(resp.Extra) != c.extra {
				t.Fatalf("provider fields %s, want %s", resp.Extra, c.extra)
			}
			var got []call
			for _, tc := range resp.ToolCalls {
				got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments, string(tc.Extra)})
			}
			if len(got) != len(c.calls) || len(got) > 0 && !equalCalls(got, c.calls) {
				t.Fatalf("calls %+v, want %+v", got, c.calls)
			}
			// The next request of the turn sends the fields back unchanged.
			next := req()
			next.Messages = append(next.Messages, transcript.Message{Role: "assistant", Content: transcript.Text(resp.Content),
				ToolCalls: resp.ToolCalls, Extra: resp.Extra})
			body, err := encodeRequest(next)
			if err != nil {
				t.Fatal(err)
			}
			var sent struct {
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(body.bytes(), &sent); err != nil {
				t.Fatalf("next request %s: %v", body.bytes(), err)
			}
			last := string(sent.Messages[len(sent.Messages)-1])
			if c.extra == "" && strings.Contains(last, `"reasoning`) {
				t.Fatalf("reasoning sent back where the provider refuses it: %s", last)
			}
			for _, want := range append([]string{strings.Trim(c.extra, "{}")}, extrasOf(c.calls)...) {
				if !strings.Contains(last, want) {
					t.Fatalf("next request's assistant message %s lacks %s", last, want)
				}
			}
		})
	}
}

func equalCalls(a, b []call) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func extrasOf(calls []call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, strings.Trim(c.extra, "{}"))
	}
	return out
}
