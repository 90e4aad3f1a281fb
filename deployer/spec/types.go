// Package spec is the one reader of AstralVessel's configuration files:
// deployment.toml, an agent's vessel.toml and its tools/*.toml. The deployer
// loads configuration through it, and so does the vessel, in one place
// (vessel/internal/fromspec, which turns it into the vessel's own settings);
// sandboxd and the egress get their settings from the deployer, so the
// files mean the same thing everywhere.
package spec

import (
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
)

// Deployment is a loaded and validated deployment.toml.
type Deployment struct {
	// Path is the absolute path of the file it was loaded from; relative
	// paths inside it (agent packages, mounts, key files) are resolved
	// against its directory.
	Path string `toml:"-"`

	Vessel Vessel `toml:"vessel"`
	Egress Egress `toml:"egress"`
	Search Search `toml:"search"`
	Limits Limits `toml:"limits"`
	// Budgets is the [budgets] table: token ceilings the egress enforces
	// (budgets.go).
	Budgets Budgets `toml:"budgets"`
	// Telemetry is the [telemetry] table (traces); see telemetry.go.
	Telemetry Telemetry `toml:"telemetry"`
	// CallUIDs is the [call_uids] table: the uids the sandboxes' calls run
	// as (uids.go).
	CallUIDs CallUIDs `toml:"call_uids"`
	Apps     []App    `toml:"apps"`
	Issuers  []Issuer `toml:"issuers"`
	Agents   []Agent  `toml:"agents"`

	// Models are the named model routes ([models.<name>], routes.go);
	// [egress] upstream_url is the route "default".
	Models map[string]ModelRoute `toml:"models"`

	// EnvRefs maps each field written as env:NAME (e.g. "apps[0].key_sha256")
	// to NAME, so deploy can pass the same variables to the vessel.
	EnvRefs map[string]string `toml:"-"`

	file string  // the path as named to LoadDeployment, for messages
	pos  *posMap // key positions, for CheckHostPaths
}

// Vessel is the [vessel] table.
type Vessel struct {
	Project      string `toml:"project"`       // prefixes Compose containers, networks, volumes, images
	FrontSubnet  string `toml:"front_subnet"`  // CIDR of the front network
	FrontAddress string `toml:"front_address"` // the vessel's fixed address on front
	PublicURL    string `toml:"public_url"`    // base of card interface URLs
	Port         int    `toml:"port"`          // listen port, default 8700
	// GRPCPort is the gRPC binding's listen port (default 8701), beside
	// port on the same address.
	GRPCPort int `toml:"grpc_port"`
	// GRPCPublicAddress is the host:port the cards' GRPC interface gives;
	// default the host of public_url with grpc_port.
	GRPCPublicAddress string `toml:"grpc_public_address"`
	TaskTTLHours      int    `toml:"task_ttl_hours"`
	// TaskStore is "sqlite:///path/tasks.sqlite" (default /data/tasks.sqlite) or "postgres://...".
	TaskStore string `toml:"task_store"`
	// RequestBodyTimeoutSecs bounds how long an authenticated caller may
	// take to send a request body.
	RequestBodyTimeoutSecs int `toml:"request_body_timeout_seconds"`
	// ShutdownGraceSecs is how long running turns may go on after SIGTERM
	// before the vessel stops them (status shutdown).
	ShutdownGraceSecs int `toml:"shutdown_grace_seconds"`
}

// Egress is the [egress] table.
type Egress struct {
	UpstreamURL string `toml:"upstream_url"` // required; env: reference allowed
	// AllowHTTPUpstream permits a plain-HTTP upstream (otherwise HTTPS only).
	AllowHTTPUpstream bool `toml:"allow_http_upstream"`
	// UpstreamAuth is how the egress sends VESSEL_MODEL_KEY upstream:
	// bearer (default with a key), api-key or none, as a route's auth.
	UpstreamAuth string `toml:"upstream_auth"`
	// UpstreamTokenParam is the default route's token parameter name, as
	// a route's token_param.
	UpstreamTokenParam string `toml:"upstream_token_param"`
	// UpstreamProvider is the default route's provider profile, as a
	// route's provider.
	UpstreamProvider string `toml:"upstream_provider"`
	// UpstreamSendBack is the default route's send_back override.
	UpstreamSendBack *[]string `toml:"upstream_send_back"`
	// AllowCIDRs and AllowHosts open the web proxy to extra destinations
	// (an intranet site); they are logged at start.
	AllowCIDRs []string `toml:"allow_cidrs"`
	AllowHosts []string `toml:"allow_hosts"`
	// AllowPorts are ports beyond 80 and 443, reachable only on the
	// allow-listed destinations above (an intranet site on 8443).
	AllowPorts []int `toml:"allow_ports"`
}

// Search is the [search] table.
type Search struct {
	Provider string `toml:"provider"` // "searxng" (default) or "duckduckgo"
	// Engines are the host names the search container's engines reach
	// (exact names or "*." wildcards, as in [agents.web] allow): the
	// egress refuses it every other name. Default DefaultSearchEngines.
	Engines []string `toml:"engines"`
}

// App is one [[apps]] entry: an application and the agents it may call.
type App struct {
	ID string `toml:"id"`
	// KeySHA256 is the hex SHA-256 digest of the app's key (env: allowed).
	KeySHA256 string   `toml:"key_sha256"`
	Agents    []string `toml:"agents"`
	// PushURLs are where the app's webhooks may point (docs/jobs.md):
	// scheme, host, port and path prefix, such as
	// "https://app.internal:8443/hooks/".
	PushURLs []string `toml:"push_urls"`
	// PushPublic lets its webhooks point at public addresses, reached
	// through the egress proxy and its guard.
	PushPublic bool `toml:"push_public"`
}

// Issuer is one [[issuers]] entry: a token issuer trusted for some agents.
type Issuer struct {
	ID                string   `toml:"id"`
	Issuer            string   `toml:"issuer"`
	Audience          string   `toml:"audience"`
	JWKSURL           string   `toml:"jwks_url"`
	JWKSFile          string   `toml:"jwks_file"`
	AuthorizedParties []string `toml:"authorized_parties"`
	Agents            []string `toml:"agents"`
	// PushURLs and PushPublic grant webhook destinations to the issuer's
	// callers, as on [[apps]].
	PushURLs   []string `toml:"push_urls"`
	PushPublic bool     `toml:"push_public"`
}

// Agent is one [[agents]] entry together with its loaded package.
type Agent struct {
	ID       string             `toml:"id"`
	Package  string             `toml:"package"` // the agent folder, relative to the deployment file
	Sandbox  Sandbox            `toml:"sandbox"`
	Services map[string]Service `toml:"services"`
	// MCP are the remote MCP servers granted to the agent, by name
	// ([agents.mcp.<name>]); the vessel reaches them, never the sandbox.
	MCP map[string]MCPServer `toml:"mcp"`
	// Approval says which of the agent's tool calls wait for a decision
	// before they run (docs/approvals.md); nil means none do.
	Approval *Approval `toml:"approval"`
	// Web is the agent's domain policy at the egress ([agents.web]); nil
	// means no names policy (the egress's address checks still apply).
	Web *Web `toml:"web"`
	// ModelRoute names the [models] route of the agent's model requests;
	// empty is [egress] upstream_url (the route "default").
	ModelRoute string `toml:"model_route"`

	// PackageDir is Package resolved to an absolute path.
	PackageDir string `toml:"-"`
	// Manifest is the agent's vessel.toml and tools as loaded.
	Manifest *Manifest `toml:"-"`
}

// Sandbox is an agent's [agents.sandbox] table: what its sandbox is granted.
type Sandbox struct {
	Scratch    ByteSize `toml:"scratch"`   // hard ceiling of the scratch tmpfs
	TurnDisk   ByteSize `toml:"turn_disk"` // default scratch/8
	UserDisk   ByteSize `toml:"user_disk"` // default scratch/4
	Memory     ByteSize `toml:"memory"`
	PIDs       int      `toml:"pids"`
	Dockerfile string   `toml:"dockerfile"` // optional per-agent sandbox image
	Mounts     []Mount  `toml:"mounts"`
	// Runtime is the sandbox's isolation tier: RuntimeConfined (the
	// default: Landlock, seccomp and per-call uids on the host kernel) or
	// RuntimeGVisor (the same inside gVisor's user-space kernel, without
	// Landlock, which gVisor does not implement).
	Runtime string `toml:"runtime"`
	// CallUIDs, FIRST:COUNT, overrides the range [call_uids] gives this
	// agent's calls.
	CallUIDs string `toml:"call_uids"`
	// UIDs is the resolved range of this agent's calls (from CallUIDs or
	// [call_uids]), set by LoadDeployment.
	UIDs UIDRange `toml:"-"`
}

// Sandbox isolation tiers ([agents.sandbox] runtime).
const (
	RuntimeConfined = vesseldefaults.RuntimeConfined
	RuntimeGVisor   = vesseldefaults.RuntimeGVisor
)

// Tier is the sandbox's isolation tier, the default when unset.
func (s Sandbox) Tier() string { return vesseldefaults.Tier(s.Runtime) }

// Approval is an agent's [agents.approval] table. A call needs approval
// when its tool is listed in Tools, its scope in Scopes, or its service in
// Services; a caller can add to these for one call, never remove.
type Approval struct {
	Tools    []string `toml:"tools"`
	Scopes   []string `toml:"scopes"`
	Services []string `toml:"services"`
	// TimeoutSecs bounds the wait for a decision (default
	// DefaultApprovalTimeout); OnTimeout is "deny" (the default: the waiting
	// calls are refused and the turn goes on) or "fail" (the turn fails).
	TimeoutSecs int    `toml:"timeout_seconds"`
	OnTimeout   string `toml:"on_timeout"`
	// AllowEdit lets the decider change a waiting call's arguments.
	AllowEdit bool `toml:"allow_edit"`
}

// Approval timeouts, in seconds. The most is kept well under sandboxd's
// default --turn-ttl (30 minutes), which deletes a turn's workspace once
// it has been idle that long: a paused turn's workspace must outlive its
// pause.
const (
	DefaultApprovalTimeout = vesseldefaults.DefaultApprovalTimeout
	MaxApprovalTimeout     = vesseldefaults.MaxApprovalTimeout
)

// What a timed-out approval means.
const (
	OnTimeoutDeny = vesseldefaults.OnTimeoutDeny
	OnTimeoutFail = vesseldefaults.OnTimeoutFail
)

// Timeout is the approval timeout in seconds, the default when unset.
func (a *Approval) Timeout() int {
	if a == nil {
		return DefaultApprovalTimeout
	}
	return vesseldefaults.ApprovalTimeout(a.TimeoutSecs)
}

// TimeoutAction is OnTimeoutDeny or OnTimeoutFail.
func (a *Approval) TimeoutAction() string {
	if a == nil {
		return OnTimeoutDeny
	}
	return vesseldefaults.ApprovalAction(a.OnTimeout)
}

// Mount is a read-only data mount into an agent's sandbox.
type Mount struct {
	Source string `toml:"source"` // host path, relative to the deployment file
	Target string `toml:"target"` // absolute path inside the sandbox
}

// Service is a granted service for service tools.
type Service struct {
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"` // values may be env: references
}

// MCPServer is a remote MCP server granted to an agent ([agents.mcp.<name>]).
// Its tools reach the model as <name>__<tool>; only the tools listed (or,
// with tools = ["*"], every valid one the server lists) are offered, and
// each call names one of them.
type MCPServer struct {
	URL     string            `toml:"url"`     // streamable HTTP endpoint
	Headers map[string]string `toml:"headers"` // values may be env: references
	// Tools are the server's tool names the agent may use (the allowlist),
	// or ["*"] for every tool it lists.
	Tools []string `toml:"tools"`
	// Scope is the default scope of its tools; Scopes sets it per tool.
	Scope  string            `toml:"scope"`
	Scopes map[string]string `toml:"scopes"`
	// TimeoutSecs bounds one call (default 30, at most 600).
	TimeoutSecs int `toml:"timeout_seconds"`
}

// StdioMCP is the [mcp] table of a tools/<name>.toml: an MCP server the
// package brings, run over stdio as a confined process of the turn.
type StdioMCP struct {
	// Command runs the server; it may contain {package}.
	Command []string `toml:"command"`
	// Env is added to the call environment; literal values only.
	Env map[string]string `toml:"env"`
	// Tools are the server's tools offered to the model, or ["*"] for
	// every tool it lists.
	Tools []string `toml:"tools"`
	// Scope is the default scope of its tools; Scopes sets it per tool.
	Scope  string            `toml:"scope"`
	Scopes map[string]string `toml:"scopes"`
	// TimeoutSecs bounds one call (default 30, at most MaxMCPTimeout).
	TimeoutSecs int `toml:"timeout_seconds"`
}

// StdioMCP is the package's MCP server called name, or nil.
func (m *Manifest) StdioMCP(name string) *Tool {
	if m == nil {
		return nil
	}
	for i := range m.MCP {
		if m.MCP[i].Name == name {
			return &m.MCP[i]
		}
	}
	return nil
}

// AllMCPTools in an [mcp] tools list offers every tool the server lists.
const AllMCPTools = toolset.AllMCPTools

// Grant is the server as the vessel's MCP client reads a remote grant:
// its allowlist, scopes and timeout (no URL, no headers).
func (m StdioMCP) Grant() MCPServer {
	return MCPServer{Tools: m.Tools, Scope: m.Scope, Scopes: m.Scopes, TimeoutSecs: m.TimeoutSecs}
}

// AllTools reports whether the server offers every tool it lists.
func (m MCPServer) AllTools() bool { return toolset.MCPAllTools(m.Tools) }

// Allows reports whether the grant offers the server's tool.
func (m MCPServer) Allows(tool string) bool { return toolset.MCPAllows(m.Tools, tool) }

// MCPToolSeparator joins a server's name and its tool's name in the name
// the model sees: "github__search_issues".
const MCPToolSeparator = toolset.MCPToolSeparator

// MCPToolName is the name the model sees for tool of server.
func MCPToolName(server, tool string) string { return toolset.MCPToolName(server, tool) }

// ToolScope is the scope of one of the server's tools.
func (m MCPServer) ToolScope(tool string) string {
	return toolset.MCPToolScope(m.Scope, m.Scopes, tool)
}

// Manifest is an agent's vessel.toml plus its declared tools.
type Manifest struct {
	Name         string   `toml:"name"`
	Description  string   `toml:"description"`
	Version      string   `toml:"version"`
	Examples     []string `toml:"examples"`
	DeadlineSecs int      `toml:"deadline_seconds"`
	// PromptAppend names extra files appended to prompt.md, relative to the package.
	PromptAppend []string `toml:"prompt_append"`
	Model        Model    `toml:"model"`
	Tools        Builtins `toml:"tools"`
	Output       Output   `toml:"output"`

	// Declared are the tools from tools/*.toml, sorted by name.
	Declared []Tool `toml:"-"`
	// MCP are the stdio MCP servers from tools/*.toml with an [mcp]
	// table, sorted by name.
	MCP []Tool `toml:"-" json:"MCP,omitempty"`
}

// Model is the [model] table of vessel.toml.
type Model struct {
	Name          string `toml:"name"`
	BaseURL       string `toml:"base_url"`
	APIKey        string `toml:"api_key"` // default "env:VESSEL_MODEL_KEY"
	AcceptsImages bool   `toml:"accepts_images"`
	MaxSteps      int    `toml:"max_steps"`
	// MaxAnswerBytes bounds the text of one turn's model calls together
	// (and, separately, their reasoning); MaxToolArgumentsBytes one tool
	// call's arguments. Over either, the turn ends with status output_limit.
	MaxAnswerBytes        ByteSize `toml:"max_answer_bytes"`
	MaxToolArgumentsBytes ByteSize `toml:"max_tool_arguments_bytes"`
	// FirstByteTimeoutSecs bounds the wait for the first data line of a
	// model answer, IdleTimeoutSecs the silence between two; SSE comments
	// are not data.
	FirstByteTimeoutSecs int `toml:"first_byte_timeout_seconds"`
	IdleTimeoutSecs      int `toml:"idle_timeout_seconds"`
	// RequestSettings are the request fields (settings.go).
	RequestSettings
}

// Builtins is the [tools] table of vessel.toml: which built-in tools are on.
type Builtins struct {
	Enabled []string `toml:"enabled"` // read, glob, list, grep, bash, webfetch, websearch, present
}

// Output is the [output] table of vessel.toml.
type Output struct {
	Files      []string `toml:"files"` // png, svg, csv, pdf
	Primitives bool     `toml:"primitives"`
}

// Tool is one tools/*.toml: a command run in the sandbox, or a service tool.
type Tool struct {
	Name           string         `toml:"name"`
	Description    string         `toml:"description"`
	Command        []string       `toml:"command"` // may contain {package}
	Service        string         `toml:"service"`
	Path           string         `toml:"path"`
	Scope          string         `toml:"scope"`
	TimeoutSeconds int            `toml:"timeout_seconds"`
	Parameters     map[string]any `toml:"parameters"` // JSON Schema of the arguments
	// MCP makes the file declare a stdio MCP server run in the sandbox
	// instead of one tool; Name is then the server's name. Such files are
	// in Manifest.MCP, not Declared.
	MCP *StdioMCP `toml:"mcp" json:"MCP,omitempty"`

	// File is the tool file's path, for error messages.
	File string `toml:"-"`
}

// Scopes are the six Astral permission scopes, weakest first
// (runtime/toolset, which the vessel shares).
var Scopes = toolset.Scopes

// BuiltinTools lists the built-in tools a manifest may enable and their
// scopes (runtime/toolset).
var BuiltinTools = toolset.BuiltinTools
