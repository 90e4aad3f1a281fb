package client

import (
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestPendingApproval: a paused task (what SendMessage and GetTask return)
// shows its pending calls, and DecisionMessage answers them on the task.
func TestPendingApproval(t *testing.T) {
	data := map[string]any{"type": EventApprovalRequired, "approval_id": "ap1", "timeout_seconds": 600.0, "on_timeout": "deny",
		"expires_at": "2026-12-02T10:00:00Z", "step": 1.0,
		"calls": []any{map[string]any{"call_id": "c1", "tool": "bash", "arguments": `{"command":"ls"}`, "scope": "tools:execute",
			"reason": "the policy lists tool bash", "editable": true}}}
	task := &a2a.Task{ID: "T1", ContextID: "C1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired,
		Message: a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewDataPart(data))}}
	res := resultFromTask(task)
	p := res.Pending()
	if p == nil || p.TaskID != "T1" || p.ApprovalID != "ap1" || len(p.Calls) != 1 || p.Calls[0].Arguments != `{"command":"ls"}` ||
		!p.Calls[0].Editable || p.TimeoutSeconds != 600 || p.ExpiresAt.IsZero() || res.State != string(a2a.TaskStateInputRequired) || res.Finished != nil {
		t.Fatalf("pending %+v, result %+v", p, res)
	}
	msg, err := DecisionMessage(p, []Decision{Edit("c1", map[string]any{"command": "pwd"})})
	if err != nil {
		t.Fatal(err)
	}
	if msg.TaskID != "T1" || msg.ContextID != "C1" {
		t.Fatalf("message on %s/%s", msg.TaskID, msg.ContextID)
	}
	m := msg.Parts[0].Data().(map[string]any)
	d := m["decisions"].([]any)[0].(map[string]any)
	if m["type"] != "approval.decision" || m["approval_id"] != "ap1" || d["decision"] != "edit" || d["arguments"].(map[string]any)["command"] != "pwd" {
		t.Fatalf("decision part %v", m)
	}
	if _, err := DecisionMessage(nil, nil); err == nil {
		t.Fatal("no pending approval accepted")
	}
}
