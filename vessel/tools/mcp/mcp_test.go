package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// seen records the vessel headers of every tools/call request a server
// got, and counts the sessions opened.
type seen struct {
	mu    sync.Mutex
	calls []http.Header
	lists []http.Header
	all   int
}

func (s *seen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		if bytes.Contains(body, []byte(`"initialize"`)) {
			s.all++ // sessions opened (a DELETE of an earlier one may come late)
		}
		if bytes.Contains(body, []byte(`"tools/list"`)) {
			s.lists = append(s.lists, r.Header.Clone())
		}
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			s.calls = append(s.calls, r.Header.Clone())
		}
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (s *seen) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all
}

func (s *seen) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func (s *seen) last() http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return nil
	}
	return s.calls[len(s.calls)-1]
}

type searchIn struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// realServer is an MCP server built with the SDK, on loopback.
func realServer(t *testing.T) (*httptest.Server, *seen) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "issues", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "Search the issues."},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found 2 issues for " + in.Query}}}, nil, nil
		})
	pic := pngBytes(t)
	mcp.AddTool(srv, &mcp.Tool{Name: "chart", Description: "Draw a chart."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here it is"},
				&mcp.ImageContent{MIMEType: "image/png", Data: pic},
				&mcp.ImageContent{MIMEType: "image/tiff", Data: []byte("II*")},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t.csv", MIMEType: "text/csv", Blob: []byte("a,b\n1,2\n")}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://notes", MIMEType: "text/plain", Text: "some notes"}},
				&mcp.ResourceLink{URI: "https://example.test/x", Name: "x"},
			}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "stats", Description: "Numbers."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, map[string]int, error) {
			return nil, map[string]int{"open": 3}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "broken", Description: "Fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New("the index is offline")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "secret", Description: "Not granted."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "secret"}}}, nil, nil
		})
	s := &seen{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(s.wrap(h))
	t.Cleanup(ts.Close)
	realServers.Store(ts.URL, srv)
	return ts, s
}

// realServers are realServer's SDK servers by URL.
var realServers sync.Map

func agentWith(url string, toolNames ...string) *settings.Agent {
	return &settings.Agent{ID: "issues-agent", MCP: map[string]settings.MCPServer{"issues": {
		URL:     url,
		Headers: map[string]string{"Authorization": "Bearer deploy-secret", "X-Vessel-Owner": "impostor"},
		Tools:   toolNames, Scope: "tools:read", Scopes: map[string]string{"chart": "tools:files"}, TimeoutSecs: 5,
	}}}
}

func toolsOf(t testing.TB, a *settings.Agent, c *Client) map[string]*Tool {
	t.Helper()
	list, err := Tools(a, c)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Tool{}
	for _, tl := range list {
		out[tl.Def().Function.Name] = tl.(*Tool)
	}
	return out
}

var turn = &tools.Turn{ID: "task-1", Agent: "issues-agent", Owner: "web/alice"}

// checkListedSearch lists the server's tools through the search tool's
// Prepare (with the agent's headers, not the owner's) and checks the
// definition, scopes and service the listing gives.
func checkListedSearch(ctx context.Context, t *testing.T, s *seen, set map[string]*Tool) {
	t.Helper()
	search := set["issues__search"]
	search.Prepare(ctx, turn)
	s.mu.Lock()
	if len(s.lists) != 1 || s.lists[0].Get(HeaderOwner) != "" || s.lists[0].Get(HeaderAgent) != "issues-agent" ||
		s.lists[0].Get(HeaderTool) != "" || s.lists[0].Get("Authorization") != "Bearer deploy-secret" {
		t.Errorf("listing headers: %v", s.lists)
	}
	s.mu.Unlock()
	d := search.Def()
	params, _ := json.Marshal(d.Function.Parameters)
	if d.Function.Description != "Search the issues." || !strings.Contains(string(params), `"query"`) || !strings.Contains(string(params), `"type":"object"`) {
		t.Errorf("definition: %s %s", d.Function.Description, params)
	}
	if search.Scope() != "tools:read" || set["issues__chart"].Scope() != "tools:files" {
		t.Errorf("scopes: %s %s", search.Scope(), set["issues__chart"].Scope())
	}
	var sv approval.Servicer = search
	if sv.Service() != "issues" {
		t.Errorf("service %q", sv.Service())
	}
}

// checkToolErrors: a structured result is passed on; a tool's error, a
// tool the server does not offer, arguments that are not an object and
// arguments the server's schema refuses all come back as tool errors
// (the middle two without a request sent).
func checkToolErrors(ctx context.Context, t *testing.T, s *seen, set map[string]*Tool) {
	t.Helper()
	search := set["issues__search"]
	res, _ := set["issues__stats"].Run(ctx, turn, tools.Call{Arguments: `{}`})
	if res.IsError || !strings.Contains(res.Output, `{"open":3}`) {
		t.Errorf("structured: %+v", res)
	}
	res, _ = set["issues__broken"].Run(ctx, turn, tools.Call{Arguments: `{}`})
	if !res.IsError || !strings.Contains(res.Output, "the issues MCP server reported an error: the index is offline") {
		t.Errorf("tool error: %+v", res)
	}
	// Granted but not offered by the server: a clear error, no call sent.
	before := s.requests()
	res, _ = set["issues__gone"].Run(ctx, turn, tools.Call{Arguments: `{}`})
	if !res.IsError || !strings.Contains(res.Output, `issues__gone cannot be called: the server does not offer a tool "gone"`) || s.requests() != before {
		t.Errorf("not offered: %+v (%d requests)", res, s.requests()-before)
	}
	for _, args := range []string{`[1]`, `"x"`, `{`, `null`} {
		res, _ = search.Run(ctx, turn, tools.Call{Arguments: args})
		if !res.IsError || !strings.Contains(res.Output, "needs its arguments as a JSON object") || s.requests() != before {
			t.Errorf("arguments %s: %+v", args, res)
		}
	}
	// Arguments the server's schema refuses come back as a tool error.
	res, _ = search.Run(ctx, turn, tools.Call{Arguments: `{"query": 5}`})
	if !res.IsError {
		t.Errorf("schema violation: %+v", res)
	}
}

func TestRealServer(t *testing.T) {
	ts, s := realServer(t)
	ctx := context.Background()
	set := toolsOf(t, agentWith(ts.URL, "search", "chart", "stats", "broken", "gone"), nil)
	if len(set) != 5 || set["issues__secret"] != nil {
		t.Fatalf("tools: %v", set)
	}
	search := set["issues__search"]
	if d := search.Def(); !strings.Contains(d.Function.Description, "not available") {
		t.Errorf("before listing: %+v", d.Function)
	}
	checkListedSearch(ctx, t, s, set)

	res, err := search.Run(ctx, turn, tools.Call{ID: "c1", Name: "issues__search", Arguments: `{"query":"crash"}`})
	if err != nil || res.IsError || res.Output != "found 2 issues for crash" {
		t.Fatalf("search: %+v %v", res, err)
	}
	h := s.last()
	if h.Get(HeaderOwner) != "web/alice" || h.Get(HeaderAgent) != "issues-agent" || h.Get(HeaderTool) != "search" ||
		h.Get("Authorization") != "Bearer deploy-secret" || h.Get("User-Agent") != "astralvessel" {
		t.Errorf("headers: %v", h)
	}

	res, err = set["issues__chart"].Run(ctx, turn, tools.Call{ID: "c2", Arguments: ``})
	if err != nil || res.IsError {
		t.Fatalf("chart: %+v %v", res, err)
	}
	if len(res.Files) != 2 || res.Files[0].Name != "issues__chart-1.png" || res.Files[0].MediaType != "image/png" ||
		res.Files[1].Name != "issues__chart-2.csv" || string(res.Files[1].Content) != "a,b\n1,2\n" {
		t.Errorf("files: %+v", res.Files)
	}
	for _, want := range []string{"here it is", `[an image of type "image/tiff" not passed on`, "[resource mem://notes]\nsome notes", "[resource link: x https://example.test/x]"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("chart output lacks %q: %s", want, res.Output)
		}
	}

	checkToolErrors(ctx, t, s, set)
}

// hostile serves a minimal MCP server by hand whose tools/call does what
// call says.
func hostile(t testing.TB, call func(w http.ResponseWriter, r *http.Request, id json.RawMessage)) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		reply := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		}
		switch req.Method {
		case "initialize":
			reply(fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"h","version":"1"}}`, req.Params.ProtocolVersion))
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			reply(`{"tools":[{"name":"x","description":"X.","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			call(w, r, req.ID)
		default:
			notFound(w, req.ID)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func hostileTool(t testing.TB, ts *httptest.Server, c *Client) *Tool {
	t.Helper()
	a := agentWith(ts.URL, "x")
	g := a.MCP["issues"]
	g.TimeoutSecs = 1
	a.MCP["issues"] = g
	return toolsOf(t, a, c)["issues__x"]
}

func TestHostileServers(t *testing.T) {
	cases := []struct {
		name string
		c    *Client
		call func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
		want string
	}{
		{"huge reply", &Client{MaxResponse: 1 << 20}, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
			chunk := bytes.Repeat([]byte("A"), 64<<10)
			for range 64 { // 4 MiB
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
			io.WriteString(w, `"}]}}`)
		}, "the issues MCP server sent more than 1048576 bytes while calling x; nothing of it was kept"},
		{"huge SSE event", &Client{MaxResponse: 1 << 20}, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: ")
			chunk := bytes.Repeat([]byte("A"), 64<<10)
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, "sent more than 1048576 bytes"},
		{"too much text", &Client{MaxText: 100}, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, strings.Repeat("b", 101))
		}, "result has 101 bytes of text, more than 100; nothing of it was kept"},
		{"malformed JSON", nil, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`)
		}, "the issues MCP server broke the protocol while calling x"},
		{"not JSON-RPC", nil, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[1,2,3]`)
		}, "the issues MCP server"},
		{"wrong content", nil, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"hologram"}]}}`, id)
		}, "the issues MCP server broke the protocol while calling x"},
		{"JSON-RPC error", nil, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no such repo"}}`, id)
		}, "no such repo"},
		{"HTTP 500", nil, func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "the issues MCP server answered HTTP 500 while calling x"},
		{"redirect", nil, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
		}, "answered HTTP 307 while calling x (a redirect; redirects are not followed)"},
		{"never answers", nil, func(_ http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			<-r.Context().Done()
		}, "the issues MCP server did not answer within 1s while calling x"},
		{"stream that never ends", nil, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
					if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}
		}, "did not answer within 1s while calling x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl := hostileTool(t, hostile(t, tc.call), tc.c)
			res, err := tl.Run(context.Background(), turn, tools.Call{Arguments: `{}`})
			if err != nil {
				t.Fatalf("an error instead of a failed call: %v", err)
			}
			if !res.IsError || !strings.Contains(res.Output, tc.want) {
				t.Errorf("want a failed call with %q, got %+v", tc.want, res)
			}
		})
	}
}

// A server that never answers anything: listing and calling both end.
func TestSilentServer(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
		<-r.Context().Done()
	}))
	t.Cleanup(ts.Close)
	tl := hostileTool(t, ts, nil)
	tl.Prepare(context.Background(), turn)
	if d := tl.Def(); !strings.Contains(d.Function.Description, "did not answer within 1s while listing its tools") {
		t.Errorf("definition: %s", d.Function.Description)
	}
	res, err := tl.Run(context.Background(), turn, tools.Call{Arguments: `{}`})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "did not answer within 1s while listing its tools") {
		t.Errorf("call: %+v %v", res, err)
	}
}

func TestUnreachable(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	tl := hostileTool(t, &httptest.Server{URL: url}, nil)
	res, err := tl.Run(context.Background(), turn, tools.Call{Arguments: `{}`})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "could not reach the issues MCP server") {
		t.Errorf("call: %+v %v", res, err)
	}
}

// A cancelled turn ends the call without a result.
func TestCancelled(t *testing.T) {
	started := make(chan struct{})
	ts := hostile(t, func(_ http.ResponseWriter, r *http.Request, _ json.RawMessage) {
		close(started)
		<-r.Context().Done()
	})
	a := agentWith(ts.URL, "x")
	tl := toolsOf(t, a, nil)["issues__x"]
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err := tl.Run(ctx, turn, tools.Call{Arguments: `{}`})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("want the cancellation, got %+v %v", res, err)
	}
}

// Hostile definitions: a schema that is not an object schema, or too big,
// is replaced; a long description is cut.
func TestHostileDefinitions(t *testing.T) {
	big := strings.Repeat("x", MaxSchemaBytes)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"h","version":"1"}}}`, req.ID, req.Params.ProtocolVersion)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[
				{"name":"x","description":%q,"inputSchema":{"type":"object","description":%q}},
				{"name":"y","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}]}}`,
				req.ID, strings.Repeat("d", 3*MaxDescription), big)
		default:
			notFound(w, req.ID)
		}
	}))
	t.Cleanup(ts.Close)
	set := toolsOf(t, agentWith(ts.URL, "x", "y"), nil)
	set["issues__x"].Prepare(context.Background(), turn)
	dx := set["issues__x"].Def()
	if p, _ := json.Marshal(dx.Function.Parameters); string(p) != `{"type":"object"}` || !strings.Contains(dx.Function.Description, "input schema was not") ||
		len(dx.Function.Description) > MaxDescription+200 {
		t.Errorf("x: %s (%d bytes of description)", p, len(dx.Function.Description))
	}
	dy := set["issues__y"].Def()
	if p, _ := json.Marshal(dy.Function.Parameters); !strings.Contains(string(p), `"a"`) || dy.Function.Description != "Tool y of the issues MCP server." {
		t.Errorf("y: %s %q", p, dy.Function.Description)
	}
}

// notFound answers a request for a method the hand-made servers do not
// know, and accepts a notification.
func notFound(w http.ResponseWriter, id json.RawMessage) {
	if len(id) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
}

// FuzzCallReply: whatever body a server sends for tools/call (as JSON or as
// an event stream), the call ends as a result or a failed call, never an
// error or a panic.
func FuzzCallReply(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"hi"}]}}`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"image","mimeType":"image/png","data":"AAAA"}],"isError":true}}`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"resource","resource":{"uri":"x","blob":"!!"}}]}}`), false)
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"content\":[]}}\n\n"), true)
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"error":{"code":1,"message":"x","data":[1]}}`), false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":ID,"result":null}`), false)
	var body atomic.Value
	var sse atomic.Bool
	ts := hostile(f, func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		ct := "application/json"
		if sse.Load() {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(bytes.ReplaceAll(body.Load().([]byte), []byte("ID"), id))
	})
	// A short time, so replies that leave the call waiting cost little.
	a := agentWith(ts.URL, "x")
	g := a.MCP["issues"]
	g.TimeoutSecs = 0
	a.MCP["issues"] = g
	tl := toolsOf(f, a, &Client{MaxResponse: 1 << 16, Timeout: 200 * time.Millisecond})["issues__x"]
	f.Fuzz(func(t *testing.T, reply []byte, stream bool) {
		body.Store(reply)
		sse.Store(stream)
		res, err := tl.Run(context.Background(), turn, tools.Call{Arguments: `{}`})
		if err != nil || res == nil {
			t.Fatalf("reply %q: %v %v", reply, res, err)
		}
		if !utf8.ValidString(res.Output) {
			t.Fatalf("output is not UTF-8: %q", res.Output)
		}
	})
}

// BenchmarkCall is one call of an MCP tool against an SDK server on
// loopback: a session of its own (initialize, tools/call, close).
func BenchmarkCall(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "Search."},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + in.Query}}}, nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(ts.Close)
	tl := toolsOf(b, agentWith(ts.URL, "search"), nil)["issues__search"]
	tl.Prepare(context.Background(), turn)
	call := tools.Call{Arguments: `{"query":"x"}`}
	b.ReportAllocs()
	for b.Loop() {
		res, err := tl.Run(context.Background(), turn, call)
		if err != nil || res.IsError {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
