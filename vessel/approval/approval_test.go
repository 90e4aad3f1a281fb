package approval

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

func TestPolicyNeeds(t *testing.T) {
	p := FromSettings(&settings.Approval{Tools: []string{"lookup"}, Scopes: []string{"tools:execute"}, Services: []string{"crm"}})
	cases := []struct {
		tool, scope, service string
		want                 bool
	}{
		{"bash", "tools:execute", "", true},
		{"lookup", "tools:read", "", true},
		{"order", "tools:write", "crm", true},
		{"read", "tools:files", "", false},
	}
	for _, c := range cases {
		if got, why := p.Needs(c.tool, c.scope, c.service); got != c.want || (got && why == "") {
			t.Errorf("Needs(%s, %s, %s) = %v %q", c.tool, c.scope, c.service, got, why)
		}
	}
	if got, _ := (*Policy)(nil).Needs("bash", "tools:execute", ""); got {
		t.Error("a nil policy needs nothing")
	}
}

// TestExtraOnlyAdds: a caller's entries widen the policy and never narrow it.
func TestExtraOnlyAdds(t *testing.T) {
	p := FromSettings(&settings.Approval{Tools: []string{"bash"}})
	r, _ := http.NewRequest("POST", "/", nil)
	r.Header.Add(Header, "tools:files, service:crm")
	x, err := FromRequest(r, []string{"read"}, []string{"bash", "read"}, []string{"crm"})
	if err != nil {
		t.Fatal(err)
	}
	w := p.With(x)
	for _, c := range [][3]string{{"bash", "tools:execute", ""}, {"grep", "tools:files", ""}, {"svc", "tools:write", "crm"}, {"read", "tools:read", ""}} {
		if ok, _ := w.Needs(c[0], c[1], c[2]); !ok {
			t.Errorf("widened policy lets %v through", c)
		}
	}
	if ok, _ := p.Needs("grep", "tools:files", ""); ok {
		t.Error("With changed the agent's policy")
	}
	all, err := ParseExtra([]string{"all"}, nil, nil)
	if err != nil || !all.All {
		t.Fatal(all, err)
	}
	if ok, _ := FromSettings(nil).With(all).Needs("x", "tools:read", ""); !ok {
		t.Error("all makes every call wait")
	}
	for _, bad := range []string{"bsh", "service:billing", "tools:root", strings.Repeat("a,", MaxEntries+1)} {
		if _, err := ParseExtra([]string{bad}, []string{"bash"}, []string{"crm"}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func pausedTask(r *Request) *a2a.Task {
	msg := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewDataPart(r.Data()))
	return &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg}}
}

func decisionMsg(v map[string]any) *a2a.Message {
	v["type"] = TypeDecision
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(v))
}

func TestCheckDecisions(t *testing.T) {
	req := &Request{Type: EventRequired, ApprovalID: "ap1", Calls: []Call{
		{CallID: "a", Tool: "bash", Arguments: `{"command":"ls"}`, Scope: "tools:execute", Editable: true},
		{CallID: "b", Tool: "write", Arguments: `{}`, Scope: "tools:write"},
	}}
	got, ok := FromTask(pausedTask(req))
	if !ok || got.ApprovalID != "ap1" || len(got.Calls) != 2 || got.Calls[0].Arguments != `{"command":"ls"}` {
		t.Fatalf("FromTask: %+v %v", got, ok)
	}
	good := decisionMsg(map[string]any{"approval_id": "ap1", "decisions": []any{
		map[string]any{"call_id": "a", "decision": "edit", "arguments": map[string]any{"command": "pwd"}},
		map[string]any{"call_id": "b", "decision": "deny", "reason": "no"},
	}})
	d, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Check(got, d, 1<<20, nil)
	if err != nil || m["a"].Arguments != `{"command":"pwd"}` || m["b"].Reason != "no" {
		t.Fatalf("%v %v", m, err)
	}
	cases := []struct {
		name string
		v    map[string]any
		want string
	}{
		{"stale", map[string]any{"approval_id": "old", "decisions": []any{map[string]any{"call_id": "a", "decision": "approve"}}}, "no longer waiting"},
		{"unknown", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "z", "decision": "approve"}}}, "call z is not waiting"},
		{"repeated", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "a", "decision": "approve"},
			map[string]any{"call_id": "a", "decision": "deny"}}}, "decided more than once"},
		{"missing", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "a", "decision": "approve"}}}, "no decision for call b"},
		{"edit refused", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "b", "decision": "edit", "arguments": map[string]any{}},
			map[string]any{"call_id": "a", "decision": "approve"}}}, "does not allow editing"},
		{"bad verdict", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "a", "decision": "maybe"}}}, "is not a decision"},
		{"edit no object", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "a", "decision": "edit", "arguments": "[1]"}}}, "must be a JSON object"},
		{"no id", map[string]any{"decisions": []any{}}, "no approval_id"},
		{"args on approve", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "a", "decision": "approve", "arguments": map[string]any{}}}}, "only taken with the edit"},
		{"too big", map[string]any{"approval_id": "ap1", "decisions": []any{map[string]any{"call_id": "a", "decision": "edit", "arguments": map[string]any{"x": strings.Repeat("y", 100)}},
			map[string]any{"call_id": "b", "decision": "deny"}}}, "over the agent's limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse(decisionMsg(c.v))
			if err == nil {
				_, err = Check(got, d, 64, nil)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	// A caller whose scopes leave the tool out may deny it, never approve it.
	narrow := func(tool, scope string) bool { return scope != "tools:execute" }
	d, _ = Parse(decisionMsg(map[string]any{"approval_id": "ap1", "decisions": []any{
		map[string]any{"call_id": "a", "decision": "approve"}, map[string]any{"call_id": "b", "decision": "approve"}}}))
	if _, err := Check(got, d, 0, narrow); err == nil || !strings.Contains(err.Error(), "cannot approve") {
		t.Fatalf("narrowed approve: %v", err)
	}
	d, _ = Parse(decisionMsg(map[string]any{"approval_id": "ap1", "decisions": []any{
		map[string]any{"call_id": "a", "decision": "deny"}, map[string]any{"call_id": "b", "decision": "approve"}}}))
	if _, err := Check(got, d, 0, narrow); err != nil {
		t.Fatalf("narrowed deny: %v", err)
	}
	if _, err := Parse(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("yes"))); err != ErrNoDecision {
		t.Fatalf("text only: %v", err)
	}
}

// FuzzParse: no decision part, however hostile, makes Parse or Check panic.
func FuzzParse(f *testing.F) {
	f.Add(`{"type":"approval.decision","approval_id":"ap1","decisions":[{"call_id":"a","decision":"edit","arguments":"{\"x\":1}"}]}`)
	f.Add(`{"type":"approval.decision","decisions":null}`)
	req := &Request{ApprovalID: "ap1", Calls: []Call{{CallID: "a", Tool: "bash", Editable: true}}}
	f.Fuzz(func(t *testing.T, s string) {
		msg, err := decodePart(s)
		if err != nil {
			return
		}
		if d, err := Parse(msg); err == nil {
			_, _ = Check(req, d, 100, nil)
		}
	})
}

func decodePart(s string) (*a2a.Message, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, err
	}
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(v)), nil
}
