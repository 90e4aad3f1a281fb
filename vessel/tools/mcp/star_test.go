package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/loop"
	"github.com/astraldeep/astralvessel-go/vessel/scopes"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

// clock is a settable Client.Now.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func newClock() *clock                   { c := &clock{}; c.ns.Store(time.Now().UnixNano()); return c }
func nameSet(s *tools.Set) string        { return strings.Join(s.Names(), ",") }
func setOf(t testing.TB, list []tools.Tool) *tools.Set {
	t.Helper()
	s, err := tools.NewSet(list...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A remote server granted with tools = ["*"] offers every tool its
// tools/list names, as <server>__<tool> with its schema and the grant's
// scopes; a tool it stops listing is gone from the set and refused.
func TestStarRealServer(t *testing.T) {
	ts, s := realServer(t)
	ck := newClock()
	c := &Client{Now: ck.now}
	list, err := Tools(agentWith(ts.URL, "*"), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Fatalf("one expander, got %d tools", len(list))
	}
	if _, ok := list[0].(tools.Expander); !ok {
		t.Fatalf("%T is not an expander", list[0])
	}
	set := setOf(t, list)
	if got := nameSet(set); got != "" {
		t.Errorf("before a listing nothing is offered: %q", got)
	}
	ctx := context.Background()
	set.Refresh(ctx)
	want := "issues__broken,issues__chart,issues__search,issues__secret,issues__stats"
	if got := nameSet(set); got != want {
		t.Fatalf("offered %q, want %q", got, want)
	}
	search, _ := set.Get("issues__search")
	chart, _ := set.Get("issues__chart")
	if search.Scope() != "tools:read" || chart.Scope() != "tools:files" {
		t.Errorf("scopes: %s %s", search.Scope(), chart.Scope())
	}
	if d := search.Def().Function; d.Description != "Search the issues." || !strings.Contains(fmt.Sprint(d.Parameters), "query") {
		t.Errorf("definition: %+v", d)
	}
	res, err := search.Run(ctx, turn, tools.Call{ID: "c1", Arguments: `{"query":"leak"}`})
	if err != nil || res.IsError || res.Output != "found 2 issues for leak" {
		t.Fatalf("search: %+v %v", res, err)
	}
	if h := s.last(); h.Get(HeaderTool) != "search" {
		t.Errorf("headers %v", h)
	}
	// Narrowed by scopes like any tool, and covered by the approval policy
	// by name, scope and server.
	kept := scopes.Narrow(set.Filter(nil), func(t tools.Tool) string { return t.Def().Function.Name },
		func(t tools.Tool) string { return t.Scope() }, scopes.FromToken([]string{"tools:files"}))
	if len(kept) != 1 || kept[0].Def().Function.Name != "issues__chart" {
		t.Errorf("narrowed to tools:files: %d tools", len(kept))
	}
	for _, ap := range []*settings.Approval{{Tools: []string{"issues__search"}}, {Scopes: []string{"tools:read"}}, {Services: []string{"issues"}}} {
		m := &callingModel{tool: "issues__search", args: `{"query":"leak"}`}
		before := s.callCount()
		cfg := &loop.Config{Model: m, Prompt: func() (string, error) { return "p", nil }, Approval: approval.FromSettings(ap)}
		r := loop.Run(ctx, cfg, &loop.Input{Turn: turn, Text: "q", Tools: set.Filter(nil)}, func(loop.Event) bool { return true })
		if r.Status != loop.StatusPaused || r.Pause == nil || r.Pause.Request.Calls[0].Service != "issues" {
			t.Fatalf("%+v: status %q", ap, r.Status)
		}
		r.Pause.End(ctx, loop.StatusCancelled, "test")
		if s.callCount() != before {
			t.Errorf("%+v: the server was called before approval", ap)
		}
	}

	// The server stops offering "secret": once the list is old, it is
	// listed again, and the tool is neither offered nor called.
	secret, _ := set.Get("issues__secret")
	srvOf(t, ts).RemoveTools("secret")
	ck.advance(ListTTL + time.Second)
	before := s.callCount()
	res, err = secret.Run(ctx, turn, tools.Call{ID: "c2", Arguments: `{}`})
	if err != nil || !res.IsError || res.Output != `issues__secret cannot be called: the server does not offer a tool "secret"` {
		t.Errorf("a tool no longer listed: %+v %v", res, err)
	}
	if s.callCount() != before {
		t.Error("a tool the server does not list reached it")
	}
	if got := nameSet(set); strings.Contains(got, "secret") || !strings.Contains(got, "issues__search") {
		t.Errorf("after the new listing: %q", got)
	}
}

// srvOf finds the SDK server behind realServer's handler (kept by the test).
func srvOf(t *testing.T, ts *httptest.Server) interface{ RemoveTools(...string) } {
	t.Helper()
	s, ok := realServers.Load(ts.URL)
	if !ok {
		t.Fatal("no SDK server kept for", ts.URL)
	}
	return s.(interface{ RemoveTools(...string) })
}

// listing is a hand-made server whose tools/list answers tools.
func listing(t *testing.T, tools string) *httptest.Server {
	t.Helper()
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
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}`, req.ID, tools)
		case "tools/call":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"called"}]}}`, req.ID)
		default:
			notFound(w, req.ID)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func toolJSON(names ...string) string {
	var parts []string
	for _, n := range names {
		b, _ := json.Marshal(n)
		parts = append(parts, fmt.Sprintf(`{"name":%s,"description":"d","inputSchema":{"type":"object"}}`, b))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// A hostile server's listing: names the model could not call (spaces,
// slashes, dots, non-ASCII, empty, too long with the server's name) are
// skipped, a name listed twice is offered once (the first), and a name
// taken by one of the agent's other tools stays that tool's.
func TestStarHostileNames(t *testing.T) {
	long := strings.Repeat("a", 64-len("issues__")+1)
	ts := listing(t, `[
		{"name":"ok","description":"first","inputSchema":{"type":"object"}},
		{"name":"ok","description":"second","inputSchema":{"type":"object"}},
		{"name":"bad name"},{"name":"x/../y"},{"name":"a.b"},{"name":"ünï"},{"name":""},{"name":"*"},
		{"name":"`+long+`"},{"name":"`+long[1:]+`"},{"name":"a__b"},{"name":"fixed"}]`)
	list, err := Tools(agentWith(ts.URL, "*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	fixed := &Tool{srv: &Server{name: "issues"}, name: "own", full: "issues__fixed", scope: "tools:read"}
	set := setOf(t, append(list, fixed))
	set.Refresh(context.Background())
	want := "issues__a__b,issues__" + long[1:] + ",issues__fixed,issues__ok"
	if got := nameSet(set); got != want {
		t.Fatalf("offered %q, want %q", got, want)
	}
	if f, _ := set.Get("issues__fixed"); f != fixed {
		t.Error("a listed name took the name of a fixed tool")
	}
	ok, _ := set.Get("issues__ok")
	if d := ok.Def().Function.Description; d != "first" {
		t.Errorf("a name listed twice: %q", d)
	}
	for _, n := range set.Names() {
		if !toolset.ValidToolName(n) {
			t.Errorf("offered an invalid name %q", n)
		}
	}
	res, err := ok.Run(context.Background(), turn, tools.Call{ID: "c", Arguments: `{}`})
	if err != nil || res.Output != "called" {
		t.Errorf("call: %+v %v", res, err)
	}
}

// A server listing more than MaxStarTools valid tools offers none, and
// says why; exactly MaxStarTools is fine.
func TestStarTooManyTools(t *testing.T) {
	names := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("t%d", i))
		}
		return out
	}
	atLimit := listing(t, toolJSON(append(names(MaxStarTools), "bad name", "t0")...))
	list, _ := Tools(agentWith(atLimit.URL, "*"), nil)
	set := setOf(t, list)
	set.Refresh(context.Background())
	if n := len(set.Names()); n != MaxStarTools {
		t.Errorf("at the limit: %d tools offered", n)
	}

	over := listing(t, toolJSON(names(MaxStarTools+1)...))
	list, _ = Tools(agentWith(over.URL, "*"), nil)
	set = setOf(t, list)
	set.Refresh(context.Background())
	if got := set.Names(); len(got) != 0 {
		t.Errorf("over the limit: %d tools offered", len(got))
	}
	srv := list[0].(*starTool).srv
	_, why := srv.cached("t0")
	if want := fmt.Sprintf(`the issues MCP server lists more than %d tools; with tools = ["*"] it may list at most %d (list the tools to offer instead)`, MaxStarTools, MaxStarTools); why != want {
		t.Errorf("reason %q", why)
	}
	// A tool built from an earlier list is refused too.
	old := srv.tool("t0")
	res, err := old.Run(context.Background(), turn, tools.Call{ID: "c", Arguments: `{}`})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "lists more than 128 tools") {
		t.Errorf("call: %+v %v", res, err)
	}
}

// A stdio server declared with tools = ["*"]: its listing runs in a turn
// of its own, the tools it lists are offered with the declared scopes, and
// the turn's calls reach one process.
func TestStdioStar(t *testing.T) {
	f, sb := newServeSandbox(t)
	list, err := StdioTools(sb, stdioAgent("notes", "*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := setOf(t, list)
	ctx := context.Background()
	set.Refresh(ctx)
	if got := nameSet(set); got != "notes__add_note,notes__list_notes,notes__read_note" {
		t.Fatalf("offered %q", got)
	}
	served, ended := f.snapshot()
	if len(served) != 1 || !strings.HasPrefix(served[0], "mcp-list.notes.") || len(ended) != 1 {
		t.Errorf("the listing has a turn of its own, ended after: %v %v", served, ended)
	}
	add, _ := set.Get("notes__add_note")
	read, _ := set.Get("notes__read_note")
	if add.Scope() != "tools:write" || read.Scope() != "tools:files" {
		t.Errorf("scopes %s %s", add.Scope(), read.Scope())
	}
	t1 := &tools.Turn{ID: "task-s1", Agent: "notes-agent", Owner: "web/alice"}
	res, err := add.Run(ctx, t1, tools.Call{ID: "c1", Arguments: `{"title":"wren","text":"small"}`})
	if err != nil || res.Output != "saved wren" {
		t.Fatalf("add: %+v %v", res, err)
	}
	res, err = read.Run(ctx, t1, tools.Call{ID: "c2", Arguments: `{"title":"wren"}`})
	if err != nil || res.IsError || !strings.Contains(res.Output, "small") {
		t.Fatalf("read: %+v %v", res, err)
	}
	served, _ = f.snapshot()
	if n := strings.Count(strings.Join(served, ","), "task-s1/notes"); n != 1 {
		t.Errorf("served %v", served)
	}
	// The list is kept: a second refresh starts no process.
	set.Refresh(ctx)
	if s2, _ := f.snapshot(); len(s2) != len(served) {
		t.Errorf("a fresh list was listed again: %v", s2)
	}
	if !slices.Contains(set.Names(), "notes__list_notes") {
		t.Error("lost a tool")
	}
	_ = sb.EndTurn(ctx, "task-s1")
}

// A failed listing reaches Client.ListFailed with the reason the model
// would read; a fresh retry waits ListRetry.
func TestListFailedHook(t *testing.T) {
	var got []string
	ck := newClock()
	c := &Client{Now: ck.now, ListFailed: func(agent, server, reason string) { got = append(got, agent+"/"+server+": "+reason) }}
	list, _ := Tools(agentWith("http://127.0.0.1:1/mcp", "*"), c)
	set := setOf(t, list)
	set.Refresh(context.Background())
	set.Refresh(context.Background()) // within ListRetry: not listed again
	if len(got) != 1 || !strings.HasPrefix(got[0], "issues-agent/issues: could not reach the issues MCP server") {
		t.Fatalf("heard %q", got)
	}
	ck.advance(ListRetry)
	set.Refresh(context.Background())
	if len(got) != 2 {
		t.Errorf("after ListRetry: heard %d", len(got))
	}
}
