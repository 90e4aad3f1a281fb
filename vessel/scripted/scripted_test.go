package scripted

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/sse"
)

func post(t *testing.T, url string, body any) (*http.Response, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func TestDefaultScript(t *testing.T) {
	srv := httptest.NewServer(NewServer(nil))
	defer srv.Close()
	species := []any{map[string]any{"type": "function", "function": map[string]any{"name": "species"}}}
	// Step 0 with a species tool: a tool call.
	_, body := post(t, srv.URL, map[string]any{"model": "m", "tools": species,
		"messages": []any{map[string]any{"role": "user", "content": "Which birds hunt fish?"}}})
	if !strings.Contains(body, `"name":"species"`) || !strings.Contains(body, `"finish_reason":"tool_calls"`) ||
		!strings.Contains(body, `"arguments":"{\"mentions\":\"fish\"}"`) {
		t.Fatalf("step 0: %s", body)
	}
	// Step 1 (streamed): a Markdown summary of the tool result.
	_, body = post(t, srv.URL, map[string]any{"model": "m", "tools": species, "stream": true, "messages": []any{
		map[string]any{"role": "user", "content": "Which birds hunt fish?"},
		map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "species", "arguments": "{}"}}}},
		map[string]any{"role": "tool", "tool_call_id": "c", "content": `[{"common_name":"Osprey","scientific_name":"Pandion haliaetus"}]`},
	}})
	if !strings.Contains(body, "data: [DONE]") || !strings.Contains(body, `"usage"`) {
		t.Fatalf("stream: %s", body)
	}
	var text strings.Builder
	events, err := sse.ReadAll(strings.NewReader(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range events {
		if string(data) == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(data, &ch)
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	if got := text.String(); !strings.Contains(got, "- Osprey (*Pandion haliaetus*)") || !strings.Contains(got, "mentions \u201cfish\u201d") ||
		!strings.Contains(got, "scripted model") || !strings.Contains(got, "VESSEL_UPSTREAM_MODEL_URL") {
		t.Fatalf("summary: %q", got)
	}
	// No species tool: echo, saying who answered.
	_, body = post(t, srv.URL, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	if !strings.Contains(body, "You said: hello") || !strings.Contains(body, "scripted model") {
		t.Fatalf("echo: %s", body)
	}
	resp, err := http.Get(srv.URL + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("models: %v", err)
	}
}

func TestErrorsCountAndMarker(t *testing.T) {
	sc, err := Parse([]byte(`{"rules":[{"name":"flaky","steps":[{"error":{"status":503,"count":2},"text":"ok","reasoning":"r","reasoning_pieces":2}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewServer(sc))
	defer srv.Close()
	req := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "go #script:flaky"}}}
	for i := range 2 {
		if resp, _ := post(t, srv.URL, req); resp.StatusCode != 503 {
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
	}
	resp, body := post(t, srv.URL, req)
	if resp.StatusCode != 200 || !strings.Contains(body, `"reasoning_content":"r"`) {
		t.Fatalf("third: %d %s", resp.StatusCode, body)
	}
	if _, err := Parse([]byte(`{"rules":[{"name":"x","steps":[]}]}`)); err == nil {
		t.Fatal("rule without steps accepted")
	}
	if _, err := Parse([]byte(`{"rules":[],"bogus":1}`)); err == nil {
		t.Fatal("unknown field accepted")
	}
}

func TestKeyword(t *testing.T) {
	for q, want := range map[string]string{
		"Which birds in the guide hunt fish?":   "fish",
		"And which of them nest on CLIFFS?":     "cliff",
		"What eats grass":                       "grass",
		"Is it the frostwing owl?":              "owl",
		"Tell me about the copper-crested one!": "one",
		"Where is it?":                          "",
		"":                                      "",
		"Quels oiseaux mangent des poissons ?":  "poisson",
	} {
		if got := keyword(q); got != want {
			t.Errorf("keyword(%q) = %q, want %q", q, got, want)
		}
	}
}

// Templates in tool call arguments are filled into the JSON strings, quoted
// correctly whatever the question holds; the list of an empty result says so.
func TestArgumentTemplates(t *testing.T) {
	sc, err := Parse([]byte(`{"rules":[{"name":"look","match":{"tool":"grep"},"steps":[
		{"tool_calls":[{"name":"grep","arguments":{"pattern":"{{keyword}}","note":["{{last_user}}", 3]}}]},
		{"text":"found for {{keyword}}:\n{{tool_result_list}}"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	q := `Who eats "frogs"?`
	tu := turn{lastUser: q, tools: map[string]bool{"grep": true}}
	_, st := sc.choose(tu)
	r := render(st, tu)
	if len(r.toolCalls) != 1 {
		t.Fatalf("tool calls: %v", r.toolCalls)
	}
	var args struct {
		Pattern string `json:"pattern"`
		Note    []any  `json:"note"`
	}
	raw := r.toolCalls[0]["function"].(map[string]any)["arguments"].(string)
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatalf("arguments %s: %v", raw, err)
	}
	if args.Pattern != "frog" || len(args.Note) != 2 || args.Note[0] != q || args.Note[1] != float64(3) {
		t.Errorf("arguments %s", raw)
	}
	tu.step, tu.toolResult = 1, "[]"
	_, st = sc.choose(tu)
	if got := render(st, tu).text; got != "found for frog:\n- (none)" {
		t.Errorf("answer %q", got)
	}
}

// FuzzScript checks that any script that parses can answer any request
// without panicking.
func FuzzScript(f *testing.F) {
	f.Add([]byte(defaultScript), "hello #script:slow", 0)
	f.Add([]byte(`{"rules":[{"name":"a","match":{"contains":"x"},"steps":[{"text":"{{tool_result_list}}","pieces":3}]}]}`), "x", 2)
	f.Fuzz(func(t *testing.T, script []byte, user string, step int) {
		sc, err := Parse(script)
		if err != nil {
			return
		}
		if step < 0 || step > 50 {
			step = 0
		}
		tu := turn{lastUser: user, step: step, tools: map[string]bool{"species": true}, toolResult: user}
		_, st := sc.choose(tu)
		r := render(st, tu)
		if len(r.pieces) > 0 && strings.Join(r.pieces, "") != r.text {
			t.Fatalf("pieces %q do not join to %q", r.pieces, r.text)
		}
	})
}
