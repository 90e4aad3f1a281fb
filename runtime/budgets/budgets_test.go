package budgets

import (
	"strings"
	"testing"
)

func TestParseBudgetsRefused(t *testing.T) {
	for in, want := range map[string]string{
		``:                              "budgets",
		`{"turn_tokens":-1}`:            "turn_tokens is -1",
		`{"agent_daily_tokens":1e13}`:   "agent_daily_tokens",
		`{"agents":{"Bad Id":1}}`:       "not an agent id",
		`{"agents":{"a":-3}}`:           "agents.a is -3",
		`{"turn_tokens":1,"extra":2}`:   "unknown field",
		`{"turn_tokens":1} {}`:          "more than one",
		`{"owner_daily_tokens":"many"}`: "budgets",
		`[1]`:                           "budgets",
	} {
		if _, err := ParseBudgets(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}

// FuzzParseBudgets: any input is parsed or refused without panicking, and
// what is parsed survives Encode.
func FuzzParseBudgets(f *testing.F) {
	f.Add(`{"turn_tokens":5,"agents":{"a":1}}`)
	f.Add(`{}`)
	f.Add(`{"agents":{"":1}}`)
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBudgets(s)
		if err != nil {
			return
		}
		again, err := ParseBudgets(b.Encode())
		if err != nil || again.Encode() != b.Encode() {
			t.Fatalf("%q: round trip %+v, %v", s, again, err)
		}
	})
}
