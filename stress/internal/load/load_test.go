package load

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, c := range []struct{ p, want float64 }{{50, 5}, {95, 10}, {99, 10}, {10, 1}, {0, 1}, {100, 10}} {
		if got := Percentile(xs, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("Percentile of nothing is not 0")
	}
}

func TestCancelSetSpreadsAndClamps(t *testing.T) {
	s := cancelSet(50, 3, 20)
	if len(s) != 20 {
		t.Fatalf("%d cancels, want 20", len(s))
	}
	users := map[int]bool{}
	for k := range s {
		users[k[0]] = true
	}
	if len(users) < 10 {
		t.Errorf("cancels hit only %d users; want them spread", len(users))
	}
	if got := len(cancelSet(2, 1, 5)); got != 2 {
		t.Errorf("clamped set has %d, want 2", got)
	}
	if got := len(cancelSet(3, 2, 0)); got != 0 {
		t.Errorf("no cancels asked, got %d", got)
	}
}

func TestHistoryEndsWithAssistant(t *testing.T) {
	for _, n := range []int{0, 1, 2, 99, 1000} {
		h := History(n)
		if len(h) > n || len(h) < n-1 {
			t.Fatalf("History(%d) has %d messages", n, len(h))
		}
		if len(h) > 0 && h[len(h)-1].Role() != "assistant" {
			t.Fatalf("History(%d) ends with %s", n, h[len(h)-1].Role())
		}
	}
}

func TestScriptIsValidJSONWithBothRules(t *testing.T) {
	var s struct {
		Rules []struct {
			Name  string `json:"name"`
			Steps []struct {
				Text   string `json:"text"`
				Pieces int    `json:"pieces"`
			} `json:"steps"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(Script(1000), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Rules) != 2 || s.Rules[0].Name != ruleTurn || s.Rules[1].Name != ruleCancel {
		t.Fatalf("rules = %+v", s.Rules)
	}
	last := s.Rules[0].Steps[1]
	if last.Pieces != 1000 || len(last.Text) < 1000 {
		t.Fatalf("text step = %d pieces over %d chars", last.Pieces, len(last.Text))
	}
}

func TestSummarizeAndMarkdown(t *testing.T) {
	turns := []Turn{
		{User: 0, Index: 0, OK: true, Duration: 100 * time.Millisecond, FirstEvent: 5 * time.Millisecond, FirstText: 20 * time.Millisecond, Pieces: 10},
		{User: 0, Index: 1, OK: true, Cancel: true, Duration: 900 * time.Millisecond, FirstEvent: 6 * time.Millisecond},
		{User: 1, Index: 0, OK: false, Error: "boom", Duration: time.Second},
		{User: 1, Index: 1, OK: true, Duration: 300 * time.Millisecond, FirstEvent: 7 * time.Millisecond, Pieces: 10},
		{User: 2, Index: 0, OK: true, Cancel: true, LateCancel: true, Duration: 200 * time.Millisecond},
	}
	r := &Report{Users: 2, Turns: 2}
	r.Summarize(turns, 2*time.Second)
	if r.TurnsOK != 4 || r.TurnsFailed != 1 || r.CancelledOK != 1 || r.LateCancels != 1 {
		t.Fatalf("counts = %d ok, %d failed, %d cancelled, %d late", r.TurnsOK, r.TurnsFailed, r.CancelledOK, r.LateCancels)
	}
	// A late cancel's turn completed, so its time counts; cancelled and
	// failed turns do not.
	if r.TurnMedianMS != 200 || r.TurnMaxMS != 300 {
		t.Fatalf("median %v max %v; cancelled and failed turns must not count", r.TurnMedianMS, r.TurnMaxMS)
	}
	md := r.Markdown()
	for _, want := range []string{"| Turns ok / failed | 4 / 1", "boom", "| Measure | Value |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestToolSignal: a call a signal ended is named by its signal, from the
// sandbox's note or a shell-style exit code; a plain failure is not.
func TestToolSignal(t *testing.T) {
	code := func(c int) *int { return &c }
	cases := []struct {
		e    client.ToolFinished
		want string
	}{
		{client.ToolFinished{Preview: "[exit code 137 (SIGKILL)]", ExitCode: code(137)}, "SIGKILL"},
		{client.ToolFinished{Preview: "partial\n[exit code -1 (SIGTERM); the output was truncated]"}, "SIGTERM"},
		{client.ToolFinished{Preview: "", ExitCode: code(143)}, "signal 15"},
		{client.ToolFinished{Preview: "[exit code 1]", ExitCode: code(1)}, ""},
		{client.ToolFinished{Preview: "[the call was stopped: deadline]"}, ""},
	}
	for _, c := range cases {
		if got := toolSignal(c.e); got != c.want {
			t.Errorf("toolSignal(%q, %v) = %q, want %q", c.e.Preview, c.e.ExitCode, got, c.want)
		}
	}
}

// TestScriptHoldSleepsFirst: the held command sleeps, then prints the marker.
func TestScriptHoldSleepsFirst(t *testing.T) {
	if s := string(ScriptHold(10, 1500*time.Millisecond)); !strings.Contains(s, `"sleep 1.500 \u0026\u0026 echo `+toolMarker) {
		t.Fatalf("held script lacks the sleep: %s", s)
	}
	if strings.Contains(string(Script(10)), "sleep") {
		t.Fatal("the plain script sleeps")
	}
}
