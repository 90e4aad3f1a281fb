// Package settings are what the vessel is configured with: its listener,
// limits, callers and agents, as plain values. The vessel's packages take
// these types and nothing else; only vessel/internal/fromspec reads the
// deployment files (through deployer/spec) and turns them into settings,
// at start and on every reload, so a change to the file format stops there.
// Tests build settings directly.
package settings

import (
	"github.com/astraldeep/astralvessel-go/runtime/bytesize"
	"github.com/astraldeep/astralvessel-go/runtime/limits"
	"github.com/astraldeep/astralvessel-go/runtime/routes"
	"github.com/astraldeep/astralvessel-go/runtime/toolset"
	"github.com/astraldeep/astralvessel-go/runtime/vesseldefaults"
)

// Deployment is everything one vessel serves.
type Deployment struct {
	// Path is the deployment file's absolute path; relative paths the
	// vessel reads (issuers' JWK set files) are resolved against its
	// directory. Empty for settings built in code.
	Path    string
	Vessel  Vessel
	Search  Search
	Limits  Limits
	Apps    []App
	Issuers []Issuer
	Agents  []Agent
}

// Vessel is where the vessel listens and keeps its tasks.
type Vessel struct {
	FrontAddress string // the vessel's own address, the host of its default listener
	PublicURL    string // base of card interface URLs
	Port         int    // HTTP listen port (vesseldefaults.Port when 0)
	GRPCPort     int    // gRPC listen port (vesseldefaults.GRPCPort when 0)
	// GRPCPublicAddress is the host:port the cards' GRPC interface gives.
	GRPCPublicAddress string
	TaskTTLHours      int
	// TaskStore is a sqlite:// or postgres:// URL; empty is SQLite in the
	// vessel's data folder.
	TaskStore string
	// RequestBodyTimeoutSecs bounds how long an authenticated caller may
	// take to send a request body.
	RequestBodyTimeoutSecs int
	// ShutdownGraceSecs is how long running turns may go on after SIGTERM.
	ShutdownGraceSecs int
}

// Search is the search service the web tools use.
type Search struct {
	Provider string // searxng or duckduckgo
}

// Limits are the admission limits of one replica.
type Limits = limits.Limits

// App is an application: its key's digest and what it may call.
type App struct {
	ID        string
	KeySHA256 string // hex SHA-256 of the app's key
	Agents    []string
	// PushURLs are where its webhooks may point (runtime/pushgrant);
	// PushPublic lets them point at public addresses too.
	PushURLs   []string
	PushPublic bool
}

// Issuer is a trusted token issuer and what its callers may call.
type Issuer struct {
	ID                string
	Issuer            string
	Audience          string
	JWKSURL           string
	JWKSFile          string
	AuthorizedParties []string
	Agents            []string
	PushURLs          []string
	PushPublic        bool
}

// Agent is one agent with its package.
type Agent struct {
	ID       string
	Sandbox  Sandbox
	Services map[string]Service
	// MCP are the remote MCP servers granted to the agent, by name.
	MCP map[string]MCPServer
	// Approval says which calls wait for a decision; nil: none do.
	Approval *Approval
	// ModelRoute names the egress's model route; empty is the default.
	ModelRoute string
	// Provider is the route's provider profile (send_back applied);
	// TokenParam the name its token limit is sent under. nil and "" are
	// the auto profile and max_tokens.
	Provider   *routes.Provider
	TokenParam string
	// PackageDir is the agent's package folder; PromptFiles the files of
	// its briefing, relative to it, read and joined every turn.
	PackageDir  string
	PromptFiles []string
	// Fingerprint is the agent's profile fingerprint, or FingerprintErr
	// why it has none.
	Fingerprint    string
	FingerprintErr error
	Manifest       *Manifest
}

// Route is the model route the agent's requests carry (routes.Name).
func (a *Agent) Route() string { return routes.Name(a.ModelRoute) }

// Sandbox is what the agent's sandbox is granted, as the vessel sees it.
type Sandbox struct {
	Mounts []Mount
	// Runtime is the isolation tier; empty is vesseldefaults.RuntimeConfined.
	Runtime string
}

// Tier is the sandbox's isolation tier, the default when unset.
func (s Sandbox) Tier() string { return vesseldefaults.Tier(s.Runtime) }

// Mount is a read-only data mount into the sandbox.
type Mount struct {
	Source string
	Target string // absolute path inside the sandbox
}

// Service is a granted service for service tools.
type Service struct {
	URL     string
	Headers map[string]string
}

// MCPServer is a remote MCP server granted to an agent: its tools reach
// the model as <name>__<tool>.
type MCPServer struct {
	URL     string
	Headers map[string]string
	// Tools are the server's tool names the agent may use, or ["*"].
	Tools  []string
	Scope  string
	Scopes map[string]string
	// TimeoutSecs bounds one call (0: the default).
	TimeoutSecs int
}

// AllTools reports whether the server offers every tool it lists.
func (m MCPServer) AllTools() bool { return toolset.MCPAllTools(m.Tools) }

// Allows reports whether the grant offers the server's tool.
func (m MCPServer) Allows(tool string) bool { return toolset.MCPAllows(m.Tools, tool) }

// ToolScope is the scope of one of the server's tools.
func (m MCPServer) ToolScope(tool string) string {
	return toolset.MCPToolScope(m.Scope, m.Scopes, tool)
}

// StdioMCP is an MCP server the package brings, run over stdio in the
// sandbox.
type StdioMCP struct {
	Command     []string
	Env         map[string]string
	Tools       []string
	Scope       string
	Scopes      map[string]string
	TimeoutSecs int
}

// Grant is the server as the MCP client reads a remote grant: its
// allowlist, scopes and timeout.
func (m StdioMCP) Grant() MCPServer {
	return MCPServer{Tools: m.Tools, Scope: m.Scope, Scopes: m.Scopes, TimeoutSecs: m.TimeoutSecs}
}

// Approval is which of the agent's calls wait for a decision: a call whose
// tool, scope or service is listed.
type Approval struct {
	Tools    []string
	Scopes   []string
	Services []string
	// TimeoutSecs bounds the wait (0: the default); OnTimeout is
	// vesseldefaults.OnTimeoutDeny (the default) or OnTimeoutFail.
	TimeoutSecs int
	OnTimeout   string
	AllowEdit   bool
}

// Timeout is the approval timeout in seconds, the default when unset.
func (a *Approval) Timeout() int {
	if a == nil {
		return vesseldefaults.DefaultApprovalTimeout
	}
	return vesseldefaults.ApprovalTimeout(a.TimeoutSecs)
}

// TimeoutAction is vesseldefaults.OnTimeoutDeny or OnTimeoutFail.
func (a *Approval) TimeoutAction() string {
	if a == nil {
		return vesseldefaults.OnTimeoutDeny
	}
	return vesseldefaults.ApprovalAction(a.OnTimeout)
}

// Manifest is the agent's package: its card, model and tools.
type Manifest struct {
	Name         string
	Description  string
	Version      string
	Examples     []string
	DeadlineSecs int
	Model        Model
	Tools        Builtins
	Output       Output
	// Declared are the package's own tools, sorted by name; MCP its stdio
	// MCP servers.
	Declared []Tool
	MCP      []Tool
}

// Model is the agent's model and how its requests are made.
type Model struct {
	Name          string
	BaseURL       string
	APIKey        string // a key, or env:NAME
	AcceptsImages bool
	MaxSteps      int
	// MaxAnswerBytes bounds a turn's text (and, apart, its reasoning);
	// MaxToolArgumentsBytes one call's arguments.
	MaxAnswerBytes        bytesize.Size
	MaxToolArgumentsBytes bytesize.Size
	FirstByteTimeoutSecs  int
	IdleTimeoutSecs       int
	RequestSettings
}

// RequestSettings are the fields written into every model request of the
// agent.
type RequestSettings struct {
	MaxOutputTokens int
	Temperature     *float64
	TopP            *float64
	Stop            []string
	Seed            *int64
	ReasoningEffort string
	ResponseFormat  *ResponseFormat
	ExtraBody       map[string]any
}

// ResponseFormat is the answer format asked of the model; a json_schema
// answer is checked against Schema.
type ResponseFormat struct {
	Type   string
	Name   string
	Strict bool
	Schema map[string]any
}

// Builtins are the built-in tools that are on.
type Builtins struct {
	Enabled []string
}

// Output is what a turn may hand back besides text.
type Output struct {
	Files      []string // png, svg, csv, pdf
	Primitives bool
}

// Tool is one of the package's tools: a command run in the sandbox, a
// service tool, or (MCP set) a stdio MCP server.
type Tool struct {
	Name           string
	Description    string
	Command        []string
	Service        string
	Path           string
	Scope          string
	TimeoutSeconds int
	Parameters     map[string]any // JSON Schema of the arguments
	MCP            *StdioMCP
	File           string // the declaring file, for messages
}
