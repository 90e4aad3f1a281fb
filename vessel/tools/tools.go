// Package tools routes the model's tool calls: sandbox tools (read, glob,
// list, grep, bash and declared command tools) through the agent's sandbox,
// and any tool another package provides through a Factory (webfetch,
// websearch, present, service tools).
package tools

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/astraldeep/astralvessel-go/vessel/auth"
	"github.com/astraldeep/astralvessel-go/vessel/model"
	"github.com/astraldeep/astralvessel-go/vessel/settings"
)

// Call is one tool call the model asked for.
type Call struct {
	ID        string
	Name      string
	Arguments string // JSON object as the model sent it
}

// File is a file a tool returned.
type File struct {
	Name      string
	MediaType string
	Content   []byte
}

// Refused is a file a tool left that was not kept.
type Refused struct {
	Name   string
	Reason string
}

// Result is a finished tool call.
type Result struct {
	// Output is what the model reads as the tool's answer.
	Output string
	// IsError marks a failed call (non-zero exit, bad arguments, refusal).
	IsError bool
	// ExitCode is the process exit code for process tools.
	ExitCode *int
	// Stopped is "timeout", "cancelled" or "disk_limit" when cut short.
	Stopped   string
	Truncated bool
	// Files are as the tool returned them; the loop checks each one
	// (outputfiles) before it is attached.
	Files   []File
	Refused []Refused
	// Components are AstralPrimitives components (the present tool).
	Components []any
}

// Turn is what a tool knows about the turn it runs in.
type Turn struct {
	ID        string // the task id; also the sandbox workspace id
	ContextID string
	Agent     string
	Owner     string
	Principal *auth.Principal
}

// Tool is one tool offered to the model.
type Tool interface {
	// Def is the tool's definition as sent to the model.
	Def() model.ToolDef
	// Scope is the tool's permission scope (one of toolset.Scopes).
	Scope() string
	// Run executes a call. A returned error is an infrastructure failure;
	// the loop reports it to the model as a failed call.
	Run(ctx context.Context, turn *Turn, call Call) (*Result, error)
}

// Factory provides tools for an agent, deciding from its manifest which.
type Factory interface {
	Tools(agent *settings.Agent) ([]Tool, error)
}

// FactoryFunc adapts a function to Factory.
type FactoryFunc func(agent *settings.Agent) ([]Tool, error)

// Tools implements Factory.
func (f FactoryFunc) Tools(agent *settings.Agent) ([]Tool, error) { return f(agent) }

// TurnEnder is implemented by tool backends that hold per-turn state (the
// sandbox workspace); the loop calls EndTurn when a turn ends.
type TurnEnder interface {
	EndTurn(ctx context.Context, turnID string) error
}

// Preparer is implemented by tools whose definitions come from elsewhere
// (an MCP server's tool list); the loop calls Prepare before it reads the
// turn's definitions. Prepare bounds its own time and never fails the
// turn: a tool it could not prepare says so in its definition.
type Preparer interface {
	Prepare(ctx context.Context, turn *Turn)
}

// Expander is implemented by a tool that stands for tools known only at
// run time (an MCP server declared with tools = ["*"]): a Set never offers
// the expander itself but, in its place, the tools Expand returns from
// what was last listed (no I/O). Refresh brings that list up to date; it
// bounds its own time and never fails (a server that could not be listed
// offers no tools).
type Expander interface {
	Expand() []Tool
	Refresh(ctx context.Context)
}

// Set is an agent's tools by name.
type Set struct {
	byName    map[string]Tool
	names     []string
	expanders []Expander
}

// NewSet builds a set; two tools with one name are an error.
func NewSet(list ...Tool) (*Set, error) {
	s := &Set{byName: map[string]Tool{}}
	for _, t := range list {
		if e, ok := t.(Expander); ok {
			s.expanders = append(s.expanders, e)
			continue
		}
		name := t.Def().Function.Name
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("two tools are named %q", name)
		}
		s.byName[name] = t
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	return s, nil
}

// Refresh brings the lists of the set's expanders up to date (see
// Expander); a set without expanders does nothing.
func (s *Set) Refresh(ctx context.Context) {
	if s == nil {
		return
	}
	for _, e := range s.expanders {
		e.Refresh(ctx)
	}
}

// current is every tool of the set now, by name: the fixed ones and what
// the expanders last listed. A listed name that is already taken (by a
// fixed tool or an earlier expansion) is not offered.
func (s *Set) current() (map[string]Tool, []string) {
	if len(s.expanders) == 0 {
		return s.byName, s.names
	}
	by := make(map[string]Tool, len(s.byName))
	names := slices.Clone(s.names)
	for n, t := range s.byName {
		by[n] = t
	}
	for _, e := range s.expanders {
		for _, t := range e.Expand() {
			n := t.Def().Function.Name
			if _, dup := by[n]; dup {
				continue
			}
			by[n] = t
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return by, names
}

// Get returns a tool by name.
func (s *Set) Get(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	if t, ok := s.byName[name]; ok {
		return t, true
	}
	// The first expansion naming it, as current offers it (a fixed tool
	// was looked up above), without building the whole set per call.
	for _, e := range s.expanders {
		for _, t := range e.Expand() {
			if t.Def().Function.Name == name {
				return t, true
			}
		}
	}
	return nil, false
}

// Names lists the tools, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	_, names := s.current()
	return slices.Clone(names)
}

// Filter returns the tools keep accepts, sorted by name (scope narrowing).
func (s *Set) Filter(keep func(Tool) bool) []Tool {
	if s == nil {
		return nil
	}
	by, names := s.current()
	var out []Tool
	for _, n := range names {
		if t := by[n]; keep == nil || keep(t) {
			out = append(out, t)
		}
	}
	return out
}
