package model

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/astraldeep/astralvessel-go/runtime/telemetry"
)

// TestTaskIDHeaderSent: a model call made for a turn names the turn's task
// id to the egress; one made outside a turn sends no such header.
func TestTaskIDHeaderSent(t *testing.T) {
	got := make(chan []string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Values(telemetry.TaskIDHeader)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	if _, err := c.Complete(telemetry.WithTaskID(context.Background(), "task-42"), req(), &rec{}); err != nil {
		t.Fatal(err)
	}
	if h := <-got; len(h) != 1 || h[0] != "task-42" {
		t.Errorf("header in a turn: %v", h)
	}
	if _, err := c.Complete(context.Background(), req(), &rec{}); err != nil {
		t.Fatal(err)
	}
	if h := <-got; len(h) != 0 {
		t.Errorf("header outside a turn: %v", h)
	}
}

// TestAgentHeaderSent: a client made for an agent names it to the egress
// (telemetry.AgentHeader) on every call; one without an agent sends none.
func TestAgentHeaderSent(t *testing.T) {
	got := make(chan []string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Values(telemetry.AgentHeader)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	if _, err := (&Client{BaseURL: srv.URL, Agent: "alpha"}).Complete(context.Background(), req(), &rec{}); err != nil {
		t.Fatal(err)
	}
	if h := <-got; len(h) != 1 || h[0] != "alpha" {
		t.Errorf("agent header: %v", h)
	}
	if _, err := (&Client{BaseURL: srv.URL}).Complete(context.Background(), req(), &rec{}); err != nil {
		t.Fatal(err)
	}
	if h := <-got; len(h) != 0 {
		t.Errorf("header without an agent: %v", h)
	}
}
