package spec

import (
	"maps"
	"slices"

	"github.com/astraldeep/astralvessel-go/runtime/budgets"
)

// Budgets is the [budgets] table (runtime/budgets, which the egress shares).
type Budgets = budgets.Budgets

// MaxBudgetTokens is budgets.MaxBudgetTokens.
const MaxBudgetTokens = budgets.MaxBudgetTokens

// ParseBudgets is budgets.ParseBudgets.
func ParseBudgets(s string) (Budgets, error) { return budgets.ParseBudgets(s) }

func (v *validator) budgets(agents map[string]bool) {
	c, b := v.c, &v.d.Budgets
	for key, n := range map[string]int64{"budgets.turn_tokens": b.TurnTokens,
		"budgets.owner_daily_tokens": b.OwnerDailyTokens, "budgets.agent_daily_tokens": b.AgentDailyTokens} {
		if n < 0 || n > MaxBudgetTokens {
			c.add(key, "%d is out of range; allowed 0 (no ceiling) to %d", n, MaxBudgetTokens)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.Agents)) {
		key := "budgets.agents." + id
		switch n := b.Agents[id]; {
		case !agents[id]:
			c.add(key, "no [[agents]] entry has id %q", id)
		case n < 0 || n > MaxBudgetTokens:
			c.add(key, "%d is out of range; allowed 0 (no ceiling for this agent) to %d", n, MaxBudgetTokens)
		}
	}
}
