package loop

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/astraldeep/astralvessel-go/vessel/model"
)

// TestBudgetEndsTurn: a model call the egress refuses for a token budget
// ends the turn as model_error with the reason budget, the egress's
// message in error (a real model client on a loopback server answering as
// the egress does); another model error has no reason.
func TestBudgetEndsTurn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(r.URL.Path, "/budget") {
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"token budget exceeded: the agent has used 9 of its 9 tokens today (UTC)","type":"egress_error","code":"budget_exceeded"}}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"bad model"}}`)
	}))
	defer srv.Close()
	for path, reason := range map[string]string{"/budget": ReasonBudget, "/other": ""} {
		cfg := &Config{Model: &model.Client{BaseURL: srv.URL + path, Attempts: 1}, Prompt: func() (string, error) { return "p", nil }}
		var finished Event
		res := Run(context.Background(), cfg, &Input{Text: "q"}, func(ev Event) bool {
			if ev["type"] == EventTurnFinished {
				finished = ev
			}
			return true
		})
		if res.Status != StatusModelError || res.Reason != reason {
			t.Errorf("%s: status %s, reason %q, error %q", path, res.Status, res.Reason, res.Error)
		}
		ev := res.FinishedEvent()
		if finished != nil {
			ev = finished
		}
		if got, _ := ev["reason"].(string); got != reason {
			t.Errorf("%s: turn.finished reason %v", path, ev["reason"])
		}
		if reason != "" && !strings.Contains(res.Error, "token budget exceeded") {
			t.Errorf("%s: error %q", path, res.Error)
		}
	}
}
