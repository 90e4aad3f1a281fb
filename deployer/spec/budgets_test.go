package spec

import (
	"regexp"
	"testing"
)

func withBudgets(table string) map[string]string {
	return map[string]string{"deploy/deployment.toml": fixture["deploy/deployment.toml"] + "\n[budgets]\n" + table + "\n"}
}

func TestBudgetsAbsent(t *testing.T) {
	d, err := loadFixture(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Budgets.Any() {
		t.Errorf("budgets without a [budgets] table: %+v", d.Budgets)
	}
}

func TestBudgetsSet(t *testing.T) {
	d, err := loadFixture(t, withBudgets("turn_tokens = 1000\nowner_daily_tokens = 50000\nagent_daily_tokens = 90000\nagents = { alpha = 5, beta = 0 }"))
	if err != nil {
		t.Fatal(err)
	}
	b := d.Budgets
	if b.TurnTokens != 1000 || b.OwnerDailyTokens != 50000 || b.AgentCeiling("alpha") != 5 || b.AgentCeiling("beta") != 0 ||
		b.AgentCeiling("gamma") != 90000 || !b.Any() {
		t.Errorf("budgets = %+v", b)
	}
	got, err := ParseBudgets(b.Encode())
	if err != nil || got.Encode() != b.Encode() {
		t.Errorf("round trip: %+v, %v", got, err)
	}
}

func TestBudgetsRefused(t *testing.T) {
	for _, tc := range []struct{ table, want string }{
		{"turn_tokens = -1", `:\d+: budgets.turn_tokens: -1 is out of range; allowed 0 \(no ceiling\) to 1000000000000`},
		{"owner_daily_tokens = 1000000000001", `:\d+: budgets.owner_daily_tokens: 1000000000001 is out of range`},
		{"agent_daily_tokens = -5", `:\d+: budgets.agent_daily_tokens: -5 is out of range`},
		{"agents = { nobody = 5 }", `:\d+: budgets.agents.nobody: no \[\[agents\]\] entry has id "nobody"`},
		{"agents = { alpha = -1 }", `:\d+: budgets.agents.alpha: -1 is out of range`},
		{"turn_tokens = \"many\"", `turn_tokens`},
		{"turn_token = 3", `turn_token`},
	} {
		_, err := loadFixture(t, withBudgets(tc.table))
		if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
			t.Errorf("%s: err = %v, want %q", tc.table, err, tc.want)
		}
	}
}
