// Package budgets holds the token ceilings the egress enforces: the type
// deployer/spec fills from [budgets] and the JSON form
// (VESSEL_EGRESS_BUDGETS) the egress reads.
package budgets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// idPattern is an agent id (deployer/spec checks the same).
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Budgets is the [budgets] table: token ceilings (prompt and completion
// tokens together, as the model reports them) the egress enforces on model
// requests (docs/egress.md). 0 or absent is no ceiling. Days are UTC days.
type Budgets struct {
	// TurnTokens bounds one turn (a task's run, named by X-Vessel-Task-Id).
	TurnTokens int64 `toml:"turn_tokens" json:"turn_tokens,omitempty"`
	// OwnerDailyTokens bounds one task owner's day (X-Vessel-Owner).
	OwnerDailyTokens int64 `toml:"owner_daily_tokens" json:"owner_daily_tokens,omitempty"`
	// AgentDailyTokens bounds one agent's day (X-Vessel-Agent).
	AgentDailyTokens int64 `toml:"agent_daily_tokens" json:"agent_daily_tokens,omitempty"`
	// Agents overrides AgentDailyTokens for the agents it names (an
	// [[agents]] id); 0 there is no ceiling for that agent.
	Agents map[string]int64 `toml:"agents" json:"agents,omitempty"`
}

// MaxBudgetTokens bounds every ceiling of [budgets].
const MaxBudgetTokens = 1_000_000_000_000

// Any reports whether some ceiling is set.
func (b Budgets) Any() bool {
	return b.TurnTokens > 0 || b.OwnerDailyTokens > 0 || b.AgentDailyTokens > 0 ||
		slices.ContainsFunc(slices.Collect(maps.Values(b.Agents)), func(n int64) bool { return n > 0 })
}

// AgentCeiling is the daily ceiling of agent: its override, or
// AgentDailyTokens.
func (b Budgets) AgentCeiling(agent string) int64 {
	if n, ok := b.Agents[agent]; ok {
		return n
	}
	return b.AgentDailyTokens
}

// Encode is the JSON deploy hands the egress (VESSEL_EGRESS_BUDGETS).
func (b Budgets) Encode() string {
	out, _ := json.Marshal(b) // only integers and agent-id keys: cannot fail
	return string(out)
}

// ParseBudgets reads what Encode wrote, strictly: unknown members,
// trailing data and out-of-range values are refused.
func ParseBudgets(s string) (Budgets, error) {
	var b Budgets
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Budgets{}, fmt.Errorf("budgets: %w", err)
	}
	if dec.More() {
		return Budgets{}, errors.New("budgets: more than one JSON document")
	}
	check := func(name string, n int64) error {
		if n < 0 || n > MaxBudgetTokens {
			return fmt.Errorf("budgets: %s is %d; allowed 0 (no ceiling) to %d", name, n, MaxBudgetTokens)
		}
		return nil
	}
	if err := errors.Join(check("turn_tokens", b.TurnTokens), check("owner_daily_tokens", b.OwnerDailyTokens),
		check("agent_daily_tokens", b.AgentDailyTokens)); err != nil {
		return Budgets{}, err
	}
	for _, id := range slices.Sorted(maps.Keys(b.Agents)) {
		if !idPattern.MatchString(id) {
			return Budgets{}, fmt.Errorf("budgets: agents: %q is not an agent id", id)
		}
		if err := check("agents."+id, b.Agents[id]); err != nil {
			return Budgets{}, err
		}
	}
	return b, nil
}
