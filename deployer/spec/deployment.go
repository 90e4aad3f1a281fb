package spec

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/astraldeep/astralvessel-go/runtime/issuers"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
)

// Deployment defaults.
const (
	DefaultProject      = "astralvessel"
	DefaultFrontSubnet  = "172.31.247.0/24"
	DefaultFrontAddress = "172.31.247.10"
	DefaultPort         = vesseldefaults.Port
	DefaultGRPCPort     = vesseldefaults.GRPCPort
	DefaultTaskTTLHours = 24
	DefaultProvider     = "searxng"
	DefaultScratch      = ByteSize(256 << 20)
	DefaultMemory       = ByteSize(512 << 20)
	DefaultPIDs         = 256
	maxDeploymentBytes  = 4 << 20
	maxJWKSBytes        = 1 << 20
	minScratch          = ByteSize(1 << 20)
	minMemory           = ByteSize(16 << 20)
	maxAgentID          = 63 - len("sandbox-")
)

// DefaultRequestBodyTimeout is [vessel] request_body_timeout_seconds's
// default.
const DefaultRequestBodyTimeout = vesseldefaults.RequestBodyTimeoutSecs

// Stopping the vessel: running turns get shutdown_grace_seconds (default
// DefaultShutdownGrace) to finish, then ShutdownMarginSecs at most to stop
// the rest and close connections. Compose's stop_grace_period is the sum.
const (
	DefaultShutdownGrace = 20
	ShutdownMarginSecs   = vesseldefaults.ShutdownMarginSecs
)

// StopGraceSecs is how long the vessel may take to stop after SIGTERM.
func (v Vessel) StopGraceSecs() int { return v.ShutdownGraceSecs + ShutdownMarginSecs }

// SearchProviders are the allowed [search] provider values.
var SearchProviders = []string{"searxng", "duckduckgo"}

// reservedTargets are sandbox paths a data mount may not cover.
var reservedTargets = []string{"/agent", "/scratch", "/tmp", "/proc", "/sys", "/dev", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/run", "/var"}

// LoadDeployment reads deployment.toml, resolves env:NAME references with
// env, applies defaults, validates everything (including every agent's
// package) and returns the result, or an Errors listing every problem.
func LoadDeployment(path string, env Env) (*Deployment, error) {
	data, err := readLimited(path, maxDeploymentBytes)
	if err != nil {
		return nil, Errors{{File: path, Msg: err.Error()}}
	}
	return loadDeploymentData(path, data, env)
}

func loadDeploymentData(file string, data []byte, env Env) (*Deployment, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("load deployment %s: %w", file, err)
	}
	var d Deployment
	decodeErrs, ok := decodeStrict(file, data, &d)
	if !ok {
		return nil, decodeErrs
	}
	d.Path = abs
	var errs Errors
	c := &collector{file: file, pos: buildPosMap(data), errs: &errs}
	d.file, d.pos = file, c.pos
	v := &validator{c: c, env: env, d: &d, dir: filepath.Dir(file), absDir: filepath.Dir(abs)}
	v.run()
	errs = append(decodeErrs, dropUnder(errs, decodeErrs)...)
	if len(errs) > 0 {
		sortErrors(errs)
		labelByID(errs, file, d.ids())
		return nil, errs
	}
	return &d, nil
}

type validator struct {
	c      *collector
	env    Env
	d      *Deployment
	dir    string // the deployment file's folder as named (for messages)
	absDir string
}

// resolve replaces an env:NAME value by the variable's value and records
// the reference, so deploy can hand the same variable to the vessel.
func (v *validator) resolve(field string, s *string) bool {
	name, ok := strings.CutPrefix(*s, "env:")
	if !ok {
		return true
	}
	if !envNamePattern.MatchString(name) {
		v.c.add(field, "invalid environment variable name %q; want env:NAME with NAME of letters, digits and _", name)
		return false
	}
	val, found := v.env(name)
	if !found {
		v.c.add(field, "%s (referenced as env:%s)", missing(v.env, name), name)
		return false
	}
	if v.d.EnvRefs == nil {
		v.d.EnvRefs = map[string]string{}
	}
	v.d.EnvRefs[field] = name
	*s = val
	return true
}

func (v *validator) run() {
	v.vessel()
	v.egress()
	v.limits()
	if v.d.Search.Provider == "" {
		v.d.Search.Provider = DefaultProvider
	} else if !contains(SearchProviders, v.d.Search.Provider) {
		v.c.add("search.provider", "unknown provider %q; allowed: searxng, duckduckgo", v.d.Search.Provider)
	}
	v.searchEngines()
	v.telemetry()
	agents := v.agents()
	v.routes()
	v.callUIDs()
	v.budgets(agents)
	v.apps(agents)
	v.issuers(agents)
}

func (v *validator) egress() {
	c, e := v.c, &v.d.Egress
	v.upstream()
	for i, s := range e.AllowCIDRs {
		if _, err := netip.ParsePrefix(s); err != nil {
			c.add(fmt.Sprintf("egress.allow_cidrs[%d]", i), "invalid CIDR %q; want e.g. 10.20.0.0/16", s)
		}
	}
	for i, h := range e.AllowHosts {
		if h == "" || strings.ContainsAny(h, "/: \t") {
			c.add(fmt.Sprintf("egress.allow_hosts[%d]", i), "invalid host name %q; want a bare name such as intranet.example.org", h)
		}
	}
	for i, p := range e.AllowPorts {
		if p < 1 || p > 65535 {
			c.add(fmt.Sprintf("egress.allow_ports[%d]", i), "invalid port %d; want 1 to 65535", p)
		}
	}
	if len(e.AllowPorts) > 0 && len(e.AllowCIDRs) == 0 && len(e.AllowHosts) == 0 {
		c.add("egress.allow_ports", "extra ports apply only to allow_cidrs and allow_hosts destinations; list at least one")
	}
}

func (v *validator) agents() map[string]bool {
	c := v.c
	ids := map[string]bool{}
	if len(v.d.Agents) == 0 {
		c.add("agents", "at least one [[agents]] entry is required")
	}
	for i := range v.d.Agents {
		a := &v.d.Agents[i]
		f := fmt.Sprintf("agents[%d]", i)
		switch {
		case a.ID == "":
			c.add(f+".id", "required: the agent's id, used in its URL /agents/<id>")
		case !issuers.ValidID(a.ID):
			c.add(f+".id", "invalid id %q; allowed: lowercase letters, digits and -, starting with a letter or digit, at most 63", a.ID)
		case len(a.ID) > maxAgentID:
			c.add(f+".id", "%q is %d characters; at most %d, so the sandbox's host name sandbox-<id> fits a DNS label", a.ID, len(a.ID), maxAgentID)
		case ids[a.ID]:
			c.add(f+".id", "duplicate agent id %q", a.ID)
		}
		ids[a.ID] = true
		v.sandbox(f+".sandbox", a)
		v.services(f+".services", a)
		v.mcp(f+".mcp", a)
		if a.Package == "" {
			c.add(f+".package", "required: the agent folder, relative to this file")
			continue
		}
		a.PackageDir = v.abs(a.Package)
		pkgDir := v.rel(a.Package)
		if st, err := os.Stat(a.PackageDir); err != nil || !st.IsDir() {
			c.add(f+".package", "agent folder %s not found", pkgDir)
			continue
		}
		lp := loadPackage(pkgDir, c.errs)
		if lp == nil {
			continue
		}
		a.Manifest = lp.manifest
		v.mcpNames(f+".mcp", a)
		v.approval(f+".approval", a)
		v.web(f+".web", a)
		for j, t := range lp.manifest.Declared {
			if t.Service == "" {
				continue
			}
			if _, ok := a.Services[t.Service]; !ok {
				lp.tools[j].add("service", "service %q is not granted to agent %q; add [agents.services.%s] with its url to %s", t.Service, a.ID, t.Service, v.c.file)
			}
		}
	}
	return ids
}

// approval checks [agents.approval] against the agent's loaded package:
// a listed tool must be one the agent has and a listed service one it is
// granted, since a misspelt name would silently leave a call unguarded.
func (v *validator) approval(f string, a *Agent) {
	ap := a.Approval
	if ap == nil {
		return
	}
	c := v.c
	known := append(AgentToolNames(a.Manifest), MCPToolNames(a)...)
	slices.Sort(known)
	for i, t := range ap.Tools {
		if !contains(known, t) && !MCPStarTool(a, t) {
			c.add(fmt.Sprintf("%s.tools[%d]", f, i), "agent %q has no tool %q; its tools: %s", a.ID, t, strings.Join(known, ", "))
		}
	}
	for i, s := range ap.Scopes {
		if !contains(Scopes, s) {
			c.add(fmt.Sprintf("%s.scopes[%d]", f, i), "unknown scope %q; allowed: %s", s, strings.Join(Scopes, ", "))
		}
	}
	for i, s := range ap.Services {
		_, svc := a.Services[s]
		_, srv := a.MCP[s]
		if !svc && !srv && a.Manifest.StdioMCP(s) == nil {
			c.add(fmt.Sprintf("%s.services[%d]", f, i), "service %q is not granted to agent %q ([agents.services.%s] or [agents.mcp.%s])", s, a.ID, s, s)
		}
	}
	if ap.TimeoutSecs != 0 && (ap.TimeoutSecs < 1 || ap.TimeoutSecs > MaxApprovalTimeout) {
		c.add(f+".timeout_seconds", "%d is out of range; allowed 1 to %d (a paused turn's workspace must outlive the wait)", ap.TimeoutSecs, MaxApprovalTimeout)
	}
	switch ap.OnTimeout {
	case "", OnTimeoutDeny, OnTimeoutFail:
	default:
		c.add(f+".on_timeout", "unknown value %q; allowed: %s (refuse the waiting calls and go on), %s (fail the turn)", ap.OnTimeout, OnTimeoutDeny, OnTimeoutFail)
	}
}

// AgentToolNames are the names of the tools a manifest gives its agent:
// the enabled built-ins and the declared tools, sorted.
func AgentToolNames(m *Manifest) []string {
	if m == nil {
		return nil
	}
	names := append([]string(nil), m.Tools.Enabled...)
	for _, t := range m.Declared {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// abs resolves a path written in the deployment file.
func (v *validator) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(v.absDir, p)
}

// rel names a path for messages the way the user named the deployment file.
func (v *validator) rel(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(v.dir, p)
}

func (v *validator) sandbox(f string, a *Agent) {
	c, s := v.c, &a.Sandbox
	switch s.Runtime {
	case "", RuntimeConfined, RuntimeGVisor:
	default:
		c.add(f+".runtime", "unknown value %q; allowed: %s (Landlock, seccomp and per-call uids on the host kernel), %s (the same inside gVisor, without Landlock; needs runsc on the engine)", s.Runtime, RuntimeConfined, RuntimeGVisor)
	}
	if !c.set(f + ".scratch") {
		s.Scratch = DefaultScratch
	} else if s.Scratch < minScratch {
		c.add(f+".scratch", "%d bytes is too small; at least 1MiB", s.Scratch)
	}
	// Two users at their limits must not fill the scratch (issue 31).
	if !c.set(f + ".turn_disk") {
		s.TurnDisk = s.Scratch / 8
	} else if s.TurnDisk <= 0 || s.TurnDisk > s.Scratch {
		c.add(f+".turn_disk", "must be more than 0 and at most scratch (%s)", s.Scratch)
	}
	if !c.set(f + ".user_disk") {
		s.UserDisk = s.Scratch / 4
	} else if s.UserDisk <= 0 || s.UserDisk > s.Scratch {
		c.add(f+".user_disk", "must be more than 0 and at most scratch (%s)", s.Scratch)
	}
	if !c.set(f + ".memory") {
		s.Memory = DefaultMemory
	} else if s.Memory < minMemory {
		c.add(f+".memory", "%d bytes is too small; at least 16MiB", s.Memory)
	}
	if !c.set(f + ".pids") {
		s.PIDs = DefaultPIDs
	} else if s.PIDs < 8 || s.PIDs > 1<<20 {
		c.add(f+".pids", "%d is out of range; allowed 8 to 1048576", s.PIDs)
	}
	if s.Dockerfile != "" {
		if st, err := os.Stat(v.abs(s.Dockerfile)); err != nil || !st.Mode().IsRegular() {
			c.add(f+".dockerfile", "Dockerfile %s not found", v.rel(s.Dockerfile))
		}
	}
	targets := map[string]bool{}
	for i, m := range s.Mounts {
		mf := fmt.Sprintf("%s.mounts[%d]", f, i)
		if m.Source == "" {
			c.add(mf+".source", "required: the host folder, relative to this file")
		}
		switch {
		case m.Target == "":
			c.add(mf+".target", "required: an absolute path inside the sandbox, e.g. /data/guide")
		case !path.IsAbs(m.Target) || path.Clean(m.Target) != m.Target:
			c.add(mf+".target", "%q must be a clean absolute path, e.g. /data/guide", m.Target)
		case m.Target == "/" || reserved(m.Target) != "":
			c.add(mf+".target", "%q is reserved in the sandbox (%s); use a path such as /data/<name>", m.Target, reserved(m.Target))
		default:
			for t := range targets {
				if within(m.Target, t) || within(t, m.Target) {
					c.add(mf+".target", "%q overlaps the mount at %q", m.Target, t)
				}
			}
			targets[m.Target] = true
		}
	}
}

func reserved(target string) string {
	for _, r := range reservedTargets {
		if within(target, r) {
			return r
		}
	}
	return ""
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func (v *validator) services(f string, a *Agent) {
	names := make([]string, 0, len(a.Services))
	for n := range a.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := a.Services[n]
		sf := f + "." + n
		if !issuers.ValidID(n) {
			v.c.add(sf, "invalid service name %q; allowed: lowercase letters, digits and -", n)
		}
		if s.URL == "" {
			v.c.add(sf+".url", "required: the application's base URL, e.g. http://app:8000")
		} else if v.resolve(sf+".url", &s.URL) {
			if msg := checkURL(s.URL, false); msg != "" {
				v.c.add(sf+".url", "%s", msg)
			}
			s.URL = strings.TrimRight(s.URL, "/")
		}
		s.Headers = v.headers(sf+".headers", s.Headers)
		a.Services[n] = s
	}
}

// headers checks a grant's headers and resolves their env: references.
func (v *validator) headers(f string, in map[string]string) map[string]string {
	headers := make(map[string]string, len(in))
	for _, h := range slices.Sorted(maps.Keys(in)) {
		val := in[h]
		hf := f + "." + h
		if !validHeaderName(h) {
			v.c.add(hf, "invalid header name %q", h)
		} else if strings.HasPrefix(http.CanonicalHeaderKey(h), "X-Vessel-") {
			v.c.add(hf, "headers starting X-Vessel- are set by the vessel itself")
		} else if reservedMCPHeader(h) {
			v.c.add(hf, "header %s is set by the vessel itself", http.CanonicalHeaderKey(h))
		}
		v.resolve(hf, &val)
		if strings.ContainsAny(val, "\r\n") {
			v.c.add(hf, "header values must not contain line breaks")
		}
		headers[h] = val
	}
	return headers
}

// reservedMCPHeader names the headers the vessel's HTTP and MCP clients
// set themselves (a configured one would confuse the protocol).
func reservedMCPHeader(h string) bool {
	switch http.CanonicalHeaderKey(h) {
	case "Content-Type", "Accept", "Content-Length", "Host", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id":
		return true
	}
	return false
}

// mcp checks the agent's [agents.mcp.<name>] grants: the endpoint, the
// headers, the tool allowlist and the scopes of its tools.
// mcpNames checks, once the package is loaded, that no MCP tool takes the
// name of one of the agent's own tools.
func (v *validator) mcpNames(f string, a *Agent) {
	own := AgentToolNames(a.Manifest)
	for _, t := range a.Manifest.MCP {
		if _, dup := a.MCP[t.Name]; dup {
			v.c.add(f+"."+t.Name, "%q is also an MCP server the package declares in %s; choose another name", t.Name, t.File)
		}
		if _, dup := a.Services[t.Name]; dup {
			v.c.add("agents."+a.ID+".services."+t.Name, "%q is also an MCP server the package declares in %s; an approval entry service:%s would name both", t.Name, t.File, t.Name)
		}
	}
	for n, m := range a.MCP {
		for i, t := range m.Tools {
			if full := MCPToolName(n, t); t != AllMCPTools && contains(own, full) {
				v.c.add(fmt.Sprintf("%s.%s.tools[%d]", f, n, i), "%q is also the name of one of the agent's own tools", full)
			}
		}
	}
}

// MaxMCPTimeout is the most [agents.mcp.<name>] timeout_seconds may be.
const MaxMCPTimeout = toolset.MaxMCPTimeout

// MCPToolNames are the names the model sees for the agent's MCP tools,
// sorted: the listed tools of the servers granted to it and of the ones its
// package declares (a server with tools = ["*"] adds none here, as its
// tools are known only once it is listed; see MCPStarServers).
func MCPToolNames(a *Agent) []string {
	var out []string
	if a.Manifest != nil {
		for _, t := range a.Manifest.MCP {
			if g := t.MCP.Grant(); !g.AllTools() {
				for _, tn := range g.Tools {
					out = append(out, MCPToolName(t.Name, tn))
				}
			}
		}
	}
	for n, m := range a.MCP {
		if m.AllTools() {
			continue
		}
		for _, t := range m.Tools {
			out = append(out, MCPToolName(n, t))
		}
	}
	slices.Sort(out)
	return out
}

// MCPStarServers are the agent's MCP servers, granted or declared, with
// tools = ["*"], sorted.
func MCPStarServers(a *Agent) []string {
	var out []string
	if a.Manifest != nil {
		for _, t := range a.Manifest.MCP {
			if t.MCP != nil && t.MCP.Grant().AllTools() {
				out = append(out, t.Name)
			}
		}
	}
	for n, m := range a.MCP {
		if m.AllTools() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// MCPStarTool reports whether name is <server>__<tool> for one of the
// agent's servers with tools = ["*"] and a valid tool name: a name such a
// server may offer once listed.
func MCPStarTool(a *Agent, name string) bool {
	for _, s := range MCPStarServers(a) {
		if t, ok := strings.CutPrefix(name, s+MCPToolSeparator); ok && t != "" && ValidToolName(name) {
			return true
		}
	}
	return false
}

// ValidToolName reports whether name may be the name of a tool the model
// sees: 1 to 64 letters, digits, _ and -.
func ValidToolName(name string) bool { return toolset.ValidToolName(name) }

func validHeaderName(h string) bool { return routes.ValidHeaderName(h) }

func (v *validator) checkAgents(f string, list []string, agents map[string]bool) {
	if len(list) == 0 {
		v.c.add(f, "required: the ids of the agents it may call")
	}
	for i, id := range list {
		if !agents[id] {
			v.c.add(fmt.Sprintf("%s[%d]", f, i), "no agent with id %q in this deployment", id)
		}
	}
}

func (v *validator) apps(agents map[string]bool) {
	ids := map[string]bool{}
	for i := range v.d.Apps {
		a := &v.d.Apps[i]
		f := fmt.Sprintf("apps[%d]", i)
		switch {
		case !issuers.ValidID(a.ID):
			v.c.add(f+".id", "invalid or missing id %q; allowed: lowercase letters, digits and -, starting with a letter or digit", a.ID)
		case ids[a.ID]:
			v.c.add(f+".id", "duplicate app id %q", a.ID)
		}
		ids[a.ID] = true
		if a.KeySHA256 == "" {
			v.c.add(f+".key_sha256", "required: the hex SHA-256 of the app's key (e.g. env:VESSEL_APP_KEY_SHA256)")
		} else if v.resolve(f+".key_sha256", &a.KeySHA256) {
			a.KeySHA256 = strings.ToLower(strings.TrimSpace(a.KeySHA256))
			if b, err := hex.DecodeString(a.KeySHA256); err != nil || len(b) != 32 {
				v.c.add(f+".key_sha256", "want 64 hex characters (sha256sum of the key), got %d characters", len(a.KeySHA256))
			}
		}
		v.checkAgents(f+".agents", a.Agents, agents)
		v.checkPushURLs(f+".push_urls", a.PushURLs)
	}
}

// checkPushURLs checks webhook grants (ParsePushGrant).
func (v *validator) checkPushURLs(f string, list []string) {
	for i, s := range list {
		if _, err := ParsePushGrant(s); err != nil {
			v.c.add(fmt.Sprintf("%s[%d]", f, i), "%s", err.Error())
		}
	}
}

func (v *validator) issuers(agents map[string]bool) {
	for _, p := range issuers.Problems(issuerEntries(v.d.Issuers)) {
		v.c.add(p.Field, "%s", p.Msg)
	}
	for i := range v.d.Issuers {
		is := &v.d.Issuers[i]
		f := fmt.Sprintf("issuers[%d]", i)
		switch {
		case is.JWKSURL != "" && is.JWKSFile != "", is.JWKSURL == "" && is.JWKSFile == "":
			// issuers.Problems said so
		case is.JWKSURL != "":
			if msg := checkURL(is.JWKSURL, true); msg != "" {
				v.c.add(f+".jwks_url", "%s", msg)
			}
		default:
			v.checkJWKS(f+".jwks_file", is.JWKSFile)
		}
		v.checkAgents(f+".agents", is.Agents, agents)
		v.checkPushURLs(f+".push_urls", is.PushURLs)
	}
}

// ValidateIssuers checks a list of [[issuers]] the way the deployment
// loader does, as far as the entries themselves go (ids, issuer URL,
// audience, one key source, authorized parties): runtime/issuers, which the
// JWT verifier runs too. The loader checks besides that jwks_url uses https,
// that jwks_file holds a JWK set and that the agents named exist.
func ValidateIssuers(list []Issuer) error { return issuers.Validate(issuerEntries(list)) }

func issuerEntries(list []Issuer) []issuers.Entry {
	out := make([]issuers.Entry, len(list))
	for i, is := range list {
		out[i] = issuers.Entry{ID: is.ID, Issuer: is.Issuer, Audience: is.Audience,
			JWKSURL: is.JWKSURL, JWKSFile: is.JWKSFile, AuthorizedParties: is.AuthorizedParties}
	}
	return out
}

func (v *validator) checkJWKS(f, p string) {
	data, err := readLimited(v.abs(p), maxJWKSBytes)
	if err != nil {
		v.c.add(f, "JWK set %s: %v", v.rel(p), err)
		return
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil || len(set.Keys) == 0 {
		v.c.add(f, `%s is not a JWK set: want JSON {"keys": [...]} with at least one key`, v.rel(p))
	}
}

// checkURL returns "" for an acceptable absolute http(s) URL, else why
// not (issuers.CheckURL).
func checkURL(s string, httpsOnly bool) string { return issuers.CheckURL(s, httpsOnly) }

// ids are the ids of the arrays of tables, for labelByID.
func (d *Deployment) ids() map[string][]string {
	m := map[string][]string{}
	for _, a := range d.Agents {
		m["agents"] = append(m["agents"], a.ID)
	}
	for _, a := range d.Apps {
		m["apps"] = append(m["apps"], a.ID)
	}
	for _, is := range d.Issuers {
		m["issuers"] = append(m["issuers"], is.ID)
	}
	return m
}

// CheckHostPaths checks what only the deploying machine has: every data
// mount's source folder. LoadDeployment leaves this out because the vessel,
// which loads the same file, never sees those folders; validate and deploy
// call it.
func CheckHostPaths(d *Deployment) error {
	var errs Errors
	c := &collector{file: d.file, pos: d.pos, errs: &errs}
	if c.file == "" {
		c.file = d.Path
	}
	for i, a := range d.Agents {
		for j, m := range a.Sandbox.Mounts {
			src := m.Source
			if !filepath.IsAbs(src) {
				src = filepath.Join(filepath.Dir(d.Path), src)
			}
			if st, err := os.Stat(src); err != nil || !st.IsDir() {
				c.add(fmt.Sprintf("agents[%d].sandbox.mounts[%d].source", i, j), "folder %s not found", src)
			}
		}
	}
	if len(errs) > 0 {
		labelByID(errs, c.file, d.ids())
		return errs
	}
	return nil
}

// ResolvePath resolves a path written in deployment.toml (a mount source,
// a Dockerfile, a jwks_file) against the deployment file's folder.
func (d *Deployment) ResolvePath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(d.Path), p)
}

// validPort reports whether p is a decimal port number 1 to 65535.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == p
}
