package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The "type" of the data parts of a pause: the request the vessel sends in
// the input-required status message, the decisions the owner sends back.
// EventRequired is also the status update's metadata["vessel.event"].
const (
	EventRequired = "approval.required"
	TypeDecision  = "approval.decision"
)

// Verdicts of a decision.
const (
	Approve = "approve"
	Deny    = "deny"
	Edit    = "edit"
)

// Limits of a decision. DefaultMaxArguments is the agent's
// max_tool_arguments_bytes when none is set (as model.DefaultMaxArguments).
const (
	DefaultMaxArguments = 1 << 20
	MaxReasonChars      = 2000
	MaxCalls            = 128 // calls in one request (model.MaxToolCalls is lower)
)

// Call is one call waiting for a decision, as the request lists it.
type Call struct {
	CallID string `json:"call_id"`
	Tool   string `json:"tool"`
	// Arguments are exactly what the model sent (a JSON text, usually an
	// object), not re-encoded.
	Arguments string `json:"arguments"`
	Scope     string `json:"scope"`
	Service   string `json:"service,omitempty"`
	// Reason says which policy entry made the call wait.
	Reason   string `json:"reason"`
	Editable bool   `json:"editable"`
}

// Request is the data part of the input-required status message.
type Request struct {
	Type       string `json:"type"` // EventRequired
	ApprovalID string `json:"approval_id"`
	Calls      []Call `json:"calls"`
	// ExpiresAt is when the wait ends (RFC 3339, UTC); OnTimeout is what
	// happens then: "deny" or "fail".
	ExpiresAt      string `json:"expires_at"`
	TimeoutSeconds int    `json:"timeout_seconds"`
	OnTimeout      string `json:"on_timeout"`
	// Step is the turn's model step the calls belong to (1-based).
	Step int `json:"step"`
}

// Data is r as a JSON-shaped value for an A2A data part.
func (r *Request) Data() map[string]any {
	b, _ := json.Marshal(r) // strings and ints always marshal
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// Expires is ExpiresAt as a time (zero if unreadable).
func (r *Request) Expires() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.ExpiresAt)
	return t
}

// FromTask reads the pending request out of a task's status message; ok is
// false when the task is not waiting for approval.
func FromTask(t *a2a.Task) (*Request, bool) {
	if t == nil || t.Status.State != a2a.TaskStateInputRequired || t.Status.Message == nil {
		return nil, false
	}
	for _, p := range t.Status.Message.Parts {
		if p == nil {
			continue
		}
		m, ok := p.Data().(map[string]any)
		if !ok || m["type"] != EventRequired {
			continue
		}
		var r Request
		if err := remarshal(m, &r); err != nil || r.ApprovalID == "" {
			return nil, false
		}
		return &r, true
	}
	return nil, false
}

// Decision is the owner's answer for one call.
type Decision struct {
	CallID  string `json:"call_id"`
	Verdict string `json:"decision"`
	Reason  string `json:"reason,omitempty"`
	// Arguments replace the call's arguments (Edit only): a JSON object.
	Arguments string `json:"-"`
}

// Decisions is the data part the owner sends on the paused task.
type Decisions struct {
	ApprovalID string
	List       []Decision
}

// wireDecisions is Decisions as sent; arguments may be an object or a
// string holding one.
type wireDecisions struct {
	Type       string `json:"type"`
	ApprovalID string `json:"approval_id"`
	Decisions  []struct {
		CallID    string          `json:"call_id"`
		Decision  string          `json:"decision"`
		Reason    string          `json:"reason"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"decisions"`
}

// ErrNoDecision is returned by Parse for a message with no decision part.
var ErrNoDecision = errors.New("the message holds no approval decision")

// IsDecision reports whether a part is a decision data part.
func IsDecision(p *a2a.Part) bool {
	if p == nil {
		return false
	}
	m, ok := p.Data().(map[string]any)
	return ok && m["type"] == TypeDecision
}

// HasDecision reports whether msg holds a decision data part.
func HasDecision(msg *a2a.Message) bool {
	if msg == nil {
		return false
	}
	for _, p := range msg.Parts {
		if IsDecision(p) {
			return true
		}
	}
	return false
}

// Parse reads the decisions out of msg. Every error's text is for the
// caller.
func Parse(msg *a2a.Message) (*Decisions, error) {
	if msg == nil {
		return nil, ErrNoDecision
	}
	var found *a2a.Part
	for _, p := range msg.Parts {
		if !IsDecision(p) {
			continue
		}
		if found != nil {
			return nil, errors.New("the message holds more than one approval.decision part; send every decision in one")
		}
		found = p
	}
	if found == nil {
		return nil, ErrNoDecision
	}
	var w wireDecisions
	if err := remarshal(found.Data(), &w); err != nil {
		return nil, fmt.Errorf("the approval.decision part could not be read: %s", clip(err.Error(), 200))
	}
	if w.ApprovalID == "" {
		return nil, errors.New("the approval.decision part has no approval_id; copy it from the approval.required request")
	}
	if len(w.Decisions) == 0 {
		return nil, errors.New("the approval.decision part lists no decisions")
	}
	if len(w.Decisions) > MaxCalls {
		return nil, fmt.Errorf("the approval.decision part lists %d decisions; at most %d", len(w.Decisions), MaxCalls)
	}
	d := &Decisions{ApprovalID: w.ApprovalID}
	for i, wd := range w.Decisions {
		dec := Decision{CallID: wd.CallID, Verdict: wd.Decision, Reason: wd.Reason}
		if dec.CallID == "" {
			return nil, fmt.Errorf("decision %d has no call_id", i)
		}
		switch dec.Verdict {
		case Approve, Deny, Edit:
		default:
			return nil, fmt.Errorf("decision %d (call %s): %q is not a decision; use approve, deny or edit", i, clip(dec.CallID, 64), clip(dec.Verdict, 32))
		}
		if !utf8.ValidString(dec.Reason) || utf8.RuneCountInString(dec.Reason) > MaxReasonChars {
			return nil, fmt.Errorf("decision %d (call %s): the reason must be valid UTF-8 of at most %d characters", i, clip(dec.CallID, 64), MaxReasonChars)
		}
		if dec.Verdict == Edit {
			args, err := editedArguments(wd.Arguments)
			if err != nil {
				return nil, fmt.Errorf("decision %d (call %s): %w", i, clip(dec.CallID, 64), err)
			}
			dec.Arguments = args
		} else if len(wd.Arguments) > 0 && string(wd.Arguments) != "null" {
			return nil, fmt.Errorf("decision %d (call %s): arguments are only taken with the edit decision", i, clip(dec.CallID, 64))
		}
		d.List = append(d.List, dec)
	}
	return d, nil
}

// editedArguments accepts a JSON object, or a string holding one, and
// returns it as compact JSON text.
func editedArguments(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("an edit decision needs the new arguments (a JSON object)")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", errors.New("the edited arguments must be a JSON object")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return "", errors.New("the edited arguments must be a JSON object")
	}
	return string(b), nil
}

// Check holds decisions against the request they answer. maxArgs bounds
// edited arguments (the agent's max_tool_arguments_bytes); permitted, when
// set, says whether this caller may use a tool on this call (scope
// narrowing): a call it may not use can be denied but not approved. The
// result maps each call id to its decision.
func Check(r *Request, d *Decisions, maxArgs int, permitted func(tool, scope string) bool) (map[string]Decision, error) {
	if maxArgs <= 0 {
		maxArgs = DefaultMaxArguments
	}
	if d.ApprovalID != r.ApprovalID {
		return nil, fmt.Errorf("these decisions are for approval %s, which is no longer waiting; the task now waits on approval %s",
			clip(d.ApprovalID, 64), r.ApprovalID)
	}
	calls := make(map[string]*Call, len(r.Calls))
	for i := range r.Calls {
		calls[r.Calls[i].CallID] = &r.Calls[i]
	}
	out := make(map[string]Decision, len(d.List))
	for _, dec := range d.List {
		c := calls[dec.CallID]
		if c == nil {
			return nil, fmt.Errorf("call %s is not waiting for approval on this task; waiting: %s", clip(dec.CallID, 64), waiting(r))
		}
		if _, dup := out[dec.CallID]; dup {
			return nil, fmt.Errorf("call %s is decided more than once", dec.CallID)
		}
		if dec.Verdict == Edit {
			if !c.Editable {
				return nil, fmt.Errorf("call %s: the policy does not allow editing its arguments; approve or deny it", dec.CallID)
			}
			if len(c.Tool)+len(dec.Arguments) > maxArgs {
				return nil, fmt.Errorf("call %s: the edited arguments are over the agent's limit of %d bytes", dec.CallID, maxArgs)
			}
		}
		if dec.Verdict != Deny && permitted != nil && !permitted(c.Tool, c.Scope) {
			return nil, fmt.Errorf("call %s: this request's scopes do not allow tool %s (%s), so it cannot approve it; it may deny it", dec.CallID, c.Tool, c.Scope)
		}
		out[dec.CallID] = dec
	}
	for _, c := range r.Calls {
		if _, ok := out[c.CallID]; !ok {
			return nil, fmt.Errorf("no decision for call %s; decide every waiting call (%s) in one message", c.CallID, waiting(r))
		}
	}
	return out, nil
}

func waiting(r *Request) string {
	ids := make([]string, len(r.Calls))
	for i, c := range r.Calls {
		ids[i] = c.CallID
	}
	return strings.Join(ids, ", ")
}

func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
