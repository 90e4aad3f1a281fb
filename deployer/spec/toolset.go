package spec

import "github.com/astraldeep/astralvessel-go/runtime/toolset"

// Toolset is what m's sandbox may run, as sandboxd takes it (--tools): the
// built-ins m turns on, its command tools and stdio MCP servers, its output
// file types. A nil m gives nil (every built-in on, nothing declared).
func (m *Manifest) Toolset() *toolset.Set {
	if m == nil {
		return nil
	}
	s := &toolset.Set{
		Tools:  toolset.Builtins{Enabled: append([]string{}, m.Tools.Enabled...)},
		Output: toolset.Output{Files: append([]string{}, m.Output.Files...)},
	}
	for _, t := range m.Declared {
		if len(t.Command) > 0 { // service tools run in the vessel
			s.Declared = append(s.Declared, toolsetTool(t))
		}
	}
	for _, t := range m.MCP {
		s.MCP = append(s.MCP, toolsetTool(t))
	}
	return s
}

func toolsetTool(t Tool) toolset.Tool {
	out := toolset.Tool{Name: t.Name, Command: t.Command, TimeoutSeconds: t.TimeoutSeconds}
	if t.MCP != nil {
		out.MCP = &toolset.StdioMCP{Command: t.MCP.Command, Env: t.MCP.Env}
	}
	return out
}
