package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// a caller that goes away while its turn's admission lists a
// tools = ["*"] server (the listing ran on the caller's request context)
// must not leave the server offering nothing to every other caller for
// ListRetry.
func TestCancelledListingNotRecordedAsFailure(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var lists atomic.Int32
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
			if lists.Add(1) == 1 {
				entered <- struct{}{}
				<-release // the first listing is slow: its caller goes meanwhile
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}`, req.ID, toolJSON("a"))
		default:
			notFound(w, req.ID)
		}
	}))
	t.Cleanup(ts.Close)
	list, err := Tools(agentWith(ts.URL, "*"), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := setOf(t, list)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { set.Refresh(ctx); close(done) }()
	<-entered
	cancel()
	<-done
	close(release)
	set.Refresh(context.Background())
	if got := nameSet(set); got != "issues__a" {
		t.Fatalf("after a cancelled listing, another caller is offered %q (%d listings)", got, lists.Load())
	}
}
