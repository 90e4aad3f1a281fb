package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/issuers"
	"github.com/astraldeep/astralvessel-go/runtime/outputfiles"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
)

// Package defaults.
const (
	DefaultAPIKey       = "env:VESSEL_MODEL_KEY"
	DefaultMaxSteps     = vesseldefaults.DefaultMaxSteps
	DefaultDeadline     = 300 // seconds
	DefaultVersion      = "1.0.0"
	DefaultToolTimeout  = 60 // seconds
	maxDeadlineSeconds  = 86400
	maxMaxSteps         = 1000
	maxToolTimeout      = 3600
	maxToolFileBytes    = 1 << 20
	maxManifestBytes    = 1 << 20
	manifestFile        = "vessel.toml"
	promptFile          = "prompt.md"
	toolsDir            = "tools"
	packagePlaceholder  = "{package}"
	builtinToolsAllowed = "read, glob, list, grep, bash, webfetch, websearch, present"
)

// [model]'s output limits. The largest keeps an answer's SSE frame, even
// with every character escaped, under the 10 MB line a2a-go clients read.
const (
	DefaultMaxAnswerBytes        = ByteSize(1 << 20)
	DefaultMaxToolArgumentsBytes = ByteSize(1 << 20)
	minOutputLimit               = ByteSize(1 << 10)
	maxOutputLimit               = ByteSize(4 << 20)
)

// [model]'s stream timeouts, in seconds.
const (
	DefaultFirstByteTimeout = 60
	DefaultIdleTimeout      = 60
	maxStreamTimeout        = 3600
)

var (
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// loadedPackage keeps a manifest with the positions of its files, so the
// deployment can report problems it finds (an ungranted service) on the
// right line of the right tool file.
type loadedPackage struct {
	manifest *Manifest
	tools    []*collector // parallel to manifest.Declared
}

// LoadPackage reads an agent folder: vessel.toml, prompt.md (which must
// exist; its text is read per turn by ReadPrompt) and tools/*.toml. The
// model's api_key stays a reference ("env:NAME"); Model.ResolveAPIKey reads
// it when the key is needed, so loading never needs the key.
func LoadPackage(dir string, env Env) (*Manifest, error) {
	_ = env // no package field takes env: references at load time
	var errs Errors
	lp := loadPackage(dir, &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return lp.manifest, nil
}

func loadPackage(dir string, errs *Errors) *loadedPackage {
	file := filepath.Join(dir, manifestFile)
	data, err := readLimited(file, maxManifestBytes)
	if err != nil {
		*errs = append(*errs, &Error{File: file, Msg: err.Error()})
		return nil
	}
	var m Manifest
	decodeErrs, ok := decodeStrict(file, data, &m)
	*errs = append(*errs, decodeErrs...)
	if !ok {
		return nil
	}
	var found Errors
	c := &collector{file: file, pos: buildPosMap(data), errs: &found}
	validateManifest(c, dir, &m)
	*errs = append(*errs, dropUnder(found, decodeErrs)...)
	lp := &loadedPackage{manifest: &m}
	loadTools(dir, lp, errs)
	if m.Tools.Enabled == nil {
		m.Tools.Enabled = []string{}
	}
	if m.Output.Files == nil {
		m.Output.Files = []string{}
	}
	return lp
}

func readLimited(file string, limit int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("file is %d bytes; at most %d allowed", st.Size(), limit)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	return data, nil
}

// validateManifest checks vessel.toml and fills its defaults, one step per
// table, in the order the problems are reported.
func validateManifest(c *collector, dir string, m *Manifest) {
	validateAgentFields(c, dir, m)
	validateModel(c, &m.Model)
	validateToolList(c, m)
	validateOutput(c, &m.Output)
}

// validateAgentFields checks the top-level fields and the prompt files.
func validateAgentFields(c *collector, dir string, m *Manifest) {
	if strings.TrimSpace(m.Name) == "" {
		c.add("name", "required: the agent's display name")
	}
	if strings.TrimSpace(m.Description) == "" {
		c.add("description", "required: one or two sentences saying what the agent does")
	}
	if m.Version == "" {
		m.Version = DefaultVersion
	}
	for i, ex := range m.Examples {
		if strings.TrimSpace(ex) == "" {
			c.add(fmt.Sprintf("examples[%d]", i), "must not be empty")
		}
	}
	if !c.set("deadline_seconds") {
		m.DeadlineSecs = DefaultDeadline
	} else if m.DeadlineSecs < 1 || m.DeadlineSecs > maxDeadlineSeconds {
		c.add("deadline_seconds", "%d is out of range; allowed 1 to %d", m.DeadlineSecs, maxDeadlineSeconds)
	}
	if st, err := os.Stat(filepath.Join(dir, promptFile)); err != nil || !st.Mode().IsRegular() {
		*c.errs = append(*c.errs, &Error{File: filepath.Join(dir, promptFile), Msg: "missing: every agent folder needs a prompt.md briefing"})
	}
	for i, p := range m.PromptAppend {
		field := fmt.Sprintf("prompt_append[%d]", i)
		if msg := packageRelative(p); msg != "" {
			c.add(field, "%s", msg)
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, p)); err != nil || !st.Mode().IsRegular() {
			c.add(field, "file %q not found in the agent folder", p)
		}
	}
}

// validateModel checks [model].
func validateModel(c *collector, mm *Model) {
	if strings.TrimSpace(mm.Name) == "" {
		c.add("model.name", "required: the model name the endpoint serves")
	}
	if mm.BaseURL != "" {
		if msg := checkURL(mm.BaseURL, false); msg != "" {
			c.add("model.base_url", "%s", msg)
		}
	}
	if !c.set("model.api_key") {
		mm.APIKey = DefaultAPIKey
	} else if name, ok := strings.CutPrefix(mm.APIKey, "env:"); ok && !envNamePattern.MatchString(name) {
		c.add("model.api_key", "invalid environment variable name %q; want env:NAME with NAME of letters, digits and _", name)
	} else if mm.APIKey == "" {
		c.add("model.api_key", `must not be empty; leave it out for the default %q`, DefaultAPIKey)
	}
	validateRequestSettings(c, &mm.RequestSettings)
	if !c.set("model.max_steps") {
		mm.MaxSteps = DefaultMaxSteps
	} else if mm.MaxSteps < 1 || mm.MaxSteps > maxMaxSteps {
		c.add("model.max_steps", "%d is out of range; allowed 1 to %d", mm.MaxSteps, maxMaxSteps)
	}
	for _, l := range []struct {
		field string
		v     *ByteSize
		def   ByteSize
	}{
		{"model.max_answer_bytes", &mm.MaxAnswerBytes, DefaultMaxAnswerBytes},
		{"model.max_tool_arguments_bytes", &mm.MaxToolArgumentsBytes, DefaultMaxToolArgumentsBytes},
	} {
		if !c.set(l.field) {
			*l.v = l.def
		} else if *l.v < minOutputLimit || *l.v > maxOutputLimit {
			c.add(l.field, "%d bytes is out of range; allowed %s to %s", int64(*l.v), minOutputLimit, maxOutputLimit)
		}
	}

	for _, l := range []struct {
		field string
		v     *int
		def   int
	}{
		{"model.first_byte_timeout_seconds", &mm.FirstByteTimeoutSecs, DefaultFirstByteTimeout},
		{"model.idle_timeout_seconds", &mm.IdleTimeoutSecs, DefaultIdleTimeout},
	} {
		if !c.set(l.field) {
			*l.v = l.def
		} else if *l.v < 1 || *l.v > maxStreamTimeout {
			c.add(l.field, "%d is out of range; allowed 1 to %d", *l.v, maxStreamTimeout)
		}
	}
}

// validateToolList checks [tools] enabled: known built-ins, once each.
func validateToolList(c *collector, m *Manifest) {
	seen := map[string]bool{}
	for i, name := range m.Tools.Enabled {
		field := fmt.Sprintf("tools.enabled[%d]", i)
		if _, ok := BuiltinTools[name]; !ok {
			c.add(field, "unknown built-in tool %q; allowed: %s", name, builtinToolsAllowed)
		} else if seen[name] {
			c.add(field, "%q is listed twice", name)
		}
		seen[name] = true
	}
	if seen["present"] && !m.Output.Primitives {
		c.add("tools.enabled", `"present" needs [output] primitives = true`)
	}
}

// validateOutput checks [output] files: known types, once each.
func validateOutput(c *collector, o *Output) {
	seenOut := map[string]bool{}
	for i, f := range o.Files {
		field := fmt.Sprintf("output.files[%d]", i)
		if !contains(outputfiles.Types, f) {
			c.add(field, "unknown file type %q; allowed: %s", f, strings.Join(outputfiles.Types, ", "))
		} else if seenOut[f] {
			c.add(field, "%q is listed twice", f)
		}
		seenOut[f] = true
	}
}

// set reports whether the file wrote this key (so an explicit 0 is checked
// rather than replaced by the default).
func (c *collector) set(field string) bool {
	_, ok := c.pos.lines[field]
	return ok
}

func loadTools(dir string, lp *loadedPackage, errs *Errors) {
	td := filepath.Join(dir, toolsDir)
	entries, err := os.ReadDir(td)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		*errs = append(*errs, &Error{File: td, Msg: fmt.Sprintf("cannot read the tools folder: %v", err)})
		return
	}
	byName := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		file := filepath.Join(td, e.Name())
		data, err := readLimited(file, maxToolFileBytes)
		if err != nil {
			*errs = append(*errs, &Error{File: file, Msg: err.Error()})
			continue
		}
		var t Tool
		decodeErrs, ok := decodeStrict(file, data, &t)
		*errs = append(*errs, decodeErrs...)
		if !ok {
			continue
		}
		t.File = file
		var found Errors
		c := &collector{file: file, pos: buildPosMap(data), errs: &found}
		if t.MCP != nil {
			validateStdioMCP(c, &t)
		} else {
			validateTool(c, &t)
		}
		*errs = append(*errs, dropUnder(found, decodeErrs)...)
		c.errs = errs
		if t.Name != "" {
			if other, dup := byName[t.Name]; dup {
				c.add("name", "tool %q is also declared in %s; tool names must be unique", t.Name, other)
			} else if _, builtin := BuiltinTools[t.Name]; builtin {
				c.add("name", "%q is the name of a built-in tool; choose another name", t.Name)
			}
			byName[t.Name] = file
		}
		if t.MCP != nil {
			lp.manifest.MCP = append(lp.manifest.MCP, t)
			continue
		}
		lp.manifest.Declared = append(lp.manifest.Declared, t)
		lp.tools = append(lp.tools, c)
	}
	// Sorted by name so the manifest, and hence the fingerprint, does not
	// depend on directory order.
	idx := make([]int, len(lp.manifest.Declared))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return lp.manifest.Declared[idx[a]].Name < lp.manifest.Declared[idx[b]].Name
	})
	tools := make([]Tool, len(idx))
	cols := make([]*collector, len(idx))
	for i, j := range idx {
		tools[i], cols[i] = lp.manifest.Declared[j], lp.tools[j]
	}
	lp.manifest.Declared, lp.tools = tools, cols
	sort.SliceStable(lp.manifest.MCP, func(a, b int) bool { return lp.manifest.MCP[a].Name < lp.manifest.MCP[b].Name })
}

// reservedMCPEnv are the variables sandboxd sets for every call; an [mcp]
// env may not replace them.
var reservedMCPEnv = []string{"HOME", "TMPDIR", "PWD", "VESSEL_OUTBOX", "PATH"}

// validateStdioMCP checks a tools/<name>.toml that declares an MCP server.
func validateStdioMCP(c *collector, t *Tool) {
	m := t.MCP
	if t.Name == "" {
		c.add("name", "required: the server's name; its tools reach the model as <name>__<tool>")
	} else if !issuers.ValidID(t.Name) {
		c.add("name", "invalid MCP server name %q; allowed: lowercase letters, digits and - (so <server>__<tool> splits one way)", t.Name)
	}
	for _, k := range []string{"command", "service", "path", "scope", "timeout_seconds", "parameters"} {
		if c.set(k) {
			c.add(k, "a file with [mcp] declares a server: put its keys in [mcp] (command, env, tools, scope, scopes, timeout_seconds)")
		}
	}
	if len(m.Command) == 0 || strings.TrimSpace(m.Command[0]) == "" {
		c.add("mcp.command", `required: the server's program, e.g. ["{package}/bin/notes-mcp"]`)
	}
	validateStdioMCPEnv(c, m.Env)
	all := len(m.Tools) == 1 && m.Tools[0] == AllMCPTools
	seen := validateStdioMCPTools(c, t.Name, m.Tools, all)
	if m.Scope != "" && !contains(Scopes, m.Scope) {
		c.add("mcp.scope", "unknown scope %q; allowed: %s", m.Scope, strings.Join(Scopes, ", "))
	}
	if m.Scope == "" && (all || len(m.Scopes) < len(seen)) {
		c.add("mcp.scope", "required: the default scope of the server's tools (scopes sets one per tool); one of %s", strings.Join(Scopes, ", "))
	}
	for _, tn := range slices.Sorted(maps.Keys(m.Scopes)) {
		switch sc := m.Scopes[tn]; {
		case !all && !seen[tn]:
			c.add("mcp.scopes."+tn, "tool %q is not in tools", tn)
		case !ValidToolName(tn):
			c.add("mcp.scopes."+tn, "invalid tool name %q", tn)
		case !contains(Scopes, sc):
			c.add("mcp.scopes."+tn, "unknown scope %q; allowed: %s", sc, strings.Join(Scopes, ", "))
		}
	}
	if c.set("mcp.timeout_seconds") && (m.TimeoutSecs < 1 || m.TimeoutSecs > MaxMCPTimeout) {
		c.add("mcp.timeout_seconds", "%d is out of range; allowed 1 to %d", m.TimeoutSecs, MaxMCPTimeout)
	}
}

// validateStdioMCPEnv checks [mcp] env: valid names the sandbox does not
// set, and values that are neither secrets nor NUL-carrying.
func validateStdioMCPEnv(c *collector, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		switch {
		case !envNamePattern.MatchString(k):
			c.add("mcp.env."+k, "invalid variable name %q", k)
		case contains(reservedMCPEnv, k) || strings.HasPrefix(k, "VESSEL_"):
			c.add("mcp.env."+k, "%s is set by the sandbox for every call", k)
		case strings.HasPrefix(v, "env:"):
			c.add("mcp.env."+k, "an agent package holds no secrets and reads no vessel environment; a server that needs credentials is granted by the deployment ([agents.mcp.<name>])")
		case strings.ContainsRune(v, 0) || strings.ContainsRune(k, 0):
			c.add("mcp.env."+k, "must not contain NUL")
		}
	}
}

// validateStdioMCPTools checks [mcp] tools and returns the names listed.
func validateStdioMCPTools(c *collector, server string, tools []string, all bool) map[string]bool {
	seen := map[string]bool{}
	if len(tools) == 0 {
		c.add("mcp.tools", `required: the names of the server's tools to offer, or ["*"] for every tool it lists`)
	}
	for i, tn := range tools {
		tf := fmt.Sprintf("mcp.tools[%d]", i)
		full := MCPToolName(server, tn)
		switch {
		case tn == AllMCPTools && !all:
			c.add(tf, `"*" (every tool) must be the only entry`)
		case tn == AllMCPTools:
		case !ValidToolName(full):
			c.add(tf, "invalid tool name %q; allowed: letters, digits, _ and -, and %q with the server's name at most 64 characters", tn, full)
		case seen[tn]:
			c.add(tf, "tool %q is listed twice", tn)
		}
		seen[tn] = true
	}
	return seen
}

func validateTool(c *collector, t *Tool) {
	if t.Name == "" {
		c.add("name", "required: the name the model calls the tool by")
	} else if !ValidToolName(t.Name) {
		c.add("name", "invalid tool name %q; allowed: 1 to 64 letters, digits, _ and -", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		c.add("description", "required: tells the model what the tool does")
	}
	hasCmd, hasSvc := c.set("command"), c.set("service")
	switch {
	case hasCmd && hasSvc:
		c.add("service", "a tool has either command (runs in the sandbox) or service (answered by the application), not both")
	case !hasCmd && !hasSvc:
		c.add("command", "required: set command (runs in the sandbox) or service + path (answered by the application)")
	case hasCmd:
		if len(t.Command) == 0 || strings.TrimSpace(t.Command[0]) == "" {
			c.add("command", `must name a program, e.g. ["python3", "{package}/tools/x.py"]`)
		}
		if c.set("path") {
			c.add("path", "only service tools have a path")
		}
	case hasSvc:
		if !issuers.ValidID(t.Service) {
			c.add("service", "invalid service name %q; allowed: lowercase letters, digits and -, starting with a letter or digit", t.Service)
		}
		if !strings.HasPrefix(t.Path, "/") {
			c.add("path", "required for a service tool: the endpoint path, starting with /")
		}
	}
	if t.Scope == "" {
		c.add("scope", "required: one of %s", strings.Join(Scopes, ", "))
	} else if !contains(Scopes, t.Scope) {
		c.add("scope", "unknown scope %q; allowed: %s", t.Scope, strings.Join(Scopes, ", "))
	}
	if !c.set("timeout_seconds") {
		t.TimeoutSeconds = DefaultToolTimeout
	} else if t.TimeoutSeconds < 1 || t.TimeoutSeconds > maxToolTimeout {
		c.add("timeout_seconds", "%d is out of range; allowed 1 to %d", t.TimeoutSeconds, maxToolTimeout)
	}
	if t.Parameters == nil {
		t.Parameters = map[string]any{"type": "object", "properties": map[string]any{}}
	} else if typ, _ := t.Parameters["type"].(string); typ != "object" {
		c.add("parameters.type", `the arguments' JSON Schema must have type = "object"`)
	} else if _, err := json.Marshal(t.Parameters); err != nil {
		// TOML can say nan, inf and dates, which JSON Schema cannot.
		c.add("parameters", "not expressible as JSON: %v", err)
	}
}

// packageRelative checks a path meant to stay inside the agent folder.
func packageRelative(p string) string {
	if p == "" {
		return "must not be empty"
	}
	if filepath.IsAbs(p) || !filepath.IsLocal(p) {
		return fmt.Sprintf("%q must be a relative path inside the agent folder", p)
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// PromptFiles are the files of an agent's briefing, relative to its
// package: prompt.md, then each prompt_append file. The vessel reads and
// joins them on every turn, so prompt edits need no redeploy.
func PromptFiles(m *Manifest) []string {
	if m == nil {
		return nil
	}
	return append([]string{promptFile}, m.PromptAppend...)
}
