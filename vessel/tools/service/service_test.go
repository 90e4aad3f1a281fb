package service

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/approval"
	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
	"github.com/astraldeep/astralvessel-go/vessel/tools"
)

type seen struct {
	mu     sync.Mutex
	method string
	path   string
	header http.Header
	body   []byte
}

func agentWith(url string, decl ...settings.Tool) *settings.Agent {
	return &settings.Agent{
		ID: "records-agent",
		Services: map[string]settings.Service{
			"records": {URL: url, Headers: map[string]string{"X-Internal-Token": "s3cret"}},
		},
		Manifest: &settings.Manifest{Declared: decl},
	}
}

var lookup = settings.Tool{Name: "lookup", Description: "Look a record up.", Service: "records", Path: "/agent-tools/lookup", Scope: "tools:read",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}

func turn() *tools.Turn {
	return &tools.Turn{ID: "t1", ContextID: "c1", Agent: "records-agent", Owner: "app1/alice",
		Principal: &auth.Principal{Owner: "app1/alice", Kind: auth.KindApp, AppID: "app1", Subject: "alice"}}
}

func TestCallSendsExactlyTheseHeaders(t *testing.T) {
	var got seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.mu.Lock()
		defer got.mu.Unlock()
		got.method, got.path, got.header = r.Method, r.URL.Path, r.Header.Clone()
		got.body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{\n  \"name\": \"Ada\",  \"n\": 3\n}\n")
	}))
	defer srv.Close()
	ag := agentWith(srv.URL+"/", lookup)
	// A deployment header must not be able to set our identity headers.
	ag.Services["records"].Headers["X-Vessel-Owner"] = "forged"
	list, err := Tools(ag, &Client{HTTP: srv.Client()})
	if err != nil || len(list) != 1 {
		t.Fatalf("Tools = %v, %v", list, err)
	}
	tool := list[0]
	if tool.Def().Function.Name != "lookup" || tool.Scope() != "tools:read" {
		t.Fatalf("def = %+v scope %s", tool.Def(), tool.Scope())
	}
	res, err := tool.Run(context.Background(), turn(), tools.Call{ID: "call-1", Name: "lookup", Arguments: `{"id":"42"}`})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Output != `{"name":"Ada","n":3}` {
		t.Fatalf("result = %+v", res)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if got.method != http.MethodPost || got.path != "/agent-tools/lookup" || string(got.body) != `{"id":"42"}` {
		t.Fatalf("request = %s %s %s", got.method, got.path, got.body)
	}
	want := map[string]string{
		"Content-Type":     "application/json",
		"Accept":           "application/json, text/plain;q=0.9, */*;q=0.1",
		"User-Agent":       "astralvessel",
		"X-Internal-Token": "s3cret",
		"X-Vessel-Owner":   "app1/alice",
		"X-Vessel-Agent":   "records-agent",
		"X-Vessel-Tool":    "lookup",
		// Added by Go's transport itself.
		"Content-Length":  "11",
		"Accept-Encoding": "gzip",
	}
	for k, v := range want {
		if vs := got.header.Values(k); len(vs) != 1 || vs[0] != v {
			t.Errorf("header %s = %q, want %q", k, vs, v)
		}
	}
	for k := range got.header {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected header %s: %q", k, got.header.Values(k))
		}
	}
}

func TestTextReplyAndEmptyArgs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(append([]byte("got "), b...))
	}))
	defer srv.Close()
	tool, err := New(agentWith(srv.URL), lookup, &Client{HTTP: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Run(context.Background(), turn(), tools.Call{Arguments: "  "})
	if err != nil || res.IsError || res.Output != "got {}" {
		t.Fatalf("res = %+v, %v", res, err)
	}
}

func TestFailures(t *testing.T) {
	big := strings.Repeat("x", DefaultMaxResponse+1)
	mux := http.NewServeMux()
	mux.HandleFunc("/err", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "record 42 not found"+strings.Repeat("!", 2000), http.StatusNotFound)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, big) })
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, big[:DefaultMaxResponse]) })
	release := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)

	run := func(path, args string, c *Client) *tools.Result {
		t.Helper()
		decl := lookup
		decl.Path = path
		tool, err := New(agentWith(srv.URL), decl, c)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tool.Run(context.Background(), turn(), tools.Call{Arguments: args})
		if err != nil {
			t.Fatalf("%s: infrastructure error %v", path, err)
		}
		return res
	}
	c := &Client{HTTP: srv.Client()}
	res := run("/err", `{}`, c)
	if !res.IsError || !strings.HasPrefix(res.Output, "the records service answered HTTP 404: record 42 not found") || len(res.Output) > 700 {
		t.Errorf("404: %q", res.Output)
	}
	res = run("/redirect", `{}`, c)
	if !res.IsError || !strings.Contains(res.Output, "HTTP 302 (a redirect; redirects are not followed)") {
		t.Errorf("redirect: %q", res.Output)
	}
	res = run("/big", `{}`, c)
	if !res.IsError || !strings.Contains(res.Output, "larger than 1048576 bytes") {
		t.Errorf("big: %.100q", res.Output)
	}
	res = run("/exact", `{}`, c)
	if res.IsError || len(res.Output) != DefaultMaxResponse {
		t.Errorf("exactly at the cap must pass: %v %d", res.IsError, len(res.Output))
	}
	res = run("/empty", `{}`, c)
	if res.IsError || res.Output != "(the service returned no content)" {
		t.Errorf("empty: %q", res.Output)
	}
	for _, bad := range []string{`[1,2]`, `"x"`, `null`, `{`, `42`} {
		if res := run("/err", bad, c); !res.IsError || !strings.Contains(res.Output, "needs its arguments as a JSON object") {
			t.Errorf("args %s: %q", bad, res.Output)
		}
	}
	res = run("/slow", `{}`, &Client{HTTP: srv.Client(), Timeout: 50 * time.Millisecond})
	if !res.IsError || !strings.Contains(res.Output, "did not answer within 50ms") {
		t.Errorf("slow: %q", res.Output)
	}
	// Unreachable: a closed port on loopback.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	tool, _ := New(agentWith(deadURL), lookup, nil)
	res, err := tool.Run(context.Background(), turn(), tools.Call{Arguments: `{}`})
	if err != nil || !res.IsError || !strings.Contains(res.Output, "could not reach the records service") {
		t.Errorf("unreachable: %+v %v", res, err)
	}
	// A cancelled turn is an infrastructure error, not a tool result.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tool.Run(ctx, turn(), tools.Call{Arguments: `{}`}); err == nil {
		t.Error("cancelled turn returned a result")
	}
}

func TestOnlyGrantedServices(t *testing.T) {
	ag := agentWith("http://127.0.0.1:9")
	other := lookup
	other.Service = "billing"
	if _, err := New(ag, other, nil); err == nil || !strings.Contains(err.Error(), `service "billing", which deployment.toml does not grant it`) {
		t.Fatalf("ungranted service: %v", err)
	}
	if _, err := Tools(agentWith("http://127.0.0.1:9", other), nil); err == nil {
		t.Fatal("factory accepted an ungranted service")
	}
	for _, u := range []string{"ftp://h/", "http://user:pw@h/", "http:///x", "http://h/?q=1", "::"} {
		if _, err := New(agentWith(u), lookup, nil); err == nil {
			t.Errorf("bad url %q accepted", u)
		}
	}
	for _, p := range []string{"/../admin", "/a?b", "/a#b"} {
		d := lookup
		d.Path = p
		if _, err := New(ag, d, nil); err == nil {
			t.Errorf("bad path %q accepted", p)
		}
	}
	// Command tools are not service tools.
	list, err := Tools(agentWith("http://127.0.0.1:9", settings.Tool{Name: "species", Command: []string{"x"}, Scope: "tools:read"}, lookup), nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("Tools = %d, %v", len(list), err)
	}
}

func TestJoin(t *testing.T) {
	cases := map[[2]string]string{
		{"http://app:8000", "/agent-tools/lookup"}: "http://app:8000/agent-tools/lookup",
		{"http://app:8000/", "agent-tools/lookup"}: "http://app:8000/agent-tools/lookup",
		{"https://app/api", "/lookup"}:             "https://app/api/lookup",
		{"http://app:8000/hook", ""}:               "http://app:8000/hook",
		{"http://[::1]:8000", "/x"}:                "http://[::1]:8000/x",
	}
	for in, want := range cases {
		got, err := join(in[0], in[1])
		if err != nil || got != want {
			t.Errorf("join(%q,%q) = %q, %v; want %q", in[0], in[1], got, err, want)
		}
	}
}

func TestDefWithoutParameters(t *testing.T) {
	d := lookup
	d.Parameters = nil
	tool, err := New(agentWith("http://127.0.0.1:9"), d, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tool.Def())
	if !strings.Contains(string(b), `"parameters":{"type":"object"}`) {
		t.Fatalf("def = %s", b)
	}
	if !slices.Contains([]string{"tools:read"}, tool.Scope()) {
		t.Fatal(tool.Scope())
	}
}

// A service tool names its service, so an approval policy's services
// entries cover it.
var _ approval.Servicer = (*Tool)(nil)
