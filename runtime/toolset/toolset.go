// Package toolset is what a sandbox may run for its agent: the built-ins the
// agent's package turns on, its declared command tools and stdio MCP
// servers, and the output file types. deployer/spec derives it from the
// package's vessel.toml and tools/*.toml; sandboxd takes it as JSON
// (--tools), so the sandbox links no TOML parser and no deployer code.
package toolset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Set is one agent's tools. A nil *Set is every built-in on, no declared
// tools, no output files (tests, local experiments).
type Set struct {
	Tools    Builtins `json:"tools"`
	Output   Output   `json:"output"`
	Declared []Tool   `json:"declared,omitempty"`
	MCP      []Tool   `json:"mcp,omitempty"`
}

// Builtins are the built-in tools that are on.
type Builtins struct {
	Enabled []string `json:"enabled"`
}

// Output are the file types a turn may hand back.
type Output struct {
	Files []string `json:"files"`
}

// Tool is a declared command tool, or (MCP set) a stdio MCP server.
type Tool struct {
	Name           string    `json:"name"`
	Command        []string  `json:"command,omitempty"` // may contain {package}
	TimeoutSeconds int       `json:"timeout_seconds,omitempty"`
	MCP            *StdioMCP `json:"mcp,omitempty"`
}

// StdioMCP is how a stdio MCP server runs in the sandbox.
type StdioMCP struct {
	Command []string          `json:"command"` // may contain {package}
	Env     map[string]string `json:"env,omitempty"`
}

// StdioMCP is the MCP server called name, or nil.
func (s *Set) StdioMCP(name string) *Tool {
	if s == nil {
		return nil
	}
	for i := range s.MCP {
		if s.MCP[i].Name == name {
			return &s.MCP[i]
		}
	}
	return nil
}

// Encode is s as the one-line JSON --tools takes.
func (s *Set) Encode() string {
	b, _ := json.Marshal(s) // strings, ints and maps of strings: cannot fail
	return string(b)
}

// Parse reads --tools: one JSON document, no unknown fields.
func Parse(v string) (*Set, error) {
	var s Set
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	if dec.More() {
		return nil, errors.New("tools: more than one JSON document")
	}
	if s.Tools.Enabled == nil {
		s.Tools.Enabled = []string{}
	}
	if s.Output.Files == nil {
		s.Output.Files = []string{}
	}
	return &s, nil
}
