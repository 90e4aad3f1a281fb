package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/astraldeep/astralvessel-go/vessel/client"
)

// prompter asks at the terminal what to do with each call a paused turn
// waits on (docs/approvals.md).
type prompter struct {
	in  *bufio.Reader
	out io.Writer
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	return &prompter{in: bufio.NewReader(in), out: out}
}

// maxAnswerLine bounds one line typed at a prompt.
const maxAnswerLine = 1 << 20

// line reads one line; io.EOF when the input ended.
func (p *prompter) line() (string, error) {
	var b strings.Builder
	for {
		chunk, isPrefix, err := p.in.ReadLine()
		if err != nil {
			if b.Len() > 0 && errors.Is(err, io.EOF) {
				return b.String(), nil
			}
			return "", err
		}
		b.Write(chunk)
		if b.Len() > maxAnswerLine {
			return "", fmt.Errorf("an answer is over %d bytes", maxAnswerLine)
		}
		if !isPrefix {
			return strings.TrimSpace(b.String()), nil
		}
	}
}

// decide shows each pending call and reads approve, deny or edit. When the
// input ends before every call is decided, the rest are denied: nothing
// runs without a yes.
func (p *prompter) decide(a *client.ApprovalRequired) ([]client.Decision, error) {
	fmt.Fprintf(p.out, "the agent waits for approval of %d tool call(s) (until %s; then: %s)\n",
		len(a.Calls), a.ExpiresAt.Local().Format("15:04:05"), a.OnTimeout)
	var out []client.Decision
	for i, c := range a.Calls {
		fmt.Fprintf(p.out, "\n[%d/%d] %s (%s) — %s\n  arguments: %s\n", i+1, len(a.Calls), c.Tool, c.Scope, c.Reason, argsPreview(c.Arguments))
		d, err := p.one(c)
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(p.out, "no answer (input ended): denied")
			d = client.Deny(c.CallID, "no answer at the terminal")
		} else if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *prompter) one(c client.PendingCall) (client.Decision, error) {
	choices := "[a]pprove, [d]eny"
	if c.Editable {
		choices += ", [e]dit"
	}
	for {
		fmt.Fprintf(p.out, "  %s? ", choices)
		ans, err := p.line()
		if err != nil {
			return client.Decision{}, err
		}
		switch strings.ToLower(ans) {
		case "a", "approve", "y", "yes":
			return client.Approve(c.CallID), nil
		case "d", "deny", "n", "no":
			fmt.Fprint(p.out, "  reason (optional, the model reads it): ")
			reason, err := p.line()
			if err != nil && !errors.Is(err, io.EOF) {
				return client.Decision{}, err
			}
			return client.Deny(c.CallID, reason), nil
		case "e", "edit":
			if !c.Editable {
				fmt.Fprintln(p.out, "  the policy does not allow editing this call")
				continue
			}
			fmt.Fprint(p.out, "  new arguments (one line of JSON, an object): ")
			raw, err := p.line()
			if err != nil {
				return client.Decision{}, err
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil {
				fmt.Fprintln(p.out, "  that is not a JSON object; try again")
				continue
			}
			return client.Edit(c.CallID, args), nil
		default:
			fmt.Fprintf(p.out, "  please answer %s\n", choices)
		}
	}
}
