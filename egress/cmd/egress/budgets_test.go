package main

import (
	"strings"
	"testing"
)

// TestBudgetsVariable: VESSEL_EGRESS_BUDGETS is read strictly; a bad value
// stops the egress with the variable's name.
func TestBudgetsVariable(t *testing.T) {
	with := func(v string) func(string) string {
		return env(map[string]string{"VESSEL_UPSTREAM_MODEL_URL": "https://m.test/v1", "VESSEL_EGRESS_TOKEN": "t", "VESSEL_EGRESS_BUDGETS": v})
	}
	c, err := loadConfig(nil, with(`{"turn_tokens":100,"owner_daily_tokens":5000,"agents":{"alpha":7}}`))
	if err != nil || c.budgets.TurnTokens != 100 || c.budgets.OwnerDailyTokens != 5000 || c.budgets.AgentCeiling("alpha") != 7 {
		t.Fatalf("good value: %+v, %v", c, err)
	}
	if c, err := loadConfig(nil, with("")); err != nil || c.budgets.Any() {
		t.Fatalf("unset: %+v, %v", c, err)
	}
	for v, want := range map[string]string{
		`{"turn_tokens":-1}`:   "turn_tokens is -1",
		`{"turn_tokenz":1}`:    "unknown field",
		`turn_tokens=1`:        "budgets",
		`{"agents":{"A B":1}}`: "not an agent id",
	} {
		if _, err := loadConfig(nil, with(v)); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "VESSEL_EGRESS_BUDGETS") {
			t.Errorf("%s: err = %v, want %q", v, err, want)
		}
	}
}
